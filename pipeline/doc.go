// Package pipeline compresses trajectories: one record at a time with
// [Compressor.Compress], and a whole stream with [Run].
//
// Compress is a sequence of named steps (compress.go): decode the record
// (traj), measure each turn (tokenize, through a memo), plan the region and,
// in alternation mode, place the summary (both decided by the pure core,
// snap), summarize the region ([summary.Summarizer]), assemble the new
// turns, account for their tokens and settle the outcome, encode. The
// per-record [metrics.Observation] and compression_metrics value are built
// with package metrics. Every input record gets exactly one outcome; a
// record that cannot be read is a [Reject], never an error. Compress
// returns an error only when the whole run must stop (context cancelled,
// fatal summarizer error).
//
// Concurrency lives here and nowhere else, in one idiom: an errgroup whose
// reader queues a one-slot result channel per record in input order, a
// goroutine per queued record, and one writer that drains the queue in
// order (restic's ordered fan-out). The queue's capacity bounds the
// records in flight, so memory does not grow with the input; a CPU
// semaphore bounds tokenizing work to Config.Workers, and is released while
// a remote summarizer waits, so the network and the CPUs overlap. Output is
// byte-identical for any number of workers.
package pipeline
