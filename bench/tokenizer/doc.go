// Package tokenizer holds the tokenizer benchmark: the corpus
// it runs on (Corpus), Go benchmarks of tokenize.Encoding.Count on one and
// two goroutines (tokenizer_test.go), and the tokbench command plus run.sh,
// which compare against npm tiktoken on the same corpus and check the
// linear-time, start-up and memory targets. Results go to bench/README.md.
//
// Corpus reads files and returns an error naming the file and line on bad
// input; it holds no state and is safe for concurrent use.
package tokenizer
