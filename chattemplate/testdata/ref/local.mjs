// local.mjs: what the reference scripts share.
import path from "node:path";

// localTokenizer loads the tokenizer in directory dir (tokenizer.json and
// tokenizer_config.json) with transformers.js, never from the network.
export async function localTokenizer(dir) {
  const { AutoTokenizer, env } = await import("@huggingface/transformers");
  const abs = path.resolve(dir);
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  env.localModelPath = path.dirname(abs) + path.sep;
  return AutoTokenizer.from_pretrained(path.basename(abs));
}
