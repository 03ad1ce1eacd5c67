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
// order (restic's ordered fan-out). [Run] owns every limit on work in
// flight and sizes it from [Config]: the queue's capacity bounds the
// records in flight (InFlight) and a weighted semaphore the bytes they hold
// (InFlightBytes), so memory does not grow with the input; a CPU semaphore
// bounds tokenizing, planning and assembling to Workers, and is released
// while a remote summarizer (one whose Remote method says so) waits, so the
// network and the CPUs overlap; a network semaphore, handed to the
// summarizer in each request, bounds its requests in flight to Network.
// [Compressor] holds no limits of its own. Output is byte-identical for any
// number of workers.
package pipeline
