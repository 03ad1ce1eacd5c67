// Package pipeline compresses trajectories: one record at a time with
// [Compressor.Compress], and a whole stream with [Run].
//
// Compress is a sequence of named steps (their order is compressRecord, in
// compress.go; each step has the file of its name): redact the line, decode
// the record (traj, decode.go), count its images (imagetok, by
// Options.Counting.ImageRule, images.go), measure each turn (tokenize,
// through a memo; or the whole record through Options.Counting.Template,
// template.go), plan the region and, in alternation mode, place the summary
// (both decided by the pure core, snap; plan.go), run the prepass, summarize
// the region ([summary.Summarizer], summarize.go), assemble the new turns,
// account for their tokens and settle the outcome, encode (assemble.go). The
// per-record [metrics.Observation] and compression_metrics value are built
// with package metrics. Every input record gets exactly one outcome; a
// record that cannot be read is a [Reject], never an error. Compress returns
// an error only when the whole run must stop (context cancelled, fatal
// summarizer error). [Run] also rejects, as output_schema, a record its Sink
// refuses with an [Unfit] error (a row the output's schema cannot hold): a
// per-record error, never the end of the run.
//
// A record's state is cut by the step that writes it, one small struct
// each, held by the record on its way (compress.go): input (the line,
// which redact, decode and repair rewrite), the decoded traj.Record, the
// observation, imageState (countImages), measured (measure; the prepass
// replaces it whole when it rewrites turns), planned (planRegion and
// place: the region, the planner's adjustment, the reserve and the noticed
// texts) and templateState (the templated counts' counter, cache of
// rendered stretches, and the run's stop). What a summarised region makes
// of the record is a try: a value one function makes whole (the summary,
// the assembly, its count and outcome) and nothing changes after. With a
// chat template, a try whose rendered result is over target is planned
// again with a larger region (the refit loop, summarizeRegion): the loop
// holds the last try the template rendered and its own count of refits
// and overshoot (refits, which the planner's budget is lowered by), so
// nothing of the record is saved and restored; encode writes the try kept
// into the observation, with the summarizer's calls of every try.
//
// The settings, [Options], are cut the same way: one struct per concern,
// each matching option groups of the command line (package config, which
// pipeline does not import; job/jobcore maps a config onto them).
// [Counting] is how a record is read and counted (config's records,
// tokenizer, template and images groups), [Trainer] what the trainer does
// to a row (the trainer and repair groups), [Summarizing] how a region's
// summary is made (the summarizer group), [Placement] where the summary
// goes and the notice of it (the placement group). The budget, the
// prepass, the redactor, the group-by field and the per-record metrics and
// dry-run switches stay fields of Options itself. No struct of pipeline
// has more than 12 fields (internal/archtest checks it).
//
// It imports the packages of one record and no more: traj, internal/jsonx,
// redact, tokenize, imagetok (the images of a record and what each costs
// the model: the only files it reads are the headers of local images a
// record names, through imagetok), snap, prepass, summary, metrics,
// outcome, trainview (a record as the trainer's chat template sees
// it) and internal/crash (a panic in any of its goroutines is returned as
// a crash error, ending the run as a failure, never the process). Files are not its business: records come in through a [Source] and go out through
// a [Sink] (package format's readers and writers are both), so pipeline
// never imports format, and the caller (job, the Beam pipeline) opens,
// names and commits the files.
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
