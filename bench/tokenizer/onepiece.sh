#!/usr/bin/env bash
# onepiece.sh: one-piece inputs, repeated and interleaved.
#
#   bench/tokenizer/onepiece.sh [-r RUNS] [-s 1|10] TOKBENCH... 
#
# Runs "TOKBENCH linear" (1 MB inputs; -s 10: "linear10", 10 MB) RUNS
# times (default 5) for each tokbench binary given, interleaved (A B A B
# ...), with the tokenizer.json models of the golden tests, and prints per
# binary, tokenizer and input the median, minimum and maximum in ms, with
# the load average before each run. Build a binary of another commit with
#   git worktree add /tmp/old OLD && (cd /tmp/old && go build -o /tmp/tokbench-old ./bench/tokenizer/tokbench)
# and run from the module root of this one (the models are read from
# tokenize/testdata/hf/node_modules: npm ci --prefix tokenize/testdata/hf).
set -euo pipefail
runs=5 size=1
while getopts r:s: o; do
  case $o in r) runs=$OPTARG ;; s) size=$OPTARG ;; *) exit 2 ;; esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { echo "usage: $0 [-r RUNS] [-s 1|10] TOKBENCH..." >&2; exit 2; }
sub=linear
[ "$size" = 10 ] && sub=linear10
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for r in $(seq "$runs"); do
  for b in "$@"; do
    echo "run $r $(basename "$b"): load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
    "$b" "$sub" qwen3 llama3 deepseek_v3 gptoss | sed "s|^|$(basename "$b") |" >>"$tmp/all" || true
  done
done
# Lines: BIN linear TOKENIZER NAME... [N bytes N tokens] MS ms VERDICT
awk '{
  for (i = NF; i > 0; i--) if ($i == "ms" || $i == "ms)") break
  ms = $(i-1); name = ""
  for (j = 4; j < NF; j++) { if ($j ~ /^[0-9]+$/ && $(j+1) == "bytes" || $j == ms) break; name = name (name ? " " : "") $j }
  key = $1 " " $3 " " name
  if (!(key in n)) order[++k] = key
  v[key, ++n[key]] = ms
} END {
  printf "%-58s %9s %9s %9s\n", "binary tokenizer input", "median", "min", "max"
  for (o = 1; o <= k; o++) {
    key = order[o]; m = n[key]
    for (i = 1; i <= m; i++) a[i] = v[key, i]
    for (i = 2; i <= m; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
    med = (m % 2) ? a[(m+1)/2] : (a[m/2] + a[m/2+1]) / 2
    printf "%-58s %9.1f %9.1f %9.1f\n", key, med, a[1], a[m]
  }
}' "$tmp/all"
