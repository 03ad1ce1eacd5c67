#!/usr/bin/env bash
# run_hf.sh: tokenizer.json benchmark (see bench/README.md, "Hugging Face
# tokenizer.json" under "Tokenizer"). On the same corpus as run.sh:
# npm tokenizers (HF's Rust core through napi, one encode at a time) and the
# Go engine for Qwen3, Llama-3, DeepSeek-V3 and GPT-OSS (every text's count
# compared), then the one-piece inputs (1 MB and 10 MB) and the load times. Needs Go and
# Node >= 18; installs tokenize/testdata/hf (npm ci) if missing. Output also
# goes to bench/out/tokenizer_hf.txt.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
out=bench/out
mkdir -p "$out"
exec > >(tee "$out/tokenizer_hf.txt") 2>&1

echo "# $(date -u +%FT%TZ) $(uname -m), $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ ! -d tokenize/testdata/hf/node_modules/tokenizers ]; then
  npm ci --prefix tokenize/testdata/hf --no-audit --no-fund
fi
go build -o "$out/tokbench" ./bench/tokenizer/tokbench
[ -f "$out/tokenizer_corpus.json" ] || "$out/tokbench" corpus "$out/tokenizer_corpus.json"

echo "## npm tokenizers and Go on the corpus (single core, best of 3)"
RAYON_NUM_THREADS=1 UV_THREADPOOL_SIZE=1 node bench/tokenizer/ref_hf.mjs "$out/tokenizer_corpus.json" | tee "$out/ref_hf.txt"
"$out/tokbench" hf "$out/tokenizer_corpus.json" | tee "$out/go_hf.txt"
echo "## ratios (Go / npm tokenizers, wall)"
for m in qwen3 llama3 deepseek_v3 gptoss; do
  r=$(sed -n "s/^node $m .*wallMBps=\([0-9.]*\).*/\1/p" "$out/ref_hf.txt")
  g=$(sed -n "s/^go $m .*wallMBps=\([0-9.]*\).*/\1/p" "$out/go_hf.txt")
  awk -v m="$m" -v r="$r" -v g="$g" 'BEGIN { printf "%s %.2f vs %.2f MB/s = %.1fx\n", m, g, r, g/r }'
done
echo "## one-piece inputs, 1 MB and 10 MB (repeated and interleaved: bench/tokenizer/onepiece.sh)"
"$out/tokbench" linear qwen3 llama3 deepseek_v3 gptoss || true
"$out/tokbench" linear10 qwen3 llama3 deepseek_v3 gptoss || true
echo "## load (fresh process, median of 5)"
"$out/tokbench" load qwen3 llama3 deepseek_v3 gptoss
