package summary

import (
	"strings"

	"github.com/trajcompress/trajcompress/traj"
)

// EndMarker ends the text of an LLM summary (package llm appends it), so a
// reader, or a later run, sees where the summary stops.
const EndMarker = "[END OF CONTEXT SUMMARY]"

// IsSummary reports whether text is a summary trajcompress wrote: it
// starts, after white space, with [Prefix]. It is how a record that was
// compressed before (our own output, compressed again) is recognised.
func IsSummary(text string) bool {
	return strings.HasPrefix(strings.TrimLeft(text, " \t\r\n"), Prefix)
}

// SummaryBody is a summary's text without its [Prefix] and anything from
// its [EndMarker] on, trimmed: what an updated summary must carry over.
func SummaryBody(text string) string {
	s := strings.TrimLeft(text, " \t\r\n")
	s = strings.TrimPrefix(s, Prefix)
	if i := strings.Index(s, EndMarker); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

// WidenToSummary makes a region [lo, hi) that an earlier summary precedes
// take that summary in: it returns the index of the nearest summary turn
// in [minLo, lo) (minLo: the protected head's end), else lo. The region
// [result, hi) then yields one updated summary instead of a second one
// beside the first. A summary turn is never a tool result, so the widened
// region still keeps every call with its results. A summary turn inside the
// region needs nothing more: the summarizer sees it (package llm's prompt
// folds an earlier summary in).
func WidenToSummary(turns []traj.Turn, minLo, lo, hi int) int {
	if lo > len(turns) || lo >= hi {
		return lo
	}
	for i := lo - 1; i >= max(minLo, 0); i-- {
		if IsSummary(turns[i].Text) {
			return i
		}
	}
	return lo
}
