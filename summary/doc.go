// Package summary defines how a region of a trajectory becomes one summary
// turn: the [Summarizer] interface the pipeline calls, and the deterministic,
// offline summarizer that is the default.
//
// A summary starts with [Prefix] exactly once. A region that holds a
// summary written before (our own output compressed again; [IsSummary])
// gets one updated summary: [Deterministic] carries the earlier one's lines
// over (tools merged, turn lines marked "[earlier …]"), package llm asks
// the model to fold it in; neither quotes a summary inside another.
// [Retention] says how much of a region's tool names, paths and commands a
// summary text names, for the metrics. Apart from the summarizers' own
// work the package is pure: no I/O, no goroutines.
package summary
