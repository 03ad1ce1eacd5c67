#!/usr/bin/env bash
# The prepass on the real data (bench/realdata.sh): for each real file and each
# target, `compress --prepass` (deterministic summaries, summary_target_tokens 750) and the metrics'
# prepass section: records over target the prepass looked at, records that fit by the prepass
# alone, records it changed, tokens each step saved; and the tokens after against the same run
# without --prepass.
#   bench/prepass/run.sh [TARGETS]     (default "15250 8000 4000"; extra compress flags in ARGS)
# Skips (exit 0) when the real data is absent. Needs python3 to read the metrics.
set -euo pipefail
# shellcheck source=bench/realdata.sh
. "$(dirname "$0")/../realdata.sh"
realdata prepass
printf '%-62s %6s %5s %5s %8s %10s %10s %10s %12s %12s\n' source target over fit changed duplicates digests arguments "tokens after" "without"
for t in ${1:-15250 8000 4000}; do
	: > "$out/tally"
	for f in "$real"/*/*.jsonl; do
		src=$(basename "$(dirname "$f")")/$(basename "$f")
		for mode in with without; do
			flag=--prepass
			[ "$mode" = with ] || flag=
			# shellcheck disable=SC2086 # flags
			"$out/trajcompress" compress --quiet $flag --input "$f" --output "$out/o.jsonl" --metrics "$out/$mode.json" \
				--summary-target-tokens 750 --target-max-tokens "$t" ${ARGS:-} || [ $? -eq 3 ]
		done
		python3 - "$src" "$t" "$out/with.json" "$out/without.json" "$out/tally" <<'PY'
import json, sys
src, t, w, wo, tally = sys.argv[1:6]
m, m0 = json.load(open(w)), json.load(open(wo))
p = m["prepass"]
s = p["tokens_saved"]
row = [p["records_considered"], p["records_fit_by_prepass"], p["records_changed"], s["duplicates"], s["digests"], s["arguments"],
       m["tokens"]["total_after"], m0["tokens"]["total_after"]]
open(tally, "a").write(" ".join(map(str, row)) + "\n")
print("%-62s %6s %5d %5d %8d %10d %10d %10d %12d %12d" % ((src, t) + tuple(row)))
PY
	done
	python3 - "$t" "$out/tally" <<'PY'
import sys
t, tally = sys.argv[1:3]
s = [0] * 8
for line in open(tally):
    for i, v in enumerate(line.split()):
        s[i] += int(v)
print("%-62s %6s %5d %5d %8d %10d %10d %10d %12d %12d\n" % (("all", t) + tuple(s)))
PY
done
echo "# load: $(cut -d' ' -f1-3 /proc/loadavg)"
