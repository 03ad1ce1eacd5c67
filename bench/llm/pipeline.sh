#!/usr/bin/env bash
# End-to-end LLM throughput: `trajcompress compress
# --summarizer llm` on a generated corpus in which nearly every record
# needs a summary, against bench/mockllm on loopback.
#
#   bench/llm/pipeline.sh [latency=200ms] [error-rate=0] [records=6400] [max-concurrent=64]
#
# Prints requests/s (the metrics' total_api_calls over the run's wall
# time) against the ideal max_concurrent ÷ latency, and checks that every
# record is accounted for: records_in = records_out + records_rejected and
# no summary_failed. The cache is off so every record makes its requests.
set -euo pipefail
latency=${1:-200ms}; rate=${2:-0}; n=${3:-6400}; conc=${4:-64}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
out=bench/out/llm
mkdir -p "$out"
go build -o "$out/mockllm" ./bench/mockllm
go build -o "$out/trajcompress" ./cmd/trajcompress
corpus="$out/corpus-$n.jsonl"
[ -s "$corpus" ] || "$out/trajcompress" fixtures --output "$corpus" --count "$n" --seed 11 --profile coding \
  --median-tokens 12000 --p99-tokens 30000
"$out/mockllm" -latency "$latency" -error-rate "$rate" -seed 1 -retry-after 1 >"$out/url" 2>"$out/mock.err" &
mock=$!
trap 'kill "$mock" 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -s "$out/url" ] && break; sleep 0.05; done
url=$(head -1 "$out/url")
cat > "$out/config.yaml" <<YAML
summarization:
  method: llm
  base_url: $url
  api_key_env: MOCK_KEY
  model: mock
  max_retries: 5
  retry_delay: 0.2
processing:
  max_concurrent_requests: $conc
YAML
echo "# $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); mockllm latency $latency, error rate $rate, $n records, max_concurrent_requests $conc"
start=$(date +%s.%N)
MOCK_KEY=k "$out/trajcompress" compress --quiet --workers 2 --input "$corpus" --output "$out/out.jsonl" \
  --config "$out/config.yaml" --cache-dir - --target-max-tokens 6000 --summary-target-tokens 300 \
  --metrics "$out/metrics.json" || [ $? -eq 3 ]
end=$(date +%s.%N)
python3 - "$out/metrics.json" "$start" "$end" "$conc" "$latency" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); start, end, conc = float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
lat = sys.argv[5]; lat = float(lat[:-2]) / 1000 if lat.endswith("ms") else float(lat[:-1])
wall = end - start; calls = m["summarization"]["total_api_calls"]; o = m["outcomes"]
ideal = conc / lat
print(f"wall {wall:.1f} s, {calls} requests, {calls / wall:.1f} req/s = {100 * calls / wall / ideal:.1f}% of ideal {ideal:.0f}")
print(f"records in {o['records_in']} = out {o['records_out']} + rejected {o['records_rejected']}: {o['records_in'] == o['records_out'] + o['records_rejected']}")
print(f"compressed {o['compressed'] + o['compressed_over_limit']}, summary_failed {o['summary_failed']}, skipped {o['skipped_under_target']}, uncompressible {o['uncompressible']}")
print("retries by cause:", m["summarization"].get("retries_by_cause", {}))
PY
