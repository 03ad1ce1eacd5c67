#!/usr/bin/env bash
# LLM summaries through OpenAI Batch: export the requests, run the batch,
# import the answers, compress. No request is sent live.
#
# 1. --batch-export writes every summary request the run needs as an OpenAI
#    Batch input file and exits (no records written).
# 2. The batch runs elsewhere: upload it to OpenAI (Files API, purpose
#    "batch"; POST /v1/batches with endpoint /v1/chat/completions and
#    completion_window 24h) and download the output file when it completes,
#    or run it on your own GPUs with `vllm run-batch -i requests.jsonl -o
#    results.jsonl --model …`. Here bench/mockllm answers it offline, as
#    vllm run-batch would (its summaries are canned text, not a model's).
# 3. --batch-import loads the answers into the summary cache, each checked as
#    a live answer would be, and the run compresses with them: every region
#    is answered, so the endpoint is never called and the key never sent.
. "$(dirname "$0")/../lib.sh"

here=$(dirname "$0")
data=$REPO/fixtures/example/agent_runs.jsonl.gz
export OPENAI_API_KEY=${OPENAI_API_KEY:-sk-example-never-sent}
run() {
	"$TRAJCOMPRESS" compress --quiet --input "$data" --config "$here/trajectory_compression.yaml" \
		--output "$WORK/out.jsonl" --cache-dir "$WORK/cache" "$@"
}

# 1. Export. Exit 3: the example's 8 lines that are not trajectories are
# rejected (see out_rejects.jsonl); they need no summary.
rc=0
run --batch-export "$WORK/requests.jsonl" || rc=$?
[ "$rc" -eq 3 ]
[ "$(wc -l <"$WORK/requests.jsonl")" -eq 31 ]

# 2. The batch (mockllm stands in for OpenAI or vllm run-batch).
MOCKLLM=${MOCKLLM:-$REPO/bin/mockllm}
[ -x "$MOCKLLM" ] || (cd "$REPO" && go build -o "$MOCKLLM" ./bench/mockllm)
"$MOCKLLM" -run-batch "$WORK/requests.jsonl" -batch-output "$WORK/results.jsonl" -batch-errors "$WORK/errors.jsonl"

# 3. Import and compress.
rc=0
run --batch-import "$WORK/results.jsonl" || rc=$?
[ "$rc" -eq 3 ]
# 31 regions summarised from the cache the import filled, no request sent.
[ "$(json_number "$WORK/out_metrics.json" total_api_calls)" = 0 ]
[ "$(json_number "$WORK/out_metrics.json" cache_hits)" = 31 ]
expect_line "$WORK/out_metrics.json" '"compressed": [1-9]'
echo "batch: ok"
