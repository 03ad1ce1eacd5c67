// ref.mjs times npm tiktoken (pinned in tokenize/testdata/package.json) on
// the corpus written by "tokbench corpus": encode_ordinary on every text,
// one core, best of 3 passes after a warm-up. Prints the token total and
// wall and CPU throughput, and writes the per-text counts to
// CORPUS.<encoding>.counts, which "tokbench count" compares text by text.
//
//	node bench/tokenizer/ref.mjs bench/out/tokenizer_corpus.json
import { createRequire } from "node:module";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const require = createRequire(join(root, "tokenize", "testdata", "package.json"));
const { get_encoding } = require("tiktoken");

const texts = JSON.parse(readFileSync(process.argv[2], "utf8"));
const bytes = texts.reduce((n, t) => n + Buffer.byteLength(t, "utf8"), 0);
for (const name of ["o200k_base", "cl100k_base"]) {
  const enc = get_encoding(name);
  for (const t of texts.slice(0, 500)) enc.encode_ordinary(t); // warm-up
  let best = Infinity, bestCPU = Infinity, tokens = 0;
  const counts = new Array(texts.length);
  for (let pass = 0; pass < 3; pass++) {
    tokens = 0;
    const t0 = process.hrtime.bigint(), c0 = process.cpuUsage();
    for (let i = 0; i < texts.length; i++) {
      const n = enc.encode_ordinary(texts[i]).length;
      counts[i] = n;
      tokens += n;
    }
    const wall = Number(process.hrtime.bigint() - t0) / 1e9;
    const c = process.cpuUsage(c0);
    best = Math.min(best, wall);
    bestCPU = Math.min(bestCPU, (c.user + c.system) / 1e6);
  }
  enc.free();
  // Per-text counts, one per line, for "tokbench count" to compare.
  writeFileSync(`${process.argv[2]}.${name}.counts`, counts.join("\n") + "\n");
  console.log(`node ${name} tokens=${tokens} bytes=${bytes} wallMBps=${(bytes / 1e6 / best).toFixed(2)} cpuMBps=${(bytes / 1e6 / bestCPU).toFixed(2)}`);
}
