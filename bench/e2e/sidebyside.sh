#!/usr/bin/env bash
# sidebyside.sh OLD_BIN NEW_BIN [SIZE_MB]   (PAIRS=5 by default)
#
# End-to-end comparison of two trajcompress builds on the same corpus, in
# interleaved pairs (old then new, each after a pause, each to a fresh
# output path), so that the drift of a shared machine hits both alike:
# `compress --quiet --workers 2` on the 1x corpus of run.sh (generated if
# missing), wall time and peak RSS from /usr/bin/time, per pair and the
# median of new/old, and CPU time (user + system) per pair: on a machine
# busy with other work wall time mostly measures the queue, CPU time much
# less. Outputs of the two builds are compared with cmp once.
# Used for "throughput and RSS stay within 5%" checks of refactorings.
# OLD_ARGS and NEW_ARGS add compress flags to one side, to compare two
# settings of one build: OLD_ARGS="--config off.yaml" sidebyside.sh B B.
set -euo pipefail
old=$(realpath "$1"); new=$(realpath "$2"); size=${3:-500}
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$root/bench/out/e2e
mkdir -p "$out"
corpus=$out/corpus1x.jsonl
if [ ! -s "$corpus" ]; then
	count=$(( size * 1000000 / 30000 ))
	"$new" fixtures --output "$corpus" --count "$count" --seed 7 --profile mix --median-tokens 6000 --p99-tokens 60000
fi
echo "# $(date -u +%FT%TZ) $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg), corpus $(stat -c %s "$corpus") bytes, old args: ${OLD_ARGS:-none}, new args: ${NEW_ARGS:-none}"
timed() { # timed BIN TAG ARGS → "secs rss_kb cpu_secs"
	rm -f "$out/sbs_$2.out.jsonl"
	sleep "${SETTLE:-3}"
	# shellcheck disable=SC2086 # ARGS are flags, split on purpose
	/usr/bin/time -f "%e %M %U %S" -o "$out/sbs_$2.time" "$1" compress --quiet --workers 2 $3 \
		--input "$corpus" --output "$out/sbs_$2.out.jsonl" --metrics "$out/sbs_$2.metrics.json" || [ $? -eq 3 ]
	tail -1 "$out/sbs_$2.time" | awk '{ printf "%s %s %.2f\n", $1, $2, $3 + $4 }'
}
: > "$out/sbs_pairs.txt"
for i in $(seq "${PAIRS:-5}"); do
	read -r so ro co < <(timed "$old" old "${OLD_ARGS:-}")
	read -r sn rn cn < <(timed "$new" new "${NEW_ARGS:-}")
	awk -v i="$i" -v so="$so" -v sn="$sn" -v ro="$ro" -v rn="$rn" -v co="$co" -v cn="$cn" -v load="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN {
		printf "pair %d: old %.2f s %.0f MB %.2f cpu-s, new %.2f s %.0f MB %.2f cpu-s, time new/old %.3f, RSS new/old %.3f, cpu new/old %.3f, load %s\n", i, so, ro/1024, co, sn, rn/1024, cn, sn/so, rn/ro, cn/co, load }' | tee -a "$out/sbs_pairs.txt"
done
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "median time new/old $(sed -n 's/.*time new\/old \([0-9.]*\).*/\1/p' "$out/sbs_pairs.txt" | median)," \
	"median RSS new/old $(sed -n 's/.*RSS new\/old \([0-9.]*\).*/\1/p' "$out/sbs_pairs.txt" | median)," \
	"median cpu new/old $(sed -n 's/.*cpu new\/old \([0-9.]*\).*/\1/p' "$out/sbs_pairs.txt" | median)," \
	"load after: $(cut -d' ' -f1-3 /proc/loadavg)"
cmp "$out/sbs_old.out.jsonl" "$out/sbs_new.out.jsonl" && echo "outputs identical (cmp)" || echo "outputs DIFFER"
