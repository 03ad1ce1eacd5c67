package tokenize

import "sort"

// Counter counts the tokens of a text. Implementations are safe for
// concurrent use.
type Counter interface {
	Count(text string) int
}

// CountAtMost returns c.Count(text) when that is at most max, and
// otherwise some number greater than max. Counters that can stop early
// (*Encoding, and *MemoCounter for texts it does not hold) do, so asking
// "does this fit in max tokens?" of a long text costs about max tokens'
// worth of work instead of the whole text.
func CountAtMost(c Counter, text string, max int) int {
	if l, ok := c.(interface{ CountAtMost(string, int) int }); ok {
		return l.CountAtMost(text, max)
	}
	return c.Count(text)
}

// Encoding names accepted by New.
const (
	O200kBase  = "o200k_base"
	CL100kBase = "cl100k_base"
	Chars4     = "chars4"
)

// Names returns the names New accepts, sorted.
func Names() []string {
	names := []string{O200kBase, CL100kBase, Chars4}
	sort.Strings(names)
	return names
}

// New returns the counter called name: "o200k_base" or "cl100k_base" (an
// *Encoding, loaded on first use and shared by all callers), "chars4"
// (⌊code points / 4⌋), or a tokenizer file, model directory or Hugging
// Face model id at its "main" revision (see [NewRevision]). A name that is
// none of these is an error listing the valid encodings and saying where
// a model was looked for.
func New(name string) (Counter, error) {
	return NewRevision(name, "")
}

// chars4 is the peer's fallback estimate: ⌊code points / 4⌋, with each
// maximal ill-formed UTF-8 subpart counting as one code point (U+FFFD).
type chars4 struct{}

func (chars4) Count(text string) int { return countCodePoints(text) / 4 }
