#!/usr/bin/env bash
# Throughput benchmark of the LLM summarizer client against bench/mockllm.
# Usage: bench/llm/run.sh [latency=200ms] [error-rate=0] [n=3200] [max-concurrent=64]
# Run from anywhere; builds both commands into a temp dir.
set -euo pipefail
latency=${1:-200ms}; rate=${2:-0}; n=${3:-3200}; conc=${4:-64}
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'kill "$mock_pid" 2>/dev/null || true; rm -rf "$tmp"' EXIT
cd "$root"
go build -o "$tmp/mockllm" ./bench/mockllm
go build -o "$tmp/llmbench" ./bench/llm
"$tmp/mockllm" -latency "$latency" -error-rate "$rate" -seed 1 -retry-after 1 >"$tmp/url" 2>"$tmp/mock.err" &
mock_pid=$!
for _ in $(seq 100); do [ -s "$tmp/url" ] && break; sleep 0.05; done
url=$(head -1 "$tmp/url")
echo "mockllm at $url (latency $latency, error rate $rate); $n regions, max_concurrent_requests $conc"
status=0
"$tmp/llmbench" -url "$url" -n "$n" -max-concurrent "$conc" -latency "$latency" || status=$?
kill -INT "$mock_pid"; wait "$mock_pid" || true
cat "$tmp/mock.err"
exit $status
