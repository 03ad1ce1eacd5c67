// gen_golden.mjs writes golden.jsonl: token ids from npm tiktoken (the WASM
// build of OpenAI's Rust tiktoken, pinned in package.json) for the
// exactness tests in ../golden_test.go.
//
// Regenerate (needs Node >= 18; run from the module root):
//
//	npm ci --prefix tokenize/testdata      # node_modules is git-ignored
//	node tokenize/testdata/gen_golden.mjs  # or: go test ./tokenize -run TestGolden -update
//
// Each output line is {"name", "text" (base64 of the raw bytes), "o200k_base",
// "cl100k_base"}. Raw bytes are decoded with TextDecoder (WHATWG: one U+FFFD
// per maximal ill-formed subpart) before encode_ordinary, which is what the
// Go side must reproduce. The random cases use a fixed seed.
import { get_encoding } from "tiktoken";
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const enc = new TextEncoder();
const cases = [];
const add = (name, text) => cases.push({ name, bytes: typeof text === "string" ? enc.encode(text) : Uint8Array.from(text) });

// Prose, code, tool calls, terminal output.
add("prose", "The quick brown fox jumps over the lazy dog. It's 5 o'clock; we'll see—maybe.");
add("prose_caps", "HELLO World, this IS a TeSt of CamelCase and snake_case and SCREAMING_CASE words.");
add("code_go", "func main() {\n\tfmt.Println(\"hello, world\")\n\tfor i := 0; i < 10; i++ {\n\t\tx += i*2 // comment\n\t}\n}\n");
add("code_py", "def f(x):\n    \"\"\"Docstring.\"\"\"\n    return [y**2 for y in range(x) if y % 3 == 0]\n\n\nclass A(B):\n    pass\n");
add("json_tool_call", "{\"name\": \"get_weather\", \"arguments\": {\"location\": \"San Francisco, CA\", \"unit\": \"celsius\", \"days\": 3}}");
add("tool_call_tags", "<tool_call>\n{\"name\": \"search\", \"arguments\": {\"query\": \"rust regex\"}}\n</tool_call>\n<tool_response>\n{\"ok\": true}\n</tool_response>");
add("terminal", "$ ls -la /tmp\ntotal 48\ndrwxrwxrwt 12 root root 4096 Nov 22 09:40 .\n-rw-r--r--  1 root root  123 Nov 22 09:41 a.txt\n$ echo $?\n0\n");
add("stacktrace", "Exception in thread \"main\" java.lang.NullPointerException\n\tat com.example.Foo.bar(Foo.java:42)\n\tat com.example.Main.main(Main.java:7)\n");
add("diff", "--- a/x.go\n+++ b/x.go\n@@ -1,3 +1,4 @@\n-old line\n+new line\n+// added\n ctx\n");
add("url_path", "see https://example.com/a/b/c?x=1&y=2#frag and /usr/local/bin//foo/// and C:\\Windows\\System32");
// CJK and other scripts.
add("cjk", "我需要为John Doe生成一张发票。他购买了2个苹果，每个$1，以及3根香蕉。日本語のテキストです。한국어 텍스트입니다.");
add("scripts", "Ελληνικά кириллица עברית العربية हिन्दी ไทย ქართული Ǆǅǆ ǈ ᾈ ʰʲ ˈstress");
add("emoji", "🎉🎉 👍🏽 👨‍👩‍👧‍👦 🇺🇸 ❤️ ©® ™ ⌘ 🙂🙃 text🎉text");
// Whitespace runs.
add("spaces", "a  b   c    d     e\n");
add("tabs", "a\tb\t\tc\t\t\td\t");
add("crlf_mix", "line1\r\nline2\r\n\r\n  line3\n\r\n \n  \r\n\t\nend");
add("trailing_ws", "end with spaces   ");
add("trailing_newlines", "end\n\n\n");
add("leading_ws", "   \n\n   start");
add("ws_before_letter", "  \t x  \u3000y \u00a0z\u2003\u2003w");
add("only_ws", " \t \n \r\n  ");
add("newline_space_mix", "\n \n  \n   x\n \n");
add("unicode_ws", "a\u0085b\u2028c\u2029d\u000be\u000cf\u001cg\u200bh\u180ei\u3000\u3000j");
// Punctuation runs.
add("punct", "!!! ??? ... --- *** ### @@@ $$$ %%% ^^^ &&& ((())) [[[]]] {{{}}} <<<>>> ||| /// \\\\\\ ~~~ ```");
add("punct_newlines", "foo:\n\n!!\r\n\r\n?/\n// comment\n//\n/\n");
add("punct_space", " ... ,,, ;; : ' \" `x` 'y' \"z\"");
// Digits.
add("digits", "1 12 123 1234 12345 123456 1234567 3.14159 1,000,000 0x1F 2024-05-15 15:00:00");
add("digits_unicode", "٠١٢٣٤٥٦٧٨٩ ０１２３ ①②③ ½¾ Ⅻ ⅷ 𝟘𝟙𝟚 ²³ ௧௨");
// Contractions.
add("contractions", "I'm you're we've they'll she'd it's can't won't I'M YOU'RE WE'VE THEY'LL SHE'D IT'S");
add("contractions_fold", "'s 'S 't 'T 're 'RE 'Re 've 'VE 'm 'M 'll 'LL 'lL 'd 'D 'ſ 'ſt x'ſ X'ſ 'K 'K 'x 'sometimes");
add("contractions_o200k", "HELLO'S Hello's hello'S ÉTÉ'll ǅ'd 中's x'RE'VE 's's ''s");
add("apostrophes", "rock'n'roll 'quoted' ’curly’ don’t ʼmodifier");
// Unicode categories.
add("marks", "e\u0301 a\u0300\u0301\u0302 \u0301\u0301start  \u0301x 1\u0301 !\u0301 ก\u0e31 क्षि \u20dd");
add("letters_lt_lm_lo", "ǅungla ǅUNGLA ᾈᾉ ʰʱʲ ˆˇ ーー カタカナー ªº ƻ ǀǁ");
add("upper_lower_mix", "ABCdef ABC DEF aBC Abc ABc ǄǅǆǇǈ ÀÉÎÕÜ àéîõü ĲĳŒœ");
add("numbers_letters", "abc123def 123abc Ⅻabc x²y");
// Special-token strings are ordinary text.
add("special_tokens", "<|endoftext|> <|fim_prefix|><|fim_middle|><|fim_suffix|> <|endofprompt|> <|im_start|>user");
// Invalid UTF-8 (maximal subparts).
add("invalid_lone_cont", [0x61, 0x80, 0x62, 0xbf, 0xbf, 0x63]);
add("invalid_truncated", [0x61, 0xe2, 0x82, 0x20, 0xf0, 0x9f, 0x98, 0x62, 0xe4]);
add("invalid_overlong", [0xc0, 0xaf, 0xe0, 0x80, 0xaf, 0xf0, 0x80, 0x80, 0xaf, 0x20, 0x41]);
add("invalid_surrogate", [0xed, 0xa0, 0x80, 0xed, 0xbf, 0xbf, 0x20, 0x78, 0xf4, 0x90, 0x80, 0x80, 0xf5, 0xff, 0xfe]);
add("invalid_mixed", [...enc.encode("héllo "), 0xe9, ...enc.encode("wörld "), 0xc3, 0x28, 0xa0, 0xa1, ...enc.encode(" 中"), 0xe4, 0xb8]);
add("replacement_char", "a\uFFFDb \uFFFD\uFFFD");
// Long single pieces (exercise the heap merge).
add("long_letters", "abcdefghij".repeat(40));
add("long_cjk", "我需要为生成一张发票每个以及根香蕉".repeat(12));
add("long_punct", "-=+*/<>!?".repeat(30));
add("long_spaces", " ".repeat(300) + "x" + " ".repeat(257));
add("long_mixed_word", "Supercalifragilisticexpialidocious".repeat(5) + "ǅ".repeat(20));

// Code points whose class differs between Unicode 15.0 (Go's tables) and
// later versions (16.0 in the reference's regex-syntax 0.8.5, 17.0 in
// Node's ICU): numbers change \p{N}{1,3} chunking, so each range appears
// next to ASCII digits; the others sit next to letters, spaces and newlines.
// U+0085 and U+FEFF differ only under JavaScript's \s; Go and Rust agree.
const deltaRanges = [
  [0x295, 0x295], [0x88f, 0x88f], [0x897, 0x897], [0xc5c, 0xc5c], [0xcdc, 0xcdc], [0x1acf, 0x1add], [0x1ae0, 0x1aeb], [0x1c89, 0x1c89],
  [0x1c8a, 0x1c8a], [0xa7cb, 0xa7cc], [0xa7cd, 0xa7cd], [0xa7ce, 0xa7ce], [0xa7cf, 0xa7cf], [0xa7d2, 0xa7d2], [0xa7d4, 0xa7d4], [0xa7da, 0xa7da],
  [0xa7db, 0xa7db], [0xa7dc, 0xa7dc], [0xa7f1, 0xa7f1], [0x105c0, 0x105f3], [0x10940, 0x10959], [0x10d40, 0x10d49], [0x10d4a, 0x10d4d], [0x10d4e, 0x10d4e],
  [0x10d4f, 0x10d4f], [0x10d50, 0x10d65], [0x10d69, 0x10d6d], [0x10d6f, 0x10d6f], [0x10d70, 0x10d85], [0x10ec2, 0x10ec4], [0x10ec5, 0x10ec5], [0x10ec6, 0x10ec7],
  [0x10efa, 0x10efc], [0x11380, 0x11389], [0x1138b, 0x1138b], [0x1138e, 0x1138e], [0x11390, 0x113b5], [0x113b7, 0x113b7], [0x113b8, 0x113c0], [0x113c2, 0x113c2],
  [0x113c5, 0x113c5], [0x113c7, 0x113ca], [0x113cc, 0x113d0], [0x113d1, 0x113d1], [0x113d2, 0x113d2], [0x113d3, 0x113d3], [0x113e1, 0x113e2], [0x116d0, 0x116e3],
  [0x11b60, 0x11b67], [0x11bc0, 0x11be0], [0x11bf0, 0x11bf9], [0x11db0, 0x11dd8], [0x11dd9, 0x11dd9], [0x11dda, 0x11ddb], [0x11de0, 0x11de9], [0x11f5a, 0x11f5a],
  [0x13460, 0x143fa], [0x16100, 0x1611d], [0x1611e, 0x1612f], [0x16130, 0x16139], [0x16d40, 0x16d42], [0x16d43, 0x16d6a], [0x16d6b, 0x16d6c], [0x16d70, 0x16d79],
  [0x16ea0, 0x16eb8], [0x16ebb, 0x16ed3], [0x16ff2, 0x16ff3], [0x16ff4, 0x16ff6], [0x187f8, 0x187ff], [0x18cff, 0x18cff], [0x18d09, 0x18d1e], [0x18d80, 0x18df2],
  [0x1ccf0, 0x1ccf9], [0x1e5d0, 0x1e5ed], [0x1e5ee, 0x1e5ef], [0x1e5f0, 0x1e5f0], [0x1e5f1, 0x1e5fa], [0x1e6c0, 0x1e6de], [0x1e6e0, 0x1e6e2], [0x1e6e3, 0x1e6e3],
  [0x1e6e4, 0x1e6e5], [0x1e6e6, 0x1e6e6], [0x1e6e7, 0x1e6ed], [0x1e6ee, 0x1e6ef], [0x1e6f0, 0x1e6f4], [0x1e6f5, 0x1e6f5], [0x1e6fe, 0x1e6fe], [0x1e6ff, 0x1e6ff],
  [0x2b73a, 0x2b73f], [0x2cea2, 0x2cead], [0x2ebf0, 0x2ee5d], [0x323b0, 0x33479],
];
for (const [lo, hi] of deltaRanges) {
  const pick = hi - lo < 12 ? Array.from({ length: hi - lo + 1 }, (_, k) => lo + k) : [lo, lo + 1, (lo + hi) >> 1, hi - 1, hi];
  const cs = pick.map((c) => String.fromCodePoint(c));
  const parts = cs.map((x) => `1${x}23 ${x}123 ab${x}cd A${x}bc ${x}\n  ${x} 'x${x}'s`);
  add(`unicode_delta_${lo.toString(16)}`, parts.join(" | ") + " " + cs.join(""));
}

// Deterministic random strings (xorshift32) over a mix of ASCII classes and
// code points from every plane in use, assigned or not.
let seed = 0x9e3779b9;
const rnd = (n) => { seed ^= seed << 13; seed >>>= 0; seed ^= seed >>> 17; seed ^= seed << 5; seed >>>= 0; return seed % n; };
const pools = [
  "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", "0123456789", " \t\n\r  ", "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~",
  "'sStTmMdDlLrReEvVſ", "ǅǈᾈʰーªé\u0301\u0300क्ष中文カ한", "٠①½Ⅻ²𝟘", "\u00a0\u3000\u2028\u0085",
];
const randomCodePoint = () => {
  const planes = [[0x80, 0x800], [0x800, 0xd800], [0xe000, 0x10000], [0x10000, 0x20000], [0x20000, 0x30000], [0x30000, 0x32000], [0xe0000, 0xe0200]];
  const [lo, hi] = planes[rnd(planes.length)];
  return String.fromCodePoint(lo + rnd(hi - lo));
};
for (let k = 0; k < 200; k++) {
  let s = "";
  const len = 1 + rnd(80);
  for (let i = 0; i < len; i++) {
    if (rnd(4) === 0) s += randomCodePoint();
    else { const p = [...pools[rnd(pools.length)]]; s += p[rnd(p.length)]; }
  }
  add(`random_${k}`, s);
}

// No text from the real data (internal/testenv) is committed here (several of
// those sources have no licence): the real data is checked at test time by
// realdata_test.go, against tiktoken-go, and skipped when it is absent.

const encs = { o200k_base: get_encoding("o200k_base"), cl100k_base: get_encoding("cl100k_base") };
const dec = new TextDecoder("utf-8");
const out = cases.map(({ name, bytes }) => {
  const text = dec.decode(bytes);
  const row = { name, text: Buffer.from(bytes).toString("base64") };
  for (const [n, e] of Object.entries(encs)) row[n] = Array.from(e.encode_ordinary(text));
  return JSON.stringify(row);
});
writeFileSync(join(here, "golden.jsonl"), out.join("\n") + "\n");
for (const e of Object.values(encs)) e.free();
console.log(`wrote ${out.length} cases to ${join(here, "golden.jsonl")}`);
