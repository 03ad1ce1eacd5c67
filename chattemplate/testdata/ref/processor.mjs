// processor.mjs: the transformers.js reference for templated counts of records
// with images (Qwen2-VL family).
//
//   node processor.mjs MODEL_DIR PREPROCESSOR_CONFIG.json TEMPLATE.jinja CASES.jsonl
//
// MODEL_DIR holds tokenizer.json and tokenizer_config.json. CASES.jsonl has one
// {"name", "messages", "tools", "images", "markers"} object a line: images are the
// paths of the record's image files in the order the processor gets them (the
// order of the template's image placeholders); markers true means the messages'
// string contents hold LLaMA-Factory "<image>" markers, which are replaced first by
// <|vision_start|><|image_pad|><|vision_end|>, as LLaMA-Factory's Qwen2VLPlugin
// (src/llamafactory/data/mm_plugin.py, process_messages) does before the template
// runs. For each case it prints one JSON line {"name", "tokens", "grids"}:
//
//   text   = apply_chat_template(messages, {tools, chat_template, tokenize: false,
//                                           add_generation_prompt: false})
//   tokens = processor(text, images).input_ids length
//
// where processor is transformers.js' Qwen2VLProcessor with a Qwen2VLImageProcessor
// made from PREPROCESSOR_CONFIG.json: it replaces the n-th <|image_pad|> by the n-th
// image's grid_t*grid_h*grid_w/merge_size² pads and tokenizes. transformers.js'
// ImageProcessor stacks the pixel values of a call, which fails for images of
// different sizes; Python's Qwen2VLImageProcessor patches each image on its own and
// concatenates, so the image processor is called here once per image and the grids
// concatenated, as Python does. {"name", "error"} when a step raises.
import fs from "node:fs";
import readline from "node:readline";

import { localTokenizer } from "./local.mjs";

const { Qwen2VLImageProcessor, Qwen2VLProcessor, RawImage, cat } = await import("@huggingface/transformers");

const [dir, preprocPath, templatePath, casesPath] = process.argv.slice(2);
if (!dir || !preprocPath || !templatePath || !casesPath) {
  console.error("usage: node processor.mjs MODEL_DIR PREPROCESSOR_CONFIG.json TEMPLATE.jinja CASES.jsonl");
  process.exit(2);
}
const tokenizer = await localTokenizer(dir);
const chat_template = fs.readFileSync(templatePath, "utf8");
// Python's Qwen2VLImageProcessor class defaults for what a trimmed config leaves out
// (transformers.js takes an absent do_resize as false).
const preproc = {
  do_resize: true,
  resample: 3,
  do_rescale: true,
  rescale_factor: 1 / 255,
  do_normalize: true,
  do_convert_rgb: true,
  ...JSON.parse(fs.readFileSync(preprocPath, "utf8")),
};
const imageProcessor = new Qwen2VLImageProcessor(preproc);

// perImage calls the image processor once per image and concatenates the
// grids (see the header).
const perImage = async (images) => {
  const grids = [];
  for (const im of images) {
    const out = await imageProcessor(im);
    grids.push(out.image_grid_thw);
  }
  return { image_grid_thw: cat(grids, 0) };
};
perImage.config = imageProcessor.config;
const processor = new Qwen2VLProcessor({}, { tokenizer, image_processor: perImage }, chat_template);

const VISION = "<|vision_start|><|image_pad|><|vision_end|>";

const rl = readline.createInterface({ input: fs.createReadStream(casesPath), crlfDelay: Infinity });
for await (const line of rl) {
  if (!line.trim()) continue;
  const c = JSON.parse(line);
  try {
    let messages = c.messages;
    if (c.markers) {
      messages = messages.map((m) =>
        typeof m.content === "string" ? { ...m, content: m.content.replaceAll("<image>", VISION) } : m,
      );
    }
    const text = tokenizer.apply_chat_template(messages, {
      tools: c.tools ?? null,
      chat_template,
      tokenize: false,
      add_generation_prompt: false,
    });
    const images = [];
    for (const p of c.images ?? []) images.push(await RawImage.read(p));
    const out = await processor(text, images.length ? images : null);
    const grids = out.image_grid_thw ? out.image_grid_thw.tolist().map((g) => g.map(Number)) : [];
    console.log(JSON.stringify({ name: c.name, tokens: out.input_ids.dims[1], grids }));
  } catch (e) {
    console.log(JSON.stringify({ name: c.name, error: String(e && e.message ? e.message : e) }));
  }
}
