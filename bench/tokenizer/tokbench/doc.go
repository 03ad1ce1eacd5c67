// Command tokbench supports bench/tokenizer/run.sh:
//
//	tokbench corpus FILE       write the benchmark corpus as a JSON array of strings
//	tokbench count FILE        compare per-text counts with FILE.<enc>.counts (from
//	                           ref.mjs) when present; print tokens and MB/s
//	tokbench linear            time the linear-time cases; exit 1 if one takes >= 1 s
//	tokbench startup [ENC]     run a fresh process that calls New(ENC) and counts
//	                           one string, 5 times; print median wall time and max RSS
//
// Errors go to stderr with exit status 1. It is a benchmark driver: it
// reads only the corpus file it is given and the shared real data, and
// starts child processes of itself for the start-up probe.
package main
