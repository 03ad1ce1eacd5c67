// Package report renders the metrics of a compress run as one
// self-contained HTML page: the headline figures, the token-length
// distribution before and after on one log-scaled chart with the target,
// the outcomes and uncompressible reasons, the per-source breakdown, the
// worst cases (given the run's outcomes) and, given a baseline's metrics,
// the checks of package check with their bounds and verdicts and the two
// distributions overlaid.
//
// Contract: [Render] is a pure function of its [Input] — the metrics JSON,
// optionally a baseline's and the rules to apply, optionally the worst
// cases ([Worst], fed by compress as records go by or by [ReadOutcomes]
// from an --outcomes file) — to HTML bytes; the same input gives the same
// bytes. It needs neither the outputs nor the inputs: every figure is read
// from the metrics (counts and totals as they are; the length bins are
// exact sums of the metrics' histogram buckets, see metrics.Hist), so a
// report for ten million records is as small and opens as fast as one for
// two hundred. The page holds no script and loads nothing (a
// Content-Security-Policy meta tag forbids any request); its charts are
// inline SVG with a table of the same figures under each, it follows
// prefers-color-scheme, fits a phone's width, and prints.
//
// Metrics of older versions, without histograms or groups, render with a
// note saying what is missing. Nothing here does I/O except writing to
// and reading from the io.Writer and io.Reader a caller passes; [Worst] is
// not safe for concurrent use.
package report
