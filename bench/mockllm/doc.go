// Command mockllm serves an OpenAI-compatible chat.completions endpoint for
// benchmarks of the LLM summarizer, with configurable latency and a seeded
// mix of transient failures (see package
// github.com/trajcompress/trajcompress/bench/mockllm/mock).
//
// Usage:
//
//	mockllm [-addr 127.0.0.1:0] [-latency 200ms] [-error-rate 0.1] [-seed 1]
//	        [-context-limit 0] [-context-style vllm] [-retry-after 1] [-api-key KEY]
//
// It prints the base URL ("http://127.0.0.1:PORT/v1") on the first line of
// stdout, serves until SIGINT or SIGTERM, and then prints the number of
// requests answered by kind to stderr. Exit status: 0 after a signal, 1 if
// it cannot listen, 2 on a usage error. The server also speaks OpenAI's
// Files and Batches routes (upload a Batch input file, run it, download
// the output and error files).
//
//	mockllm -run-batch requests.jsonl -batch-output results.jsonl -batch-errors errors.jsonl
//
// answers a Batch input file offline instead, as `vllm run-batch` does.
package main
