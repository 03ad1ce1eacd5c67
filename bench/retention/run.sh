#!/usr/bin/env bash
# Retention of the summaries on the real data (bench/realdata.sh): for each real
# file and each target, `compress --summary-target-tokens 750` and the metrics'
# retention section: of the distinct tool names called in each summarised region, and of the
# distinct paths and commands named in those calls' arguments, how many the summary names.
#   bench/retention/run.sh [TARGETS]     (default "15250 4000"; extra compress flags in ARGS)
# Skips (exit 0) when the real data is absent. Needs python3 to read the metrics.
set -euo pipefail
# shellcheck source=bench/realdata.sh
. "$(dirname "$0")/../realdata.sh"
realdata retention
printf '%-62s %6s %7s %18s %22s\n' source target regions "tool names" "paths and commands"
for t in ${1:-15250 4000}; do
	: > "$out/tally"
	for f in "$real"/*/*.jsonl; do
		src=$(basename "$(dirname "$f")")/$(basename "$f")
		# shellcheck disable=SC2086 # ARGS are flags
		"$out/trajcompress" compress --quiet --input "$f" --output "$out/o.jsonl" --metrics "$out/m.json" \
			--summary-target-tokens 750 --target-max-tokens "$t" ${ARGS:-} || [ $? -eq 3 ]
		python3 - "$src" "$t" "$out/m.json" "$out/tally" <<'PY'
import json, sys
src, t, path, tally = sys.argv[1:5]
r = json.load(open(path))["retention"]
row = [r["regions"], r["tool_names"]["kept"], r["tool_names"]["named"], r["paths_commands"]["kept"], r["paths_commands"]["named"]]
open(tally, "a").write(" ".join(map(str, row)) + "\n")
def f(k, n):
    return "-" if n == 0 else "%d/%d %.1f%%" % (k, n, 100 * k / n)
print("%-62s %6s %7d %18s %22s" % (src, t, row[0], f(row[1], row[2]), f(row[3], row[4])))
PY
	done
	python3 - "$t" "$out/tally" <<'PY'
import sys
t, tally = sys.argv[1:3]
s = [0] * 5
for line in open(tally):
    for i, v in enumerate(line.split()):
        s[i] += int(v)
def f(k, n):
    return "-" if n == 0 else "%d/%d %.1f%%" % (k, n, 100 * k / n)
print("%-62s %6s %7d %18s %22s\n" % ("all", t, s[0], f(s[1], s[2]), f(s[3], s[4])))
PY
done
echo "# load: $(cut -d' ' -f1-3 /proc/loadavg)"
