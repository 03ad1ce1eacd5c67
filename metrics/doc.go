// Package metrics collects what happened to every record of a trajectory
// compression run as mergeable values, outside the algorithm, and renders the
// aggregate JSON report, the per-record --outcomes lines, the per-trajectory
// compression_metrics object and a short human table.
//
// The record path (pipeline.Compressor) fills in one [Observation] per input
// record with the methods of this package ([Observation.Measure],
// [Observation.Leave], [Observation.Settle], ...) and gets the
// compression_metrics value from [Observation.TrajectoryJSON]; pipeline.Run's
// ordered writer feeds each observation to the run's [Summary] for that
// input with [Summary.Observe], and the caller combines the per-input
// summaries with [Summary.Merge]. Merging is exact (integer sums, an exact
// fixed-point sum of ratios, maxima and [Hist] bucket counts), so the report
// does not depend on how records were split or in which order summaries are
// merged. Counters are sized and ordered by the outcome package's lists
// (outcome.All, outcome.AllReasons).
//
// The report ([Summary.Report]) keeps the peer's sections and keys in the
// peer's order (summary, tokens, turns, averages, summarization, processing;
// docs/peer.md §7) with the peer's rounding (Python round(x, n), see [Round]) and
// Python's float printing (see [Float]), then adds outcomes, distributions,
// groups and run. Where we differ from the peer: total_trajectories counts every
// non-rejected record, summary_failed ones included (the peer excluded its
// failed entries), and trajectories_still_over_limit counts every record
// written over target (compressed_over_limit, uncompressible,
// summary_failed).
//
// [Summary.MarshalState] and [Summary.UnmarshalState] carry a Summary's
// exact state (not the rounded report) between processes: each task of a
// sharded or resumed run keeps its state beside its outputs, and the merge
// of the states equals one process's Summary.
//
// Token distributions use a log-linear histogram with 128 sub-buckets per
// power of two ([Hist]): bounded memory, exact merge, exact max, quantile
// p = the value at rank ceil(p·N) with relative error at most 1/256. The
// report carries each histogram whole (distributions.tokens_*.histogram:
// count, max and the non-empty buckets as [low, count] pairs: at most 128
// per power of two of the counts, whatever the number of records), and
// [Hist.UnmarshalJSON]
// reads it back, so the metrics of several runs merge exactly and the HTML
// report draws the distributions from the metrics alone.
//
// The groups section is the per-source breakdown ([Groups]): outcome
// counts and token totals per input file ([Summary.Label]) or per value of
// a record field ([Observation.Group], [GroupName]), for at most
// [MaxGroups] names — the smallest in byte order, which keeps the
// breakdown exactly mergeable — and "other" for the rest.
//
// Contract: no package state; nothing here starts goroutines or does I/O
// except writing to the io.Writer a caller passes. [Summary] and [Hist] are
// not safe for concurrent use: one per goroutine, then Merge. Reports and
// observations are plain values. [Summary.Observe] panics on an outcome or
// uncompressible reason that package outcome does not define (a programming
// error);
// [Report.WriteJSON] returns encoding and write errors wrapped with
// "metrics:".
package metrics
