package tokenize

import "unicode/utf8"

// Segmenter is a [Counter] that can say where the added tokens of a text
// are: Count(text) is then the sum of Count over the stretches between
// them plus one per added token, so that a caller can count a long text
// that repeats known stretches (a chat template's rendering of a record
// whose turns were counted before) stretch by stretch, through a cache.
type Segmenter interface {
	Counter
	// Segments calls seg for each non-empty stretch of text between the
	// added tokens it holds, in order, and returns their number; ok is
	// false (and seg is not called) when it cannot split text so: count
	// it whole.
	Segments(text string, seg func(stretch string)) (added int, ok bool)
	// CountStretch is Count of a stretch Segments passed to seg (valid
	// UTF-8 holding no added token), without looking for them again.
	CountStretch(stretch string) int
}

// CountStretch implements [Segmenter]: the stretch goes straight to
// normalization and pre-tokenization, as Count's text between added tokens.
func (t *HFTokenizer) CountStretch(s string) int { return countAtMost(t.normalized, s, maxInt) }

// CountStretch implements [Segmenter] when the wrapped counter does (the
// memo's entries are the same counts as Count's). Callers get a
// MemoCounter as a Segmenter only then (Segments reports false otherwise).
func (m *MemoCounter) CountStretch(s string) int {
	if sg, ok := m.c.(Segmenter); ok {
		return m.countWith(s, sg.CountStretch)
	}
	return m.Count(s)
}

// Segments implements [Segmenter]: the stretches are those Count splits
// the text into before normalizing and pre-tokenizing each (texts that
// are not valid UTF-8 are not split). When nothing normalizes and the
// pre-tokenizer only splits (rawNormSplit), the normalized added tokens
// match the text as it is and the text between them is pre-tokenized on
// its own, so they split stretches too (DeepSeek-V3's turn markers).
func (t *HFTokenizer) Segments(text string, seg func(string)) (int, bool) {
	if !utf8.ValidString(text) {
		return 0, false
	}
	n := 0
	if t.rawNormSplit() {
		whole := seg
		seg = func(p string) {
			a := hfAcc{max: maxInt}
			t.addedNorm.split(p, &a, func(g string, _ int, _ *hfAcc) { whole(g) })
			n += a.n
		}
	}
	for i := 0; i < len(text); {
		start, end := len(text), len(text)
		if !t.added.empty() {
			if s, e, _ := t.added.find(text, i); s >= 0 {
				start, end = s, e
			}
		}
		if start > i {
			seg(text[i:start])
		}
		if start == len(text) {
			break
		}
		n++
		i = end
	}
	return n, true
}

// rawNormSplit reports whether t's normalized added tokens can split
// stretches as its other added tokens do: there are some, with no
// lstrip, rstrip or single_word, nothing normalizes (so they match the
// raw text, as normalized does), and every pre-tokenizer stage only
// splits (so a stretch's pieces do not depend on whether it starts the
// text: no prefix space or Metaspace prepend).
func (t *HFTokenizer) rawNormSplit() bool {
	if t.sp != nil || len(t.norms) > 0 || t.nfc || t.addedNorm.empty() || t.addedNorm.opts != nil {
		return false
	}
	for k := range t.stages {
		if t.stages[k].kind != stageSplit {
			return false
		}
	}
	return true
}

// Segments implements [Segmenter] when the wrapped counter does.
func (m *MemoCounter) Segments(text string, seg func(string)) (int, bool) {
	if s, ok := m.c.(Segmenter); ok {
		return s.Segments(text, seg)
	}
	return 0, false
}
