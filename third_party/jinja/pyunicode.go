package jinja

// trajcompress patch: Python's str case mappings and predicates.
//
// Python's str.upper, lower, title and capitalize use Unicode's full case
// mappings ('ß'.upper() is 'SS'), a capital sigma lower-cases to 'ς' at
// the end of a word, capitalize gives the first character its title case
// and lower-cases the rest, isdigit accepts digits that are not decimal
// ('²'), and islower/isupper count Other_Lowercase and Other_Uppercase
// characters ('ª', 'Ⅰ'). Go's strings.ToUpper and unicode predicates do
// none of these, so templates that change case rendered other text than
// jinja2. The exceptions to Go's simple mappings are generated from
// Python's own tables by gen_pyunicode.py (pyunicode_table.go);
// TestPyUnicodeMatchesPython compares every assigned character, and
// strings around capital sigma, with python3.

//go:generate python3 gen_pyunicode.py

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// pyIsLowercase and pyIsUppercase are Unicode's Lowercase and Uppercase
// properties, as str.islower and str.isupper read them (Python's
// database's, where it differs from Go's).
func pyIsLowercase(r rune) bool {
	return (unicode.IsLower(r) || unicode.Is(unicode.Other_Lowercase, r)) != unicode.Is(pyLowercaseFlip, r)
}

func pyIsUppercase(r rune) bool {
	return (unicode.IsUpper(r) || unicode.Is(unicode.Other_Uppercase, r)) != unicode.Is(pyUppercaseFlip, r)
}

// pyIsCased is Unicode's Cased property.
func pyIsCased(r rune) bool {
	return pyIsLowercase(r) || pyIsUppercase(r) || unicode.IsTitle(r)
}

// pyIsDigit is str.isdigit of one character.
func pyIsDigit(r rune) bool {
	return unicode.IsDigit(r) || unicode.Is(pyDigitMore, r)
}

// pyUpper is str.upper.
func pyUpper(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf:
			if 'a' <= r && r <= 'z' {
				r -= 'a' - 'A'
			}
			b.WriteByte(byte(r))
		default:
			if m, ok := pyUpperFull[r]; ok {
				b.WriteString(m)
				continue
			}
			b.WriteRune(unicode.ToUpper(r))
		}
	}
	return b.String()
}

// pyLower is str.lower.
func pyLower(s string) string {
	return pyLowerFrom(s, 0)
}

// pyLowerFrom is str.lower of s[from:], with s[:from] as the context a
// capital sigma looks back into (capitalize lower-cases all but the first
// character).
func pyLowerFrom(s string, from int) string {
	var b strings.Builder
	b.Grow(len(s) - from)
	for i := from; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		pyLowerRune(&b, s, i, r)
		i += n
	}
	return b.String()
}

// pyLowerRune writes the lower case of r, found at byte i of s.
func pyLowerRune(b *strings.Builder, s string, i int, r rune) {
	switch {
	case r == 'Σ':
		if finalSigma(s, i) {
			b.WriteRune('ς')
		} else {
			b.WriteRune('σ')
		}
	case r < utf8.RuneSelf:
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		b.WriteByte(byte(r))
	default:
		if m, ok := pyLowerFull[r]; ok {
			b.WriteString(m)
			return
		}
		b.WriteRune(unicode.ToLower(r))
	}
}

// finalSigma is CPython's handle_capital_sigma: the capital sigma at byte
// i of s follows a cased character and precedes none, case-ignorable
// characters skipped on both sides.
func finalSigma(s string, i int) bool {
	j := i
	before := false
	for j > 0 {
		r, n := utf8.DecodeLastRuneInString(s[:j])
		j -= n
		if !unicode.Is(pyCaseIgnorable, r) {
			before = pyIsCased(r)
			break
		}
	}
	if !before {
		return false
	}
	for j = i + len("Σ"); j < len(s); {
		r, n := utf8.DecodeRuneInString(s[j:])
		j += n
		if !unicode.Is(pyCaseIgnorable, r) {
			return !pyIsCased(r)
		}
	}
	return true
}

// pyTitleRune writes the title case of r.
func pyTitleRune(b *strings.Builder, r rune) {
	if m, ok := pyTitleFull[r]; ok {
		b.WriteString(m)
		return
	}
	b.WriteRune(unicode.ToTitle(r))
}

// pyCapitalize is str.capitalize: the first character in title case, the
// rest lower-cased.
func pyCapitalize(s string) string {
	if s == "" {
		return ""
	}
	r, n := utf8.DecodeRuneInString(s)
	var b strings.Builder
	pyTitleRune(&b, r)
	return b.String() + pyLowerFrom(s, n)
}

// pyTitle is str.title: a character after a cased one lower-cased, any
// other in title case.
func pyTitle(s string) string {
	var b strings.Builder
	prevCased := false
	for i, r := range s {
		if prevCased {
			pyLowerRune(&b, s, i, r)
		} else {
			pyTitleRune(&b, r)
		}
		prevCased = pyIsCased(r)
	}
	return b.String()
}

// pyIsLower and pyIsUpper are str.islower and str.isupper: at least one
// cased character, and none of the other case or title case.
func pyIsLower(s string) bool { return pyCased(s, pyIsLowercase, pyIsUppercase) }
func pyIsUpper(s string) bool { return pyCased(s, pyIsUppercase, pyIsLowercase) }

func pyCased(s string, is, other func(rune) bool) bool {
	found := false
	for _, r := range s {
		if other(r) || unicode.IsTitle(r) {
			return false
		}
		if is(r) {
			found = true
		}
	}
	return found
}
