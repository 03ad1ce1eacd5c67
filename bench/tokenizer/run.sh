#!/usr/bin/env bash
# run.sh: tokenizer benchmark (see bench/README.md, "Tokenizer").
# Runs, on the same corpus in the same run: npm tiktoken (the reference),
# the Go engine (tokbench count, and go test -bench for 1 vs 2 goroutines
# and allocations), the linear-time cases and the start-up probe, then
# prints the ratios. Needs Go and Node >= 18; installs npm tiktoken (pinned
# by tokenize/testdata/package-lock.json) into the git-ignored
# tokenize/testdata/node_modules if missing. Output also goes to
# bench/out/tokenizer.txt.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
out=bench/out
mkdir -p "$out"
exec > >(tee "$out/tokenizer.txt") 2>&1

echo "# $(date -u +%FT%TZ) $(uname -m), $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ ! -d tokenize/testdata/node_modules/tiktoken ]; then
  npm ci --prefix tokenize/testdata --no-audit --no-fund
fi

go build -o "$out/tokbench" ./bench/tokenizer/tokbench
"$out/tokbench" corpus "$out/tokenizer_corpus.json"

echo "## reference and Go on the corpus (single core, best of 3)"
node bench/tokenizer/ref.mjs "$out/tokenizer_corpus.json" | tee "$out/ref.txt"
"$out/tokbench" count "$out/tokenizer_corpus.json" | tee "$out/go.txt"

echo "## ratios (Go / npm tiktoken)"
status=0
for enc in o200k_base cl100k_base; do
  r=$(grep "^node $enc " "$out/ref.txt"); g=$(grep "^go $enc " "$out/go.txt")
  field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" <<<"$2"; }
  rt=$(field tokens "$r"); gt=$(field tokens "$g")
  if [ "$rt" != "$gt" ]; then echo "MISMATCH $enc: node $rt tokens, go $gt tokens"; status=1; fi
  awk -v e="$enc" -v t="$gt" -v rw="$(field wallMBps "$r")" -v gw="$(field wallMBps "$g")" \
      -v rc="$(field cpuMBps "$r")" -v gc="$(field cpuMBps "$g")" 'BEGIN {
    printf "%s tokens equal (%d); wall %.2f vs %.2f MB/s = %.1fx; cpu %.2f vs %.2f MB/s = %.1fx\n", e, t, gw, rw, gw/rw, gc, rc, gc/rc }'
done

echo "## go test -bench (1 and 2 goroutines, allocations; best of 3 runs each)"
go test -run '^$' -bench 'Count' -benchtime 5x -count 3 ./bench/tokenizer | tee "$out/gobench.txt"
best() { awk -v p="Count/$1/$2" '$1 ~ p {for (i=1;i<=NF;i++) if ($(i+1)=="MB/s" && $i+0 > m) m=$i+0} END {print m}' "$out/gobench.txt"; }
for enc in o200k_base cl100k_base; do
  awk -v e="$enc" -v a="$(best "$enc" 1g)" -v b="$(best "$enc" 2g)" \
    'BEGIN { printf "%s 2 goroutines / 1 = %.2f / %.2f MB/s = %.2fx (wall, best runs)\n", e, b, a, b/a }'
done

echo "## linear time (each must be < 1 s)"
"$out/tokbench" linear || status=1

echo "## start-up and RSS (fresh process: New + one Count; median of 5)"
"$out/tokbench" startup o200k_base
"$out/tokbench" startup cl100k_base
exit $status
