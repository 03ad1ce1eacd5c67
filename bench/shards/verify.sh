#!/usr/bin/env bash
# verify.sh OLD_REV [COUNT]   (REPS=5 rounds)
#
# The cost of verified reuse: a merge, and a resume of a run whose every
# task is done, re-read each segment a task wrote (its hash and its lines)
# before they reuse it. On a corpus of COUNT records (default 50,000, from
# `fixtures --profile coding`, generated if missing), each build (OLD_REV,
# before verification, and the working tree) runs two shards at once
# (--workers 1, 32 MiB tasks), and its run directory is kept; then, in
# interleaved rounds, a copy of it is merged (`merge`), and a copy is
# resumed (`compress` without --shard: every task is done, so the run
# verifies and assembles). Each row: the median over the rounds of wall
# and CPU (user+system) seconds, and peak RSS. The copies were just
# written, so the segments are read from the page cache. The merged
# outputs of the two builds are compared with cmp. See bench/README.md,
# "Verified reuse".
set -euo pipefail
old_rev=${1:?usage: verify.sh OLD_REV [COUNT]}
count=${2:-50000}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
out=bench/out/verify
mkdir -p "$out"
go build -o "$out/new" ./cmd/trajcompress
rm -rf "$out/oldsrc"
git archive --prefix=oldsrc/ "$old_rev" | tar -x -C "$out"
(cd "$out/oldsrc" && go build -o ../old ./cmd/trajcompress)
rm -rf "$out/oldsrc"
corpus=$out/corpus.jsonl
if [ ! -s "$corpus" ]; then
	"$out/new" fixtures --output "$corpus" --count "$count" --seed 7 --profile coding --median-tokens 1500 --p99-tokens 15000 >/dev/null
fi
echo "# $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), corpus $(stat -c %s "$corpus") bytes, old $old_rev"

# ok: exit 0 or 3 (partial: the corpus has no rejects, but say so rather than fail)
ok() { "$@" || [ $? -eq 3 ]; }

# place B: removes what build B's run wrote, and puts a copy of its
# finished shards' run directory in place.
place() {
	rm -rf "$out/$1.jsonl" "$out/$1"_* "$out/.$1.jsonl.tc-run"
	cp -a "$out/$1.saved" "$out/.$1.jsonl.tc-run"
}

for b in old new; do
	rm -rf "$out/$b.saved" "$out/.$b.jsonl".*
	common=(compress --quiet --input "$corpus" --output "$out/$b.jsonl" --metrics "$out/${b}_metrics.json" --workers 1 --target-task-size 32MiB)
	ok "$out/$b" "${common[@]}" --shard 0 --num-shards 2 &
	ok "$out/$b" "${common[@]}" --shard 1 --num-shards 2 &
	wait
	cp -a "$out/.$b.jsonl.tc-run" "$out/$b.saved"
done
echo "# run directory: $(du -sb "$out/new.saved" | cut -f1) bytes, $(ls "$out/new.saved/tasks" | wc -l) tasks"

rm -f "$out"/*.t
for rep in $(seq "${REPS:-5}"); do
	for b in old new; do
		place "$b"
		sync
		/usr/bin/time -f "%e %U %S %M" -a -o "$out/$b.merge.t" "$out/$b" merge --quiet --output "$out/$b.jsonl" >/dev/null 2>&1 || [ $? -eq 3 ]
		[ "$rep" = 1 ] && cp "$out/$b.jsonl" "$out/$b.merged"
		place "$b"
		sync
		/usr/bin/time -f "%e %U %S %M" -a -o "$out/$b.resume.t" "$out/$b" compress --quiet --input "$corpus" --output "$out/$b.jsonl" --metrics "$out/${b}_metrics.json" --workers 1 --target-task-size 32MiB >/dev/null 2>&1 || [ $? -eq 3 ]
	done
done
cmp "$out/old.merged" "$out/new.merged" && echo "# merged outputs identical ($(stat -c %s "$out/new.merged") bytes)"
# median: the middle value of a column of numbers
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
for what in merge resume; do
	for b in old new; do
		t=$out/$b.$what.t
		printf "%-12s wall %s s  cpu %s s  peak RSS %s MB   (wall/cpu each round:%s)\n" "$b $what" \
			"$(awk '{print $1}' "$t" | median)" "$(awk '{printf "%.2f\n", $2+$3}' "$t" | median)" \
			"$(awk '{print int($4/1024)}' "$t" | sort -n | tail -1)" "$(awk '{printf " %.2f/%.2f", $1, $2+$3}' "$t")"
	done
done
