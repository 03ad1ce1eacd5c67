// Package outcome is the vocabulary of what becomes of an input record: the
// six outcomes of docs/planning.md ("Outcomes") and the reasons a record is
// uncompressible. The planner (snap), the record path (pipeline) and the
// metrics name outcomes and reasons only through this package, and metrics
// sizes and orders its counters by [N] and [All], [NReasons] and
// [AllReasons], so adding a value here is the one edit that adds it
// everywhere.
//
// Contract: constants and pure functions only (the two lists are
// unexported and only ever copied out); no I/O, imports nothing.
package outcome

// Outcome is what happened to one input record. Every record gets exactly
// one.
type Outcome string

// The six outcomes of docs/planning.md, in its order.
const (
	// SkippedUnderTarget: the record already fits; written unchanged.
	SkippedUnderTarget Outcome = "skipped_under_target"
	// Compressed: a region was summarised and the result fits.
	Compressed Outcome = "compressed"
	// CompressedOverLimit: a region was summarised but the result is still
	// over target (failed to fit); written compressed.
	CompressedOverLimit Outcome = "compressed_over_limit"
	// Uncompressible: over target but no usable region (failed to fit),
	// with a [Reason]; written unchanged.
	Uncompressible Outcome = "uncompressible"
	// SummaryFailed: the summarizer failed after its retries; written
	// unchanged, never with a placeholder summary.
	SummaryFailed Outcome = "summary_failed"
	// Invalid: the input line or row could not be read as a trajectory; not
	// in the output, in the rejects file.
	Invalid Outcome = "invalid"
)

var all = [...]Outcome{SkippedUnderTarget, Compressed, CompressedOverLimit, Uncompressible, SummaryFailed, Invalid}

// N is the number of outcomes, the length of [All]; it follows the list.
const N = len(all)

// All returns the N outcomes in the order of docs/planning.md. The array is a
// value: the caller may change its copy.
func All() [N]Outcome { return all }

// Index returns the position of o in [All], or -1 when o is not an outcome.
func (o Outcome) Index() int {
	for i, x := range All() {
		if x == o {
			return i
		}
	}
	return -1
}

// FailedToFit reports whether o is one of the two "failed to fit" outcomes,
// [CompressedOverLimit] and [Uncompressible]. [SkippedUnderTarget] is never
// a failure.
func (o Outcome) FailedToFit() bool { return o == CompressedOverLimit || o == Uncompressible }

// WasCompressed reports whether a summary was spliced into the record:
// [Compressed] or [CompressedOverLimit].
func (o Outcome) WasCompressed() bool { return o == Compressed || o == CompressedOverLimit }

// Unchanged reports whether a record with outcome o is written as it came
// in: [SkippedUnderTarget], [Uncompressible] and [SummaryFailed].
func (o Outcome) Unchanged() bool {
	return o == SkippedUnderTarget || o == Uncompressible || o == SummaryFailed
}

// OverLimit reports whether a record with outcome o is written over its
// target: [CompressedOverLimit], [Uncompressible] and [SummaryFailed].
func (o Outcome) OverLimit() bool {
	return o == CompressedOverLimit || o == Uncompressible || o == SummaryFailed
}

// Reason says why a record is [Uncompressible].
type Reason string

// The four reasons: docs/planning.md rules 4, 6 and 10, and alternation mode.
const (
	// NoMiddle: nothing lies between the protected head and tail, or the
	// middle holds only tool results that belong to the head (rules 4, 6).
	NoMiddle Reason = "no_middle"
	// Collapsed: snapping the end of the region walked back to its start
	// (rule 10).
	Collapsed Reason = "collapsed"
	// RegionTooSmall: the region holds no more tokens than the summary
	// would, so summarising cannot save anything (rule 10; in alternation
	// mode also after the region's end moved to keep the order).
	RegionTooSmall Reason = "region_too_small"
	// Alternation: in alternation mode (strict user/assistant order, for
	// LLaMA-Factory and Mistral-style templates), no placement of the
	// summary keeps the order around the region, so the record is left as
	// it is rather than written in a form its trainer would reject.
	Alternation Reason = "alternation"
	// ChatTemplate: the model's chat template refused the record
	// (raise_exception, e.g. roles out of order) or could not render it, so
	// its size as the trainer sees it is unknown; the
	// template's message is in the outcome line (chat_template_error).
	// Also a record the template renders as read but refuses once
	// compressed: written unchanged, its message prefixed "once
	// compressed: ".
	ChatTemplate Reason = "chat_template"
)

// NReasons is the number of reasons, the length of [AllReasons].
const NReasons = 5

// AllReasons returns the NReasons reasons in a fixed order. The array is a
// value: the caller may change its copy.
func AllReasons() [NReasons]Reason {
	return [NReasons]Reason{NoMiddle, Collapsed, RegionTooSmall, Alternation, ChatTemplate}
}

// Index returns the position of r in [AllReasons], or -1 when r is not a
// reason.
func (r Reason) Index() int {
	for i, x := range AllReasons() {
		if x == r {
			return i
		}
	}
	return -1
}
