package tokenize

import (
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// PartCounter is a [Segmenter] that, while it counts a stretch, can also
// count a part of it as [Counter.Count] counts the part on its own, from
// the same pass: a chat template's rendering holds each turn's text in a
// stretch of framing ("user\n" + text), and the planner needs both the
// rendering's count and each turn's.
type PartCounter interface {
	Segmenter
	// CountStretchPart returns CountStretch(s) and, when ok, Count(s[a:e]);
	// ok is false (part 0) when the count of the part cannot be had from
	// the stretch's pieces: count it on its own.
	CountStretchPart(s string, a, e int) (n, part int, ok bool)
	// CountsParts reports whether CountStretchPart can ever give a part
	// (the tokenizer's pipeline allows it): a caller need not look for
	// parts otherwise.
	CountsParts() bool
}

// partSplits are the pre-tokenizer split sequences whose pieces allow a
// part of a stretch to be counted from the stretch's (by stage name, in
// order): patterns with no look-behind, whose only look-ahead is
// \s+(?!\S)'s. TestSplitPartsLemma checks the property CountStretchPart
// relies on for each sequence as a whole: a sequence of splits is taken
// only as one of these, never stage by stage.
var partSplits = []partSplit{
	{names: []string{"qwen2"}}, {names: []string{"cl100k"}}, {names: []string{"o200k"}}, {names: []string{"gpt2"}},
	// DeepSeek-V3's: digits in threes, CJK runs, then its main pattern,
	// which matches some code points only before a letter (an optional
	// prefix: U+200B, a control character): a part ending in one would
	// join the gap before it.
	{names: []string{"digits3", "deepseek-cjk", "deepseek"}, lastLNPS: true},
}

// partSplit is a split sequence of partSplits.
type partSplit struct {
	names []string
	// lastLNPS: a part that does not end the stretch must end with a
	// letter, mark, number, punctuation or symbol (\p{L}\p{M}\p{N}\p{P}\p{S}),
	// on top of not ending with white space.
	lastLNPS bool
}

// endOK reports whether a part x that does not end its stretch ends
// where the split of x agrees with the stretch's: on a whole code point
// that is not white space (and, with lastLNPS, is a letter, mark, number,
// punctuation or symbol).
func (ps partSplit) endOK(x string) bool {
	r, w := utf8.DecodeLastRuneInString(x)
	if r == utf8.RuneError && w <= 1 {
		return false // inside a code point
	}
	if !ps.lastLNPS {
		cl, _ := classAt(x, len(x)-w)
		return cl&cWS == 0
	}
	cl, p, _ := psAt(x, len(x)-w)
	return cl&cWS == 0 && (cl&(mL|cM|cN) != 0 || p != 0)
}

// partSplitOf returns the partSplits entry that t's stages make, if any.
func (t *HFTokenizer) partSplitOf() (partSplit, bool) {
	for _, ps := range partSplits {
		if len(ps.names) != len(t.stages) {
			continue
		}
		ok := true
		for k := range t.stages {
			st := &t.stages[k]
			ok = ok && st.kind == stageSplit && st.simple && st.next != nil && st.name == ps.names[k]
		}
		if ok {
			return ps, true
		}
	}
	return partSplit{}, false
}

// partsOK reports whether t's pipeline lets CountStretchPart count parts:
// byte-level BPE, no normalizer but NFC, split stages making one of
// partSplits (each Isolated, not inverted, with a hand-written splitter),
// added tokens with none of lstrip, rstrip or single_word (whose matches
// depend on what is beside them), and normalized ones only when nothing
// normalizes (they then match the text as it is, and the text between
// them in a stretch splits on its own, as a stretch does). Then Count(x) of a text
// with no added token is the sum of the BPE counts of the pieces the
// split makes of x (NFC'd), whatever came before or after x.
func (t *HFTokenizer) partsOK() bool {
	if t.sp != nil || t.added.opts != nil || len(t.norms) > 0 && !t.nfc || t.nfc && !t.addedNorm.empty() {
		return false
	}
	_, ok := t.partSplitOf()
	return ok
}

// spans calls fn with the offsets of each piece that stages k onwards
// split s into, in order (s at offset off of the text), as pretok splits
// it: each stage splits the previous stage's pieces on their own. Only
// for split stages (partsOK).
func (t *HFTokenizer) spans(s string, off, k int, fn func(i, j int)) {
	st := &t.stages[k]
	last := k+1 == len(t.stages)
	for i := 0; i < len(s); {
		j := st.next(s, i)
		if last {
			fn(off+i, off+j)
		} else {
			t.spans(s[i:j], off+i, k+1, fn)
		}
		i = j
	}
}

// CountsParts implements [PartCounter].
func (t *HFTokenizer) CountsParts() bool { return t.partsOK() }

// CountStretchPart implements [PartCounter]. The stretch is split and its
// pieces counted as CountStretch does; on the way it notes the count at
// a and at b, the last piece boundary at or before e. The part x =
// s[a:e] counts as s's pieces in [a, b) plus the pieces of s[b:e] on
// its own when:
//   - a is a piece boundary: the split has no look-behind, so the pieces
//     of s from a on are those of s[a:] on its own;
//   - e ends s (or the text of s before a normalized added token, which
//     splits on its own), or x ends as partSplit.endOK requires (for
//     one split, a code point that is not white space): the
//     split of x then agrees with that of s[a:] up to b, since the only
//     look-ahead (\s+(?!\S)) can see past x's end only after white space;
//     from b on, x splits as s[b:e] on its own;
//   - NFC (when the tokenizer normalizes) leaves s, x and s[b:e] as they
//     are.
func (t *HFTokenizer) CountStretchPart(s string, a, e int) (n, part int, ok bool) {
	ps, seq := t.partSplitOf()
	if a < 0 || a >= e || e > len(s) || !seq || !t.partsOK() || t.nfc && !norm.NFC.IsNormalString(s) {
		return t.CountStretch(s), 0, false
	}
	acc := hfAcc{max: maxInt}
	na, nb, b := -1, 0, a
	end := false // e ends the text the part's split sees: s, or s's text up to an added token
	seg := func(g string, at int, acc *hfAcc) {
		if at > a || e > at+len(g) {
			t.pretok(g, 0, false, acc)
			return
		}
		t.spans(g, at, 0, func(i, j int) {
			if i >= a && i <= e {
				if i == a {
					na = acc.n
				}
				nb, b = acc.n, i
			}
			t.piece(s[i:j], acc)
		})
		if e == at+len(g) {
			nb, b, end = acc.n, e, true
		}
	}
	if t.addedNorm.empty() {
		seg(s, 0, &acc)
	} else {
		// Normalized added tokens match the text as it is (no
		// normalizer): the text between them is split on its own, as a
		// stretch is.
		t.addedNorm.split(s, &acc, seg)
	}
	n = acc.n
	if na < 0 {
		return n, 0, false // a falls inside a piece, or the part holds an added token
	}
	x := s[a:e]
	if !end && !ps.endOK(x) {
		return n, 0, false
	}
	if t.nfc && !norm.NFC.IsNormalString(x) {
		return n, 0, false
	}
	part = nb - na
	if b < e {
		tail := s[b:e]
		if t.nfc && !norm.NFC.IsNormalString(tail) {
			return n, 0, false
		}
		ta := hfAcc{max: maxInt}
		t.spans(tail, 0, 0, func(i, j int) { t.piece(tail[i:j], &ta) })
		part += ta.n
	}
	return n, part, true
}

// CountsParts implements [PartCounter]: the wrapped counter's.
func (m *MemoCounter) CountsParts() bool {
	pc, ok := m.c.(PartCounter)
	return ok && pc.CountsParts()
}

// CountStretchPart implements [PartCounter] when the wrapped counter
// does. The part is memoised as Count would memoise it: a stretch the
// memo holds (it is not counted again) gives the part's count when the
// memo holds that too.
func (m *MemoCounter) CountStretchPart(s string, a, e int) (n, part int, ok bool) {
	pc, can := m.c.(PartCounter)
	if !can {
		return m.CountStretch(s), 0, false
	}
	counted := false
	n = m.countWith(s, func(s string) int {
		var k int
		k, part, ok = pc.CountStretchPart(s, a, e)
		counted = true
		return k
	})
	switch {
	case !counted:
		part, ok = m.cached(s[a:e])
	case ok:
		m.countWith(s[a:e], func(string) int { return part })
	}
	return n, part, ok
}
