package tokenize

import (
	"fmt"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// A preStage is one step of a pre-tokenizer Sequence. Each piece of the
// previous stage is split on its own (so a look-ahead sees the end of the
// piece, as in Hugging Face's Split) into the matches of a pattern and the
// gaps between them, which the behavior then keeps, drops or merges
// (hfpretok.go). Known patterns have a hand-written, linear,
// allocation-free next function; any other pattern runs on regexp2, the
// slow path. A stage of another kind (Metaspace, ByteLevel's prefix
// space) rewrites the piece first.
type preStage struct {
	name string
	next func(s string, i int) int // end of the span that starts at i
	re   *regexp2.Regexp

	// isMatch reports whether the span that next returns at i is a match
	// of the pattern (rather than a gap); covering: every span is.
	isMatch  func(s string, i int) bool
	covering bool
	behavior splitBehavior
	invert   bool
	// simple: next, Isolated, no invert, no byte-level view: every span
	// is a piece (the fast loop of pretok).
	simple bool
	// byteView: the stage comes after a ByteLevel pre-tokenizer, so it
	// sees the byte-level spelling of the piece.
	byteView bool
	kind     stageKind
	meta     metaspace
}

// Split patterns recognised by their exact text, and the hand-written
// splitter used for each.
const (
	patCL100k = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	patQwen2  = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	patO200k  = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	patDigit3 = `\p{N}{1,3}`
	patDSCJK  = "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+"
	patDSMain = "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"
	// GPT-2's pattern, used by ByteLevel with use_regex.
	patGPT2 = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
)

var knownPatterns = map[string]preStage{
	patCL100k: {name: "cl100k", next: splitCL100k, covering: true},
	patQwen2:  {name: "qwen2", next: splitQwen2, covering: true},
	patO200k:  {name: "o200k", next: splitO200k, covering: true},
	patDigit3: {name: "digits3", next: splitDigits3, isMatch: func(s string, i int) bool { cl, _ := classAt(s, i); return cl&cN != 0 }},
	patDSCJK: {name: "deepseek-cjk", next: splitDSCJK, isMatch: func(s string, i int) bool {
		r, _ := utf8.DecodeRuneInString(s[i:])
		return isDSCJK(r)
	}},
	patDSMain: {name: "deepseek", next: splitDSMain, isMatch: func(s string, i int) bool { return dsMatch(s, i) >= 0 }},
	patGPT2:   {name: "gpt2", next: splitGPT2, covering: true},
}

// newSplitStage returns the stage for a Split regex: hand-written when the
// pattern is a known one, regexp2 otherwise.
func newSplitStage(pattern string) (preStage, bool, error) {
	if st, ok := knownPatterns[pattern]; ok {
		st.simple = true
		return st, true, nil
	}
	re, err := regexp2.Compile(pattern, regexp2.None)
	if err != nil {
		return preStage{}, false, fmt.Errorf("tokenize: tokenizer.json: split pattern %q: %w", pattern, err)
	}
	return preStage{name: "regexp2", re: re}, false, nil
}

// splitQwen2 is splitCL100k with \p{N} instead of \p{N}{1,3}: Qwen2 and
// Qwen3 split numbers into single digits.
func splitQwen2(s string, i int) int {
	if c := s[i]; c >= '0' && c <= '9' {
		return i + 1
	}
	if c := s[i]; c >= utf8.RuneSelf {
		if cl, w := classAt(s, i); cl&cN != 0 {
			return i + w
		}
	}
	return splitCL100k(s, i)
}

// splitDigits3 matches \p{N}{1,3}, with the text between matches as
// pieces of their own.
func splitDigits3(s string, i int) int {
	if cl, w := classAt(s, i); cl&cN != 0 {
		return numEnd(s, i, w)
	}
	return scanOut(s, i, cN)
}

// isDSCJK reports whether r is in [\x{4e00}-\x{9fa5}\x{3040}-\x{309f}\x{30a0}-\x{30ff}].
func isDSCJK(r rune) bool {
	return r >= 0x4e00 && r <= 0x9fa5 || r >= 0x3040 && r <= 0x30ff
}

// splitDSCJK matches DeepSeek's [CJK and kana]+ runs, with the text between
// them as pieces.
func splitDSCJK(s string, i int) int {
	in := func(j int) (bool, int) {
		if s[j] < utf8.RuneSelf {
			return false, 1
		}
		r, w := utf8.DecodeRuneInString(s[j:])
		return isDSCJK(r), w
	}
	first, w := in(i)
	j := i + w
	for j < len(s) {
		ok, w := in(j)
		if ok != first {
			break
		}
		j += w
	}
	return j
}

// psAt returns the class flags, the \p{P}/\p{S} flags (cP, cS) and the width of
// the code point at s[i]. initPS must have run.
func psAt(s string, i int) (uint8, uint8, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return asciiClass[c], psTable[c] & (cP | cS), 1
	}
	r, w := utf8.DecodeRuneInString(s[i:])
	return classOf(r), psOf(r) & (cP | cS), w
}

func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// dsMatch matches DeepSeek-V3's main pattern at i:
//
//	[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+|
//	 ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// and returns its end, or -1 when no alternative matches at i.
func dsMatch(s string, i int) int {
	c := s[i]
	// ASCII punctuation then ASCII letters.
	if c < utf8.RuneSelf && psTable[c]&(cP|cS) != 0 && i+1 < len(s) && isASCIILetter(s[i+1]) {
		j := i + 2
		for j < len(s) && isASCIILetter(s[j]) {
			j++
		}
		return j
	}
	cl, ps, w := psAt(s, i)
	const lm = mL | cM
	// Optional prefix (not \r, \n, a letter, punctuation or a symbol), then
	// letters and marks. A mark prefix gives the same end as no prefix.
	if cl&mL == 0 && ps == 0 && c != '\r' && c != '\n' && i+w < len(s) {
		if ncl, nw := classAt(s, i+w); ncl&lm != 0 {
			return scanIn(s, i+w+nw, lm)
		}
	}
	if cl&lm != 0 {
		return scanIn(s, i+w, lm)
	}
	// Optional space, then punctuation and symbols, then newlines.
	j := -1
	if ps != 0 {
		j = i + w
	} else if c == ' ' && i+1 < len(s) {
		if _, nps, nw := psAt(s, i+1); nps != 0 {
			j = i + 1 + nw
		}
	}
	if j >= 0 {
		for j < len(s) {
			_, ps, w := psAt(s, j)
			if ps == 0 {
				break
			}
			j += w
		}
		return nlEnd(s, j, false)
	}
	if cl&cWS != 0 {
		return wsEnd(s, i)
	}
	return -1
}

// splitDSMain returns the end of the match of DeepSeek's main pattern at
// i, or of the gap up to the next match.
func splitDSMain(s string, i int) int {
	if e := dsMatch(s, i); e >= 0 {
		return e
	}
	for j := i; ; {
		_, w := classAt(s, j)
		j += w
		if j >= len(s) || dsMatch(s, j) >= 0 {
			return j
		}
	}
}

// isNumeric is Rust's char::is_numeric, which the Digits pre-tokenizer
// uses: \p{N} of Unicode 17.0 (Rust's standard library tables, newer than
// the regex engine's 16.0).
func isNumeric(s string, i int) (bool, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return c >= '0' && c <= '9', 1
	}
	r, w := utf8.DecodeRuneInString(s[i:])
	return inRanges(u17N, uint32(r)), w
}

// splitDigits is the Digits pre-tokenizer: runs of numeric characters
// (each on its own with individual) and the text between them.
func splitDigits(individual bool) func(s string, i int) int {
	return func(s string, i int) int {
		num, w := isNumeric(s, i)
		if num && individual {
			return i + w
		}
		j := i + w
		for j < len(s) {
			n, w := isNumeric(s, j)
			if n != num {
				break
			}
			j += w
		}
		return j
	}
}

// splitGPT2 returns the end of the piece starting at i of GPT-2's pattern
// (the ByteLevel pre-tokenizer's use_regex):
//
//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// The contractions are case-sensitive. Every position starts an
// alternative, so pieces tile the input.
func splitGPT2(s string, i int) int {
	c := s[i]
	if c == '\'' && i+1 < len(s) {
		switch s[i+1] {
		case 's', 't', 'm', 'd':
			return i + 2
		case 'r', 'v':
			if i+2 < len(s) && s[i+2] == 'e' {
				return i + 3
			}
		case 'l':
			if i+2 < len(s) && s[i+2] == 'l' {
				return i + 3
			}
		}
	}
	j := i
	if c == ' ' && i+1 < len(s) {
		if cl, _ := classAt(s, i+1); cl&cWS == 0 {
			j = i + 1 // the optional space, then a run of the class after it
		}
	}
	cl, w := classAt(s, j)
	switch {
	case cl&mL != 0:
		return scanIn(s, j+w, mL)
	case cl&cN != 0:
		return scanIn(s, j+w, cN)
	case cl&cWS == 0:
		return scanOut(s, j+w, mLNS)
	}
	// \s+(?!\S)|\s+: the whole run at the end of the text, else the run
	// minus its last code point when that leaves at least one.
	last := i
	for j < len(s) {
		cl, w := classAt(s, j)
		if cl&cWS == 0 {
			break
		}
		last = j
		j += w
	}
	if j == len(s) || last == i {
		return j
	}
	return last
}
