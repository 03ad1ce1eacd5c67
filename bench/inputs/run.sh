#!/usr/bin/env bash
# run.sh OLD_BIN NEW_BIN [SIZE_MB]   (PAIRS=3 by default)
#
# What reading inputs as they really come costs.
# From the corpus of bench/e2e (generated if missing; the valid records
# only, so that every variant holds the same records) it writes the same
# records as JSONL (LF), JSONL with CRLF line ends, and one JSON array as
# LLaMA-Factory ships datasets (json.dump indent=2), then times
# `compress --quiet --workers 2` with /usr/bin/time (wall s, peak RSS):
# OLD and NEW on the LF file in interleaved pairs (the cost of the line
# rule and the UTF-8 check), and NEW on the CRLF file and on the array
# (streamed: its peak RSS must not grow with the array). Prints one line
# per run and the medians.
set -euo pipefail
old=$(realpath "$1"); new=$(realpath "$2"); size=${3:-300}
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$root/bench/out/inputs
mkdir -p "$out"
corpus=$out/corpus.jsonl
if [ ! -s "$corpus.done" ]; then
	count=$(( size * 1000000 / 30000 ))
	"$new" fixtures --output "$out/raw.jsonl" --count "$count" --seed 7 --profile mix --median-tokens 6000 --p99-tokens 60000
	python3 - "$out/raw.jsonl" "$out" <<'PY'
import json, sys
src, out = sys.argv[1], sys.argv[2]
recs = []
with open(src, encoding="utf-8") as f, open(out + "/corpus.jsonl", "w", encoding="utf-8", newline="") as lf, \
        open(out + "/corpus_crlf.jsonl", "w", encoding="utf-8", newline="") as crlf:
    for line in f:
        try:
            v = json.loads(line)
        except ValueError:
            continue
        if isinstance(v, dict):
            lf.write(line.rstrip("\n") + "\n")
            crlf.write(line.rstrip("\n") + "\r\n")
            recs.append(v)
with open(out + "/corpus.json", "w", encoding="utf-8") as f:
    json.dump(recs, f, indent=2, ensure_ascii=False)
PY
	rm -f "$out/raw.jsonl"; touch "$corpus.done"
fi
echo "# $(date -u +%FT%TZ) $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)"
ls -l "$out"/corpus.jsonl "$out"/corpus_crlf.jsonl "$out"/corpus.json | awk '{print "#", $5, $9}'
timed() { # timed BIN TAG INPUT EXT → "secs rss_kb"
	rm -f "$out/run_$2.$4"
	sleep "${SETTLE:-3}"
	/usr/bin/time -f "%e %M" -o "$out/run_$2.time" "$1" compress --quiet --workers 2 \
		--input "$3" --output "$out/run_$2.$4" --metrics "$out/run_$2.metrics.json" || [ $? -eq 3 ]
	tail -1 "$out/run_$2.time"
}
: > "$out/pairs.txt"
for i in $(seq "${PAIRS:-3}"); do
	read -r so ro < <(timed "$old" old "$corpus" jsonl)
	read -r sn rn < <(timed "$new" new "$corpus" jsonl)
	read -r sc rc < <(timed "$new" crlf "$out/corpus_crlf.jsonl" jsonl)
	read -r sa ra < <(timed "$new" array "$out/corpus.json" json)
	awk -v i="$i" -v so="$so" -v sn="$sn" -v ro="$ro" -v rn="$rn" -v sc="$sc" -v rc="$rc" -v sa="$sa" -v ra="$ra" 'BEGIN {
		printf "round %d: LF old %.2f s %.0f MB, LF new %.2f s %.0f MB (time new/old %.3f), CRLF new %.2f s %.0f MB, array new %.2f s %.0f MB\n",
			i, so, ro/1024, sn, rn/1024, sn/so, sc, rc/1024, sa, ra/1024 }' | tee -a "$out/pairs.txt"
done
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "median LF time new/old $(sed -n 's/.*time new\/old \([0-9.]*\).*/\1/p' "$out/pairs.txt" | median), load after: $(cut -d' ' -f1-3 /proc/loadavg)"
cmp "$out/run_old.jsonl" "$out/run_new.jsonl" && echo "LF outputs of OLD and NEW identical (cmp)"
cmp "$out/run_new.jsonl" "$out/run_crlf.jsonl" && echo "CRLF output identical to the LF one (cmp)"
python3 -c "
import json, sys
a = json.load(open('$out/run_array.json', encoding='utf-8'))
b = [json.loads(l) for l in open('$out/run_new.jsonl', encoding='utf-8')]
print('array output: %d records, equal to the LF output as JSON values: %s' % (len(a), a == b))"
