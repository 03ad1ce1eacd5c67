#!/usr/bin/env python3
# Prints the expected grids for imagetok's TestSmartResizeReference.
#
# smart_resize below is copied verbatim (docstring dropped) from Hugging Face
# transformers, src/transformers/models/qwen2_vl/image_processing_qwen2_vl.py
# at commit 9feaf6f1d95e9976003f0a7f049e44f92b781c51 (Apache License 2.0,
# Copyright 2024 The Qwen team, Alibaba Group and the HuggingFace Inc. team).
# It is the function Qwen2VLImageProcessor (used by Qwen2-VL, Qwen2.5-VL and
# Qwen3-VL) calls with factor = patch_size * merge_size; the processor then
# has grid_h = h // patch_size, grid_w = w // patch_size and the processor
# expands each <|image_pad|> to grid_t*grid_h*grid_w // merge_size**2 tokens
# (grid_t = 1 for one image).
#
# Run: python3 imagetok/testdata/gen_smart_resize.py > imagetok/testdata/smart_resize.tsv
import math


def smart_resize(
    height: int, width: int, factor: int = 28, min_pixels: int = 56 * 56, max_pixels: int = 14 * 14 * 4 * 1280
):
    if max(height, width) / min(height, width) > 200:
        raise ValueError(
            f"absolute aspect ratio must be smaller than 200, got {max(height, width) / min(height, width)}"
        )
    h_bar = round(height / factor) * factor
    w_bar = round(width / factor) * factor
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


# (name, patch_size, merge_size, min_pixels, max_pixels): the published
# preprocessor_config.json values of each model family, and the
# Qwen2VLImageProcessor class defaults.
CONFIGS = [
    ("qwen2.5-vl", 14, 2, 3136, 12845056),   # Qwen2-VL-*-Instruct, Qwen2.5-VL-*-Instruct
    ("qwen2-vl-default", 14, 2, 56 * 56, 28 * 28 * 1280),  # class defaults when the config names none
    ("qwen3-vl", 16, 2, 65536, 16777216),    # Qwen3-VL-*: size {shortest_edge, longest_edge}
    ("qwen2.5-vl-max128", 14, 2, 3136, 128 * 28 * 28),  # a small max_pixels: the floor branch's max(factor, …)
]

# (width, height)
SIZES = [
    (1920, 1080), (1280, 720), (3840, 2160), (100, 100), (28, 5000), (5000, 28),
    (1, 1), (1000, 70), (70, 1000), (1024, 768), (2560, 1440), (1366, 768),
    (1288, 1288), (14, 2000), (800, 4),
]

print("config\twidth\theight\tresized_h\tresized_w\tgrid_h\tgrid_w\timage_pad_tokens")
for name, patch, merge, lo, hi in CONFIGS:
    factor = patch * merge
    for w, h in SIZES:
        try:
            rh, rw = smart_resize(h, w, factor=factor, min_pixels=lo, max_pixels=hi)
        except ValueError:
            print(f"{name}\t{w}\t{h}\terror\terror\terror\terror\terror")
            continue
        gh, gw = rh // patch, rw // patch
        print(f"{name}\t{w}\t{h}\t{rh}\t{rw}\t{gh}\t{gw}\t{gh * gw // merge ** 2}")
