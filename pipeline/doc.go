// Package pipeline compresses trajectories: one record at a time with
// [Compressor.Compress], and a whole stream with [Run].
//
// Compress decodes a record (traj), counts each turn (tokenize, through a
// memo), plans with the pure core (snap), asks the [summary.Summarizer] for
// the chosen region, splices the summary in, recounts, and settles the
// outcome. Every input record gets exactly one outcome; a record that
// cannot be read is a [Reject], never an error. Compress returns an error
// only when the whole run must stop (context cancelled, fatal summarizer
// error).
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
