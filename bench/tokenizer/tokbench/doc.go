// Command tokbench supports bench/tokenizer/run.sh, run_hf.sh and
// onepiece.sh:
//
//	tokbench corpus FILE       write the benchmark corpus as a JSON array of strings
//	tokbench count FILE        compare per-text counts with FILE.<enc>.counts (from
//	                           ref.mjs) when present; print tokens and MB/s
//	tokbench hf FILE           the same for the tokenizer.json models (ref_hf.mjs)
//	                           and o200k_base
//	tokbench linear [TOK...]   time one-piece inputs of 1 MB (after timing the
//	                           backtracking encoder's tables apart) for o200k_base,
//	                           cl100k_base and the tokenizers named; exit 1 if one
//	                           takes >= 1 s, mark those over 0.1 s
//	tokbench linear10 [TOK...] the same with 10 MB inputs (limit 10 s, mark 1 s)
//	tokbench load TOK...       load each tokenizer in a fresh process, 5 times;
//	                           print the median
//	tokbench startup [ENC]     run a fresh process that calls New(ENC) and counts
//	                           one string, 5 times; print median wall time and max RSS
//
// Errors go to stderr with exit status 1. It is a benchmark driver: it
// reads only the corpus file it is given and the shared real data, and
// starts child processes of itself for the start-up probe.
package main
