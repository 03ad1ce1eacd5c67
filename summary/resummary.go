package summary

import "strings"

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
