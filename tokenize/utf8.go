package tokenize

import (
	"unicode/utf8"
)

// decodeMaximal decodes the code point at s[i:] the way the WHATWG
// TextDecoder (and Python's errors="replace") do: an ill-formed sequence
// yields utf8.RuneError and the length of its maximal subpart, so each
// maximal subpart becomes exactly one U+FFFD. i must be < len(s).
func decodeMaximal(s string, i int) (rune, int) {
	b0 := s[i]
	if b0 < utf8.RuneSelf {
		return rune(b0), 1
	}
	lo, hi := byte(0x80), byte(0xBF)
	var need int
	var cp rune
	switch {
	case b0 >= 0xC2 && b0 <= 0xDF:
		need, cp = 1, rune(b0&0x1F)
	case b0 == 0xE0:
		need, cp, lo = 2, rune(b0&0x0F), 0xA0
	case b0 == 0xED:
		need, cp, hi = 2, rune(b0&0x0F), 0x9F
	case b0 >= 0xE1 && b0 <= 0xEF:
		need, cp = 2, rune(b0&0x0F)
	case b0 == 0xF0:
		need, cp, lo = 3, rune(b0&0x07), 0x90
	case b0 >= 0xF1 && b0 <= 0xF3:
		need, cp = 3, rune(b0&0x07)
	case b0 == 0xF4:
		need, cp, hi = 3, rune(b0&0x07), 0x8F
	default:
		return utf8.RuneError, 1
	}
	j := i + 1
	for k := 0; k < need; k++ {
		if j >= len(s) {
			return utf8.RuneError, j - i
		}
		c := s[j]
		if c < lo || c > hi {
			return utf8.RuneError, j - i
		}
		lo, hi = 0x80, 0xBF
		cp = cp<<6 | rune(c&0x3F)
		j++
	}
	return cp, j - i
}

// appendReplaced appends s to dst with every maximal subpart of an
// ill-formed UTF-8 sequence replaced by U+FFFD.
func appendReplaced(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			dst = append(dst, c)
			i++
			continue
		}
		r, n := decodeMaximal(s, i)
		if r == utf8.RuneError {
			// Also right for a well-formed U+FFFD: same bytes.
			dst = append(dst, "\uFFFD"...)
		} else {
			dst = append(dst, s[i:i+n]...)
		}
		i += n
	}
	return dst
}

// countCodePoints counts the code points of s after replacement of
// ill-formed sequences (one per maximal subpart).
func countCodePoints(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			i++
		} else {
			_, w := decodeMaximal(s, i)
			i += w
		}
		n++
	}
	return n
}

// ReplaceInvalid returns s with each maximal subpart of an ill-formed UTF-8
// sequence replaced by U+FFFD, as the WHATWG TextDecoder and Python's
// bytes.decode(errors="replace") do. Valid input is returned unchanged
// without copying.
func ReplaceInvalid(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return string(appendReplaced(make([]byte, 0, len(s)+8), s))
}
