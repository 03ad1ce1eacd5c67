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

// partSplitters are the split patterns whose pieces allow a part of a
// stretch to be counted from the stretch's: patterns with no look-behind,
// whose only look-ahead is \s+(?!\S)'s (TestSplitPartsLemma checks the
// property CountStretchPart relies on for each).
var partSplitters = map[string]bool{"qwen2": true, "cl100k": true, "o200k": true, "gpt2": true}

// partsOK reports whether t's pipeline lets CountStretchPart count parts:
// byte-level BPE, no normalizer but NFC, one split stage of
// partSplitters, added tokens with none of lstrip, rstrip, single_word or
// normalized (whose matches depend on what is beside them). Then Count(x)
// of a text with no added token is the sum of the BPE counts of the
// pieces the split makes of x (NFC'd), whatever came before or after x.
func (t *HFTokenizer) partsOK() bool {
	if t.sp != nil || !t.addedNorm.empty() || t.added.opts != nil || len(t.norms) > 0 && !t.nfc || len(t.stages) != 1 {
		return false
	}
	st := &t.stages[0]
	return st.kind == stageSplit && st.simple && st.covering && partSplitters[st.name]
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
//   - e ends s, or the last code point of x is not white space: the
//     split of x then agrees with that of s[a:] up to b, since the only
//     look-ahead (\s+(?!\S)) can see past x's end only after white space;
//     from b on, x splits as s[b:e] on its own;
//   - NFC (when the tokenizer normalizes) leaves s, x and s[b:e] as they
//     are.
func (t *HFTokenizer) CountStretchPart(s string, a, e int) (n, part int, ok bool) {
	if a < 0 || a >= e || e > len(s) || !t.partsOK() || t.nfc && !norm.NFC.IsNormalString(s) {
		return t.CountStretch(s), 0, false
	}
	st := &t.stages[0]
	acc := hfAcc{max: maxInt}
	na, nb, b := -1, 0, a
	for i := 0; i < len(s); {
		if i >= a && i <= e {
			if i == a {
				na = acc.n
			}
			nb, b = acc.n, i
		}
		j := st.next(s, i)
		t.piece(s[i:j], &acc)
		i = j
	}
	if e == len(s) {
		nb, b = acc.n, e
	}
	n = acc.n
	if na < 0 {
		return n, 0, false // a falls inside a piece
	}
	x := s[a:e]
	if e < len(s) {
		r, w := utf8.DecodeLastRuneInString(x)
		if r == utf8.RuneError && w <= 1 {
			return n, 0, false // e inside a code point
		}
		if cl, _ := classAt(x, len(x)-w); cl&cWS != 0 {
			return n, 0, false
		}
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
		for i := 0; i < len(tail); {
			j := st.next(tail, i)
			t.piece(tail[i:j], &ta)
			i = j
		}
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
