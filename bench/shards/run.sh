#!/usr/bin/env bash
# run.sh [SIZE_MB]   (default 300; REPS=3 rounds)
#
# The cost of scale: on the end-to-end corpus of
# bench/e2e (one JSONL file of SIZE_MB, generated if missing), in
# interleaved rounds:
#   one task   compress --workers 2 --target-task-size 1TiB: the whole file
#              is one task (no task bookkeeping beyond one marker)
#   default    compress --workers 2: default task size (256 MiB)
#   2 shards   two processes at once (--workers 1 each), then merge
#   4 shards   four processes, two at a time (--workers 1), then merge
#              (shards split the file in tasks of SHARD_TASK, default
#              32MiB, so that each has work on a corpus of a few hundred MB)
#   1 MiB      compress --workers 2 --target-task-size 1MiB (many tasks)
# Each row: wall time from the first start to the end of the merge, CPU
# time (user+system) summed over every process, the largest peak RSS of
# any process, the number of tasks. Outputs are compared with cmp: every
# way must write the same bytes. See bench/README.md, "Tasks, shards and
# merge".
set -euo pipefail
size=${1:-300}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
out=bench/out/shards
mkdir -p "$out"
go build -o "$out/trajcompress" ./cmd/trajcompress
tc=$out/trajcompress
corpus=$out/corpus.jsonl
if [ ! -s "$corpus" ]; then
	"$tc" fixtures --output "$corpus" --count $((size * 1000000 / 30000)) --seed 7 --profile mix --median-tokens 6000 --p99-tokens 60000
fi
echo "# $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), corpus $(stat -c %s "$corpus") bytes"

# one NAME ARGS...: one timed process, its figures appended to $out/NAME.t
one() {
	local name=$1
	shift
	/usr/bin/time -f "%e %U %S %M" -a -o "$out/$name.t" "$tc" "$@" >/dev/null 2>&1 || [ $? -eq 3 ]
}

# row NAME: wall (first start to last end), CPU summed, max RSS, from $out/NAME.t
row() {
	awk -v name="$1" -v wall="$2" -v tasks="$3" '/^[0-9.]+ [0-9.]+ [0-9.]+ [0-9]+$/ {cpu += $2 + $3; if ($4 + 0 > rss) rss = $4 + 0} END {
		printf "%-10s wall %6.2f s  cpu %6.2f s  peak RSS %4.0f MB  tasks %s\n", name, wall, cpu, rss/1024, tasks }' "$out/$1.t"
}

now() { date +%s.%N; }
tasks_of() { # tasks a setting makes: from the run directory's manifest, read before the merge
	sed -n 's/.*"tasks": \([0-9]*\).*/\1/p' "$out/.$1.tc-run/run.json" 2>/dev/null || echo "?"
}

for rep in $(seq "${REPS:-3}"); do
	echo "## round $rep"
	for setting in onetask default shards2 shards4 small; do
		rm -rf "$out/$setting" "$out/$setting"_* "$out/.$setting".* "$out/$setting.t"
		sleep "${SETTLE:-3}"
		o=$out/$setting
		common=(compress --quiet --input "$corpus" --output "$o" --metrics "$o.metrics.json")
		t0=$(now)
		case $setting in
		onetask) one "$setting" "${common[@]}" --workers 2 --target-task-size 1TiB; tasks=1 ;;
		default) one "$setting" "${common[@]}" --workers 2; tasks=$(( ($(stat -c %s "$corpus") + (256 << 20) - 1) / (256 << 20) )) ;;
		small) one "$setting" "${common[@]}" --workers 2 --target-task-size 1MiB; tasks=$(( ($(stat -c %s "$corpus") + (1 << 20) - 1) / (1 << 20) )) ;;
		shards2)
			one "$setting" "${common[@]}" --workers 1 --target-task-size "${SHARD_TASK:-32MiB}" --shard 0 --num-shards 2 &
			one "$setting" "${common[@]}" --workers 1 --target-task-size "${SHARD_TASK:-32MiB}" --shard 1 --num-shards 2 &
			wait
			tasks=$(tasks_of "$setting")
			one "$setting" merge --quiet --output "$o" ;;
		shards4)
			for pair in "0 1" "2 3"; do
				for i in $pair; do one "$setting" "${common[@]}" --workers 1 --target-task-size "${SHARD_TASK:-32MiB}" --shard "$i" --num-shards 4 & done
				wait
			done
			tasks=$(tasks_of "$setting")
			one "$setting" merge --quiet --output "$o" ;;
		esac
		wall=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }')
		row "$setting" "$wall" "$tasks" | tee -a "$out/rows.txt"
		if [ "$setting" != onetask ]; then
			cmp -s "$out/onetask" "$o" && cmp -s "$out/onetask_rejects.jsonl" "${o}_rejects.jsonl" || echo "  OUTPUT DIFFERS from onetask"
		fi
	done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
