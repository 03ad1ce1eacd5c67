// gen_codepoints.mjs writes golden_codepoints.json: what Hugging Face
// tokenizers (npm "tokenizers", pinned in package.json) does to every code
// point on its own, for the character-level normalizers and
// pre-tokenizers, so that TestHFCodePoints (../../hfkinds_test.go) checks
// this package's Unicode data (Go's tables, x/text, the generated Unicode
// 16/17 tables) against the reference's for all 1,112,064 scalar values,
// not only those in the golden texts.
//
// Regenerate (run from the module root):
//
//	npm ci --prefix tokenize/testdata/hf
//	node tokenize/testdata/hf/gen_codepoints.mjs
//
// Output: {"maps": {normalizer: {"<cp hex>": "<output>"}} listing only code
// points that a normalizer changes (NFC, NFD, NFKC, NFKD, Lowercase,
// StripAccents, applied to the code point alone), and {"sets": {name:
// [[lo, hi], ...]}} for the code points that the Punctuation pre-tokenizer
// isolates, WhitespaceSplit removes, and Whitespace (\w+|[^\w\s]+) treats
// as a word character or as space.
import tokenizers from "tokenizers";
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const t = tokenizers;
const norms = {
  NFC: t.nfcNormalizer(), NFD: t.nfdNormalizer(), NFKC: t.nfkcNormalizer(), NFKD: t.nfkdNormalizer(),
  Lowercase: t.lowercase(), StripAccents: t.stripAccentsNormalizer(),
};
const punct = t.punctuationPreTokenizer();
const wsplit = t.whitespaceSplitPreTokenizer();
const ws = t.whitespacePreTokenizer();

const maps = Object.fromEntries(Object.keys(norms).map((k) => [k, {}]));
const sets = { punctuation: [], whitespace_split: [], word: [], space: [] };
const addSet = (name, c) => {
  const r = sets[name];
  const last = r[r.length - 1];
  if (last && last[1] === c - 1) last[1] = c;
  else r.push([c, c]);
};
for (let c = 0; c < 0x110000; c++) {
  if (c >= 0xd800 && c <= 0xdfff) continue;
  const s = String.fromCodePoint(c);
  for (const [k, n] of Object.entries(norms)) {
    const o = n.normalizeString(s);
    if (o !== s) maps[k][c.toString(16)] = o;
  }
  if (punct.preTokenizeString("a" + s + "a").length === 3) addSet("punctuation", c);
  if (wsplit.preTokenizeString("a" + s + "a").length === 2) addSet("whitespace_split", c);
  // Whitespace: "a"+c+"a" is one piece when c is a word character, two
  // when c is space (removed), three when c is neither.
  const n = ws.preTokenizeString("a" + s + "a").length;
  if (n === 1) addSet("word", c);
  if (n === 2) addSet("space", c);
}
writeFileSync(join(here, "golden_codepoints.json"), JSON.stringify({ maps, sets }) + "\n");
console.log(Object.entries(maps).map(([k, m]) => `${k} ${Object.keys(m).length}`).join(", "), Object.entries(sets).map(([k, r]) => `${k} ${r.length} ranges`).join(", "));
