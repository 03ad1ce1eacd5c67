package tokenize

import "unicode/utf8"

// This file holds hand-written pre-tokenizers that reproduce, piece for
// piece, what fancy-regex (leftmost-first, backtracking) finds with the
// split patterns of tiktoken's cl100k_base and o200k_base, as compiled into
// npm tiktoken 1.0.22:
//
//	cl100k: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|
//	        \s*[\r\n]+|\s+(?!\S)|\s+
//	o200k:  [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|
//	        [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|
//	        \p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// (The newer possessive spelling of the cl100k pattern, ?+ and ++, matches
// the same pieces: no alternative can succeed by giving those back.)
// Every alternative is resolved by at most a constant number of forward
// scans over the characters it consumes, plus, for o200k, a rescan of an
// upper-case tail that the next piece then consumes, so splitting is linear
// in the input. Both functions take valid UTF-8 and a
// start offset i < len(s), and return the end of the piece starting at i;
// every position starts some alternative, so pieces tile the input.

// classAt returns the class flags and byte width of the code point at s[i].
func classAt(s string, i int) (uint8, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return asciiClass[c], 1
	}
	r, w := utf8.DecodeRuneInString(s[i:])
	return classOf(r), w
}

// scanIn returns the end of the maximal run from i of code points whose
// class intersects m.
func scanIn(s string, i int, m uint8) int {
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if asciiClass[c]&m == 0 {
				return i
			}
			i++
			continue
		}
		cl, w := classAt(s, i)
		if cl&m == 0 {
			return i
		}
		i += w
	}
	return i
}

// scanOut returns the end of the maximal run from i of code points whose
// class does not intersect m.
func scanOut(s string, i int, m uint8) int {
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if asciiClass[c]&m != 0 {
				return i
			}
			i++
			continue
		}
		cl, w := classAt(s, i)
		if cl&m != 0 {
			return i
		}
		i += w
	}
	return i
}

// contractionEnd matches (?i:'s|'t|'re|'ve|'m|'ll|'d) at s[i] (which must be
// an apostrophe) and returns its end, or -1. Case-insensitivity follows Unicode simple
// case folding, under which U+017F LATIN SMALL LETTER LONG S matches 's'.
func contractionEnd(s string, i int) int {
	j := i + 1
	if j >= len(s) {
		return -1
	}
	switch s[j] | 0x20 {
	case 's', 't', 'm', 'd':
		return j + 1
	case 'r', 'v':
		if j+1 < len(s) && s[j+1]|0x20 == 'e' {
			return j + 2
		}
	case 'l':
		if j+1 < len(s) && s[j+1]|0x20 == 'l' {
			return j + 2
		}
	}
	if s[j] == 0xC5 && j+1 < len(s) && s[j+1] == 0xBF { // U+017F
		return j + 2
	}
	return -1
}

// isPrefixClass reports whether a code point of class cl starting with byte
// c is in [^\r\n\p{L}\p{N}].
func isPrefixClass(cl uint8, c byte) bool {
	return cl&(mL|cN) == 0 && c != '\r' && c != '\n'
}

// numEnd matches \p{N}{1,3} at i, whose first code point (width w) is a
// number.
func numEnd(s string, i, w int) int {
	j := i + w
	for k := 0; k < 2 && j < len(s); k++ {
		cl, w2 := classAt(s, j)
		if cl&cN == 0 {
			break
		}
		j += w2
	}
	return j
}

// nlEnd matches [\r\n]* (or [\r\n/]* when slash) at i.
func nlEnd(s string, i int, slash bool) int {
	for i < len(s) && (s[i] == '\r' || s[i] == '\n' || slash && s[i] == '/') {
		i++
	}
	return i
}

// wsEnd resolves \s*[\r\n]+|\s+(?!\S)|\s+ at i, where s[i] is whitespace:
// the first takes the run up to and including its last newline (greedy \s*
// backtracks to it); the second, without newline, the whole run at the end
// of the text, else the run minus its last code point when that leaves at
// least one; the third the single whitespace code point.
func wsEnd(s string, i int) int {
	j, nl, last, count := i, -1, i, 0
	for j < len(s) {
		c := s[j]
		var w int
		if c < utf8.RuneSelf {
			if asciiClass[c]&cWS == 0 {
				break
			}
			if c == '\r' || c == '\n' {
				nl = j + 1
			}
			w = 1
		} else {
			var cl uint8
			cl, w = classAt(s, j)
			if cl&cWS == 0 {
				break
			}
		}
		last = j
		j += w
		count++
	}
	switch {
	case nl > 0:
		return nl
	case j == len(s) || count == 1:
		return j
	default:
		return last
	}
}

// splitCL100k returns the end of the cl100k_base piece starting at i.
func splitCL100k(s string, i int) int {
	c := s[i]
	// Fast path: ASCII letters, the commonest piece start.
	if c < utf8.RuneSelf && asciiClass[c]&mL != 0 {
		return scanIn(s, i+1, mL)
	}
	if c == '\'' {
		if e := contractionEnd(s, i); e > 0 {
			return e
		}
	}
	cl, w := classAt(s, i)
	// [^\r\n\p{L}\p{N}]?\p{L}+ (the optional prefix can never be a letter,
	// so backtracking over it cannot help).
	if cl&mL != 0 {
		return scanIn(s, i+w, mL)
	}
	if isPrefixClass(cl, c) && i+w < len(s) {
		if ncl, nw := classAt(s, i+w); ncl&mL != 0 {
			return scanIn(s, i+w+nw, mL)
		}
	}
	// \p{N}{1,3}
	if cl&cN != 0 {
		return numEnd(s, i, w)
	}
	// ' ?[^\s\p{L}\p{N}]+[\r\n]*'
	if cl&mLNS == 0 {
		return nlEnd(s, scanOut(s, i+w, mLNS), false)
	}
	if c == ' ' && i+1 < len(s) {
		if ncl, nw := classAt(s, i+1); ncl&mLNS == 0 {
			return nlEnd(s, scanOut(s, i+1+nw, mLNS), false)
		}
	}
	return wsEnd(s, i)
}

// wordClassAt is classAt for the letter-and-mark classes of the o200k
// word alternatives; with kimi set, Han code points lose their letter and
// mark flags, as in Kimi-K2's [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]].
func wordClassAt(s string, i int, kimi bool) (uint8, int) {
	cl, w := classAt(s, i)
	if kimi && w > 1 && isHanAt(s, i) {
		cl &^= mL | cM
	}
	return cl, w
}

// scanWord is scanIn for the word classes (see wordClassAt).
func scanWord(s string, i int, m uint8, kimi bool) int {
	if !kimi {
		return scanIn(s, i, m)
	}
	for i < len(s) {
		cl, w := wordClassAt(s, i, true)
		if cl&m == 0 {
			return i
		}
		i += w
	}
	return i
}

// o200kWordEnd matches [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+
// at i (without Han when kimi is set) and returns its end, or -1. The
// greedy star takes the maximal upper run; if the code point after it is
// lower, the plus takes the maximal lower run from there; otherwise the
// star gives back code points until one it gave back is lower, i.e. the
// match ends after the last lower code point of the upper run.
func o200kWordEnd(s string, i int, kimi bool) int {
	j, lastLower := i, -1
	for j < len(s) {
		cl, w := wordClassAt(s, j, kimi)
		if cl&mUpper == 0 {
			if cl&mLower != 0 {
				return scanWord(s, j+w, mLower, kimi)
			}
			break
		}
		j += w
		if cl&mLower != 0 {
			lastLower = j
		}
	}
	return lastLower
}

// o200kSuffix matches the optional (?i:'s|'t|'re|'ve|'m|'ll|'d)? at i.
func o200kSuffix(s string, i int) int {
	if i < len(s) && s[i] == '\'' {
		if e := contractionEnd(s, i); e > 0 {
			return e
		}
	}
	return i
}

// splitO200k returns the end of the o200k_base piece starting at i.
func splitO200k(s string, i int) int { return splitO200kKimi(s, i, false) }

// splitKimi returns the end of the piece of Kimi-K2's pattern
// (tokenization_kimi.py) starting at i: o200k's with [\p{Han}]+ first, Han
// taken out of the word classes, and [\r\n]* instead of [\r\n/]* after
// punctuation.
func splitKimi(s string, i int) int {
	if s[i] >= utf8.RuneSelf && isHanAt(s, i) {
		j := i
		for j < len(s) && s[j] >= utf8.RuneSelf && isHanAt(s, j) {
			_, w := utf8.DecodeRuneInString(s[j:])
			j += w
		}
		return j
	}
	return splitO200kKimi(s, i, true)
}

func splitO200kKimi(s string, i int, kimi bool) int {
	c := s[i]
	// Fast path: an ASCII lowercase letter starts alternative 1 with an
	// empty upper run, then takes the lower run.
	if c >= 'a' && c <= 'z' {
		return o200kSuffix(s, scanWord(s, i+1, mLower, kimi))
	}
	cl, w := classAt(s, i) // s[i] is not Han for kimi (splitKimi took it)
	prefix := isPrefixClass(cl, c) && i+w < len(s)
	// Alternative 1, first with the optional prefix taken, then without
	// (only possible when s[i] is itself a mark).
	if prefix {
		if e := o200kWordEnd(s, i+w, kimi); e >= 0 {
			return o200kSuffix(s, e)
		}
	}
	if cl&(mUpper|mLower) != 0 {
		if e := o200kWordEnd(s, i, kimi); e >= 0 {
			return o200kSuffix(s, e)
		}
	}
	// Alternative 2: [prefix]?[upper]+[lower]*, same order.
	if prefix {
		if ncl, nw := wordClassAt(s, i+w, kimi); ncl&mUpper != 0 {
			return o200kSuffix(s, scanWord(s, scanWord(s, i+w+nw, mUpper, kimi), mLower, kimi))
		}
	}
	if cl&mUpper != 0 {
		return o200kSuffix(s, scanWord(s, scanWord(s, i+w, mUpper, kimi), mLower, kimi))
	}
	// \p{N}{1,3}
	if cl&cN != 0 {
		return numEnd(s, i, w)
	}
	// ' ?[^\s\p{L}\p{N}]+[\r\n/]*' ([\r\n]* for Kimi)
	if cl&mLNS == 0 {
		return nlEnd(s, scanOut(s, i+w, mLNS), !kimi)
	}
	if c == ' ' && i+1 < len(s) {
		if ncl, nw := classAt(s, i+1); ncl&mLNS == 0 {
			return nlEnd(s, scanOut(s, i+1+nw, mLNS), !kimi)
		}
	}
	return wsEnd(s, i)
}
