#!/usr/bin/env bash
# run_sp.sh: SentencePiece-style BPE tokenizer.json benchmark (see
# bench/README.md, "SentencePiece-style tokenizer.json"). ROUNDS rounds
# (default 5), each timing npm tokenizers (one pass after a warm-up, one
# core) and then the Go engine (one pass after the count check, one
# goroutine) on the
# real-turn corpus for Gemma 3, Llama-2 and Gemini, every text's count
# compared; then the ratio of each round (Go / npm, by CPU and by wall) and
# their medians; then the pathological 1 MiB inputs. Needs Go and
# Node >= 18. Output also goes to bench/out/tokenizer_sp.txt.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
out=bench/out
mkdir -p "$out"
exec > >(tee "$out/tokenizer_sp.txt") 2>&1
rounds=${ROUNDS:-5}
models="gemma3 llama2 gemini"

echo "# $(date -u +%FT%TZ) $(uname -m), $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ ! -d tokenize/testdata/hf/node_modules/tokenizers ]; then
  npm ci --prefix tokenize/testdata/hf --no-audit --no-fund
fi
go build -o "$out/tokbench" ./bench/tokenizer/tokbench
[ -f "$out/tokenizer_corpus.json" ] || "$out/tokbench" corpus "$out/tokenizer_corpus.json"
: > "$out/sp_rounds.txt"
for r in $(seq 1 "$rounds"); do
  echo "## round $r, load: $(cut -d' ' -f1-3 /proc/loadavg)"
  PASSES=1 RAYON_NUM_THREADS=1 UV_THREADPOOL_SIZE=1 node bench/tokenizer/ref_hf.mjs "$out/tokenizer_corpus.json" $models | tee "$out/ref_sp.txt"
  PASSES=1 "$out/tokbench" hf "$out/tokenizer_corpus.json" $models | tee "$out/go_sp.txt"
  for m in $models; do
    rc=$(sed -n "s/^node $m .*cpuMBps=\([0-9.]*\).*/\1/p" "$out/ref_sp.txt")
    gc=$(sed -n "s/^go $m .*cpuMBps=\([0-9.]*\).*/\1/p" "$out/go_sp.txt")
    rw=$(sed -n "s/^node $m .*wallMBps=\([0-9.]*\).*/\1/p" "$out/ref_sp.txt")
    gw=$(sed -n "s/^go $m .*wallMBps=\([0-9.]*\).*/\1/p" "$out/go_sp.txt")
    echo "$m $r $gc $rc $gw $rw" >> "$out/sp_rounds.txt"
  done
done
echo "## ratios per round (Go / npm tokenizers; CPU MB/s, then wall MB/s)"
awk '{ printf "%s round %s: cpu %.2f / %.2f = %.1fx, wall %.2f / %.2f = %.1fx\n", $1, $2, $3, $4, $3/$4, $5, $6, $5/$6 }' "$out/sp_rounds.txt"
echo "## medians over $rounds rounds"
for m in $models; do
  c=$(awk -v m="$m" '$1 == m { print $3/$4 }' "$out/sp_rounds.txt" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2 }')
  w=$(awk -v m="$m" '$1 == m { print $5/$6 }' "$out/sp_rounds.txt" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2 }')
  echo "$m median cpu ratio ${c}x, wall ratio ${w}x"
done
echo "## pathological 1 MiB inputs (warm, median of 5, CPU time)"
"$out/tokbench" pathological "$out/tokenizer_corpus.json" $models
