package jsonx

import (
	"unicode/utf8"
)

// replacement is U+FFFD REPLACEMENT CHARACTER in UTF-8.
const replacement = "\uFFFD"

// RepairUTF8 returns b with every ill-formed UTF-8 sequence replaced by
// U+FFFD, one U+FFFD per maximal subpart (the Unicode Standard's
// recommended practice, §3.9 "U+FFFD Substitution of Maximal Subparts",
// which Python's bytes.decode("utf-8", "replace") and the WHATWG decoder
// follow), and the number of replacements. Valid input is returned as it
// is (same slice, n == 0); otherwise the result is a new slice. ASCII
// bytes are never part of an ill-formed sequence, so JSON structure
// (quotes, brackets, commas, backslashes) is kept: a JSON text stays the
// same JSON text with its strings repaired.
func RepairUTF8(b []byte) (out []byte, n int) {
	if utf8.Valid(b) {
		return b, 0
	}
	out = make([]byte, 0, len(b)+8)
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			j := i + 1
			for j < len(b) && b[j] < utf8.RuneSelf {
				j++
			}
			out = append(out, b[i:j]...)
			i = j
			continue
		}
		if r, size := utf8.DecodeRune(b[i:]); r != utf8.RuneError || size > 1 {
			out = append(out, b[i:i+size]...) // valid, U+FFFD itself included
			i += size
			continue
		}
		out = append(out, replacement...)
		n++
		i += maximalSubpart(b[i:])
	}
	return out, n
}

// maximalSubpart is the length of the maximal subpart at the start of p,
// which does not begin a well-formed sequence: the longest prefix that
// could begin one (a lead byte and the continuation bytes that may follow
// it, Table 3-7 of the Unicode Standard), or 1.
func maximalSubpart(p []byte) int {
	lo, hi := byte(0x80), byte(0xBF) // range of the second byte
	need := 0                        // continuation bytes after the lead
	switch c := p[0]; {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c == 0xED:
		need, hi = 2, 0x9F
	case c >= 0xE1 && c <= 0xEF:
		need = 2
	case c == 0xF0:
		need, lo = 3, 0x90
	case c == 0xF4:
		need, hi = 3, 0x8F
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	default: // a continuation byte, C0, C1, F5..FF: never a lead
		return 1
	}
	k := 1
	for ; k <= need && k < len(p); k++ {
		if p[k] < lo || p[k] > hi {
			break
		}
		lo, hi = 0x80, 0xBF
	}
	return k
}
