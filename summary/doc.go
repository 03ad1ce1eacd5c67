// Package summary defines how a region of a trajectory becomes one summary
// turn: the [Summarizer] interface the pipeline calls, and the deterministic,
// offline summarizer that is the default.
package summary
