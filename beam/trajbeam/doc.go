// Package trajbeam is trajcompress as an Apache Beam pipeline (Go SDK),
// for runs beyond one machine on a runner people already operate:
// Dataflow, Flink or Spark through the portable job server, or prism on
// one machine.
//
// The contract: every record of the input gets exactly the treatment
// `trajcompress compress` gives it, because the pipeline runs the pool's
// per-record function, pipeline.Compressor.Compress, built from the
// config by jobcore.NewCompressor. Plain JSONL is read with Beam's textio
// (split at line starts by byte ranges); gzip JSONL, Parquet and Arrow
// through our readers (package format), a unit of work at a time (gzip
// cannot be split). The compressed records are written by the bundle
// that compressed them to a part file of its own — no shuffle of records
// — committed at the end only if the runner committed the bundle; the
// rejects, numbered as the pool numbers them, go to rejects.jsonl in
// input order; the metrics are a metrics.Summary per bundle, combined
// with a CombineFn whose coder is the Summary's exact state, and written
// as compress writes them, vouching for the files.
//
// What differs from compress: the output is a directory of JSONL part
// files whose order (across and within parts) is the runner's, so the
// records equal compress's as a multiset, not as a sequence; the metrics
// equal compress's but for the times and the list of output files (the
// input fingerprint is compress's, hashed by spans in parallel). The
// deterministic summarizer only.
//
// Apart from the Beam runtime, the package starts no goroutine and holds
// one shared value: a Compressor per config in each worker process (its
// token memo is shared, as the pool's workers share one).
package trajbeam
