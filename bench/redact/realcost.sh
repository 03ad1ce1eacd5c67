#!/usr/bin/env bash
# Redaction's end-to-end cost on the real data: the JSONL/JSON files of ../shared/data/real
# concatenated (repeated) to about SIZE MB in a temporary directory (never in the repo), then
# `compress --workers 2` of one build with redaction on and off (config redaction.enabled: false),
# PAIRS interleaved pairs (off then on, a SETTLE s pause before each). The figure is CPU time
# (user + system, /usr/bin/time): on a shared machine wall time measures the queue.
# Usage: bench/redact/realcost.sh [BINARY]   (default: bin/trajcompress, built first)
# Env: PAIRS (10), SIZE (600), SETTLE (3), TMP (/tmp/trajcompress-realcost); CORPUS=FILE measures
# that file instead (the synthetic corpus of bench/e2e, say).
# Skips (exit 0) when ../shared/data/real is absent.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
real=$root/../shared/data/real
[ -n "${CORPUS:-}" ] || [ -d "$real" ] || { echo "no $real: skipped"; exit 0; }
bin=${1:-}
if [ -z "$bin" ]; then
	(cd "$root" && go build -o bin/trajcompress ./cmd/trajcompress)
	bin=$root/bin/trajcompress
fi
bin=$(realpath "$bin")
tmp=${TMP:-/tmp/trajcompress-realcost}
mkdir -p "$tmp"
corpus=${CORPUS:-$tmp/real.jsonl}
size=$(( ${SIZE:-600} * 1000000 ))
if [ -z "${CORPUS:-}" ] && { [ ! -s "$corpus" ] || [ "$(stat -L -c %s "$corpus")" -lt "$size" ]; }; then
	mapfile -t files < <(find "$real" -type f \( -name '*.jsonl' -o -name '*.json' \) | sort)
	: > "$corpus"
	while [ "$(stat -L -c %s "$corpus")" -lt "$size" ]; do cat "${files[@]}" >> "$corpus"; done
fi
printf 'redaction:\n  enabled: false\n' > "$tmp/off.yaml"
echo "# $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), corpus $(stat -L -c %s "$corpus") bytes, $bin"
timed() { # timed TAG ARGS... → cpu seconds
	local tag=$1; shift
	sleep "${SETTLE:-3}"
	/usr/bin/time -f "%e %U %S" -o "$tmp/$tag.time" "$bin" compress --quiet --workers 2 "$@" \
		--input "$corpus" --output "$tmp/$tag.out.jsonl" --metrics "$tmp/$tag.metrics.json" --overwrite >/dev/null || [ $? -eq 3 ]
	tail -1 "$tmp/$tag.time" | awk '{ printf "%.2f\n", $2 + $3 }'
}
: > "$tmp/pairs.txt"
for i in $(seq "${PAIRS:-10}"); do
	off=$(timed off --config "$tmp/off.yaml")
	on=$(timed on)
	awk -v i="$i" -v off="$off" -v on="$on" -v load="$(cut -d' ' -f1 /proc/loadavg)" \
		'BEGIN { printf "pair %d: off %.2f cpu-s, on %.2f cpu-s, on/off %.3f, load %s\n", i, off, on, on/off, load }' | tee -a "$tmp/pairs.txt"
done
sed -n 's/.*on\/off \([0-9.]*\).*/\1/p' "$tmp/pairs.txt" | sort -n |
	awk '{ a[NR] = $1 } END { m = NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2; printf "median on/off %.3f (%.3f-%.3f), %d pairs, load after %s\n", m, a[1], a[NR], NR, "'"$(cut -d' ' -f1-3 /proc/loadavg)"'" }'
