// Command llm is the throughput benchmark of the LLM summarizer client
// (summary/llm) against an OpenAI-compatible endpoint, normally the
// bench/mockllm command. It summarises -n synthetic regions from -callers
// goroutines through one Client and reports requests per second, the ideal
// rate (in-flight limit ÷ latency), retries by cause and lost records.
//
// A record is lost when Summarize returns neither a summary nor an error;
// a record whose retries ran out is counted as failed, not lost. The cache
// is disabled so every region costs requests.
//
// Usage (see bench/llm/run.sh):
//
//	LLM_BENCH_KEY=x llm -url http://127.0.0.1:PORT/v1 -n 3200 -max-concurrent 64 -latency 200ms
//
// Exit status: 0 when no record was lost and none failed, 1 otherwise, 2 on
// a usage error.
package main
