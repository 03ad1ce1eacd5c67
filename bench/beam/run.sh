#!/usr/bin/env bash
# run.sh: the Beam pipeline on prism against the pool (see bench/README.md, "Beam").
#
#   [PAIRS=5] bench/beam/run.sh [SIZE_MB]      (default 500)
#
# Generates the e2e corpus (bench/e2e/run.sh's generator and flags) of at
# least SIZE_MB of JSONL, then PAIRS times runs `trajcompress compress
# --workers 2` (the pool) and `trajcompress-beam` (prism, in process) on
# it, in alternating order, each under /usr/bin/time after a pause: wall
# time, CPU time (user + sys), peak RSS, and the load average before the
# run. After the first pair it checks that both wrote the same records (as
# multisets: sorted, hashed) and the same rejects. Outputs go to
# bench/out/beam (git-ignored).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
size=${1:-500}
pairs=${PAIRS:-5}
out=bench/out/beam
mkdir -p "$out"
exec > >(tee "$out/report.txt") 2>&1
echo "# $(date -u +%FT%TZ) $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg), corpus ${size} MB, commit $(git rev-parse --short HEAD)"

go build -o "$out/trajcompress" ./cmd/trajcompress
(cd beam && go build -o "../$out/trajcompress-beam" ./cmd/trajcompress-beam)

# As bench/e2e/run.sh: records average ~30 KB with these flags.
corpus="$out/corpus.jsonl"
count=$(( size * 1000000 / 30000 ))
while [ ! -s "$corpus" ] || [ "$(stat -c %s "$corpus")" -lt $(( size * 1000000 )) ]; do
  rm -f "$corpus"
  "$out/trajcompress" fixtures --output "$corpus" --count "$count" --seed 7 --profile mix \
    --median-tokens 6000 --p99-tokens 60000
  count=$(( count * 11 / 10 ))
done
ls -l "$corpus"

settle() { sleep "${SETTLE:-5}"; }

# run NAME: one timed run into a fresh output; prints "wall cpu rss_mb load".
run() {
  local name=$1 load
  rm -rf "$out/$name.out" "$out/$name.out.jsonl" "$out/$name".*.json "$out/$name".rejects.jsonl
  settle
  load=$(cut -d' ' -f1 /proc/loadavg)
  if [ "${name%%-*}" = pool ]; then
    /usr/bin/time -f "%e %U %S %M" -o "$out/$name.time" "$out/trajcompress" compress --quiet --workers 2 \
      --input "$corpus" --output "$out/$name.out.jsonl" --metrics "$out/$name.metrics.json" \
      --rejects "$out/$name.rejects.jsonl" || [ $? -eq 3 ]
  else
    /usr/bin/time -f "%e %U %S %M" -o "$out/$name.time" "$out/trajcompress-beam" \
      --input "$corpus" --output "$out/$name.out" 2>"$out/$name.log" || [ $? -eq 3 ]
  fi
  read -r wall user sys rsskb < <(tail -1 "$out/$name.time")
  echo "$wall $(echo "$user + $sys" | bc) $(( rsskb / 1024 )) $load"
}

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

: > "$out/pairs.txt"
echo "| pair | load before (pool, beam) | pool wall | pool CPU | pool RSS | beam wall | beam CPU | beam RSS | wall ratio | CPU ratio |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for i in $(seq 1 "$pairs"); do
  if [ $(( i % 2 )) -eq 1 ]; then
    p=$(run "pool-$i"); b=$(run "beam-$i")
  else
    b=$(run "beam-$i"); p=$(run "pool-$i")
  fi
  read -r pw pc pr pl <<<"$p"
  read -r bw bc br bl <<<"$b"
  echo "$i $pw $pc $pr $bw $bc $br" >> "$out/pairs.txt"
  printf "| %d | %s, %s | %s s | %s s | %s MB | %s s | %s s | %s MB | %.2f | %.2f |\n" \
    "$i" "$pl" "$bl" "$pw" "$pc" "$pr" "$bw" "$bc" "$br" "$(echo "$bw / $pw" | bc -l)" "$(echo "$bc / $pc" | bc -l)"
  if [ "$i" -eq 1 ]; then
    a=$(LC_ALL=C sort -S 1G "$out/pool-1.out.jsonl" | sha256sum | cut -c1-16)
    c=$(cat "$out"/beam-1.out/part-*.jsonl | LC_ALL=C sort -S 1G | sha256sum | cut -c1-16)
    r1=$(sha256sum < "$out/pool-1.rejects.jsonl" | cut -c1-16)
    r2=$(sed "s#\"file\":\"[^\"]*\"#\"file\":\"$corpus\"#" "$out/beam-1.out/rejects.jsonl" | sha256sum | cut -c1-16)
    echo "records (sorted) pool $a beam $c; rejects pool $r1 beam $r2; beam parts: $(ls "$out"/beam-1.out/part-*.jsonl | wc -l)"
    [ "$a" = "$c" ] && [ "$r1" = "$r2" ] || { echo "OUTPUTS DIFFER"; exit 1; }
  fi
done
for col in 2 3 4 5 6 7; do
  printf "%s " "$(cut -d' ' -f$col "$out/pairs.txt" | median)"
done | awk '{printf "median: pool %s s wall, %s s CPU, %s MB; beam %s s wall, %s s CPU, %s MB\n", $1, $2, $3, $4, $5, $6}'
echo "# end $(date -u +%FT%TZ), load: $(cut -d' ' -f1-3 /proc/loadavg)"
