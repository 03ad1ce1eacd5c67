#!/usr/bin/env bash
# A VLM agent dataset made to fit Qwen2.5-VL's training window as the
# trainer sees it.
#
# The data: 8 WebVoyager browsing runs (fixtures/multimodal/webvoyager), each
# a LLaMA-Factory record whose "<image>" markers pair with its "images" list
# of screenshots (1024×768 PNGs beside the file).
#
# The model: Qwen2.5-VL. --tokenizer names its model directory, and from it
# trajcompress takes three things (lib.sh's qwen_vl_model builds one):
#   tokenizer.json            the exact token counts;
#   tokenizer_config.json     the chat template (--chat-template auto, the
#                             default when the tokenizer has one): each record
#                             is counted as apply_chat_template renders it,
#                             its tools included;
#   preprocessor_config.json  each image's cost: smart_resize to a multiple of
#                             28 pixels, one <|image_pad|> per merged patch
#                             (1,001 tokens for a 1024×768 screenshot).
#
# --drop-old-images: before any summary, the screenshots older than the
# newest one (within the compressible middle) become "[image removed:
# 1024x768 png]", oldest first, until the record fits; only what still does
# not fit is summarised.
. "$(dirname "$0")/../lib.sh"

model=$(qwen_vl_model)
data=$REPO/fixtures/multimodal/webvoyager/records.jsonl

"$TRAJCOMPRESS" compress --quiet --input "$data" --output "$WORK/vlm.jsonl" \
	--outcomes "$WORK/outcomes.jsonl" \
	--tokenizer "$model" --drop-old-images --target-max-tokens 5000

# What happened to each record (one JSON line each) and to the run: 7 of the
# 8 runs were over 5,000 tokens; 7 old screenshots went.
expect_line "$WORK/outcomes.jsonl" '"outcome":"compressed".*"images_removed":1'
[ "$(json_number "$WORK/vlm_metrics.json" images_removed)" = 7 ]
[ "$(json_number "$WORK/vlm_metrics.json" compressed)" = 7 ]

# The trainer's view of the output: every record within 5,000 tokens once the
# chat template renders it with its images (exit 0: none over).
"$TRAJCOMPRESS" validate --tokenizer "$model" --max-length 5000 "$WORK/vlm.jsonl"
echo "vlm-agent: ok"
