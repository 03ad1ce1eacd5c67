#!/usr/bin/env bash
# sidebyside.sh OLD_BIN NEW_BIN [SIZE_MB]   (PAIRS=5 by default)
#
# End-to-end comparison of two trajcompress builds on the same corpus, in
# interleaved pairs (old then new, each after a pause, each to a fresh
# output path), so that the drift of a shared machine hits both alike:
# `compress --quiet --workers 2` on the 1x corpus of run.sh (generated if
# missing), wall time and peak RSS from /usr/bin/time, per pair and the
# median of new/old. Outputs of the two builds are compared with cmp once.
# Used for "throughput and RSS stay within 5%" checks of refactorings.
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
echo "# $(date -u +%FT%TZ) $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg), corpus $(stat -c %s "$corpus") bytes"
timed() { # timed BIN TAG → "secs rss_kb"
	rm -f "$out/sbs_$2.out.jsonl"
	sleep "${SETTLE:-3}"
	/usr/bin/time -f "%e %M" -o "$out/sbs_$2.time" "$1" compress --quiet --workers 2 \
		--input "$corpus" --output "$out/sbs_$2.out.jsonl" --metrics "$out/sbs_$2.metrics.json" || [ $? -eq 3 ]
	tail -1 "$out/sbs_$2.time"
}
: > "$out/sbs_pairs.txt"
for i in $(seq "${PAIRS:-5}"); do
	read -r so ro < <(timed "$old" old)
	read -r sn rn < <(timed "$new" new)
	awk -v i="$i" -v so="$so" -v sn="$sn" -v ro="$ro" -v rn="$rn" 'BEGIN {
		printf "pair %d: old %.2f s %.0f MB, new %.2f s %.0f MB, time new/old %.3f, RSS new/old %.3f\n", i, so, ro/1024, sn, rn/1024, sn/so, rn/ro }' | tee -a "$out/sbs_pairs.txt"
done
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "median time new/old $(sed -n 's/.*time new\/old \([0-9.]*\).*/\1/p' "$out/sbs_pairs.txt" | median)," \
	"median RSS new/old $(sed -n 's/.*RSS new\/old \([0-9.]*\).*/\1/p' "$out/sbs_pairs.txt" | median)," \
	"load after: $(cut -d' ' -f1-3 /proc/loadavg)"
cmp "$out/sbs_old.out.jsonl" "$out/sbs_new.out.jsonl" && echo "outputs identical (cmp)" || echo "outputs DIFFER"
