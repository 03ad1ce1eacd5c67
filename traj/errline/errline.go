// Package errline finds the line of a tool output that says it failed:
// the detector the deterministic summary quotes errors with and the
// prepass's terminal digests list them with (one detector, so both say
// the same thing of the same output). Pure: no I/O, no state beyond
// tables built at init.
package errline

import "strings"

// Window bounds the error search of [Find]: only the first and last
// Window bytes of a result are searched (errors sit at either end of
// long outputs, and tool outputs can be megabytes long).
const Window = 4096

// Find returns the first line of s that looks like an error (see
// [First]), searching the first and then the last [Window] bytes.
func Find(s string) (string, bool) {
	if len(s) <= 2*Window {
		return First(s)
	}
	if l, ok := First(s[:Window]); ok {
		return l, true
	}
	return First(s[len(s)-Window:])
}

// First returns the first line of w (with its "\n", as
// strings.Lines cuts them) that matches this pattern line by line:
//
//	(?im)^\W*(error|fatal|panic|exception|traceback)\b | \b(error|exception|fatal)\s*: |
//	\bfail(ed|ure)?\b | no such file | permission denied | command not found | \bnot found\b |
//	exit (code|status):? ?[1-9] | returncode"?: ?[1-9] | 错误 | 失败 | エラー | ошибка
//
// It is the hand-written form of that regexp, which errorline_test.go
// checks it against (the regexp was 20-30% of a run's CPU time). Case
// folding is ASCII-only; the regexp would also fold U+017F (ſ) and U+212A
// (K), and Cyrillic beyond the three spellings in errorKeys.
//
// Every alternative starts with a keyword, no keyword contains a newline,
// and every check after a keyword stops at the end of its line. So one
// pass that stops at the first keyword whose alternative holds finds the
// first matching line. The pass looks up each pair of adjacent bytes,
// case-folded, in a bitset of the keywords' first two bytes, and tries
// only the keywords starting with a pair found there (4.7× faster than
// trying each alternative on each line; bench/README.md, "End to end").
func First(w string) (string, bool) {
	if len(w) < 2 {
		return "", false
	}
	next := lowerASCII[w[0]]
	for i := 0; i+1 < len(w); i++ {
		c := next
		next = lowerASCII[w[i+1]]
		k := uint16(c)<<8 | uint16(next)
		if errorPairs[k>>6]&(1<<(k&63)) == 0 {
			continue
		}
		for _, kw := range errorByFirst[c] {
			if len(w)-i >= len(kw.word) && hasPrefixFold(w[i:], kw.word) && kw.holds(w, i, i+len(kw.word)) {
				ls := strings.LastIndexByte(w[:i], '\n') + 1
				if nl := strings.IndexByte(w[i:], '\n'); nl >= 0 {
					return w[ls : i+nl+1], true
				}
				return w[ls:], true
			}
		}
	}
	return "", false
}

// errorKey is one keyword of First's pattern and what must hold
// around an occurrence w[s:e] of it.
type errorKey struct {
	word  string
	holds func(w string, s, e int) bool
}

var errorKeys = func() []errorKey {
	always := func(string, int, int) bool { return true }
	// ^\W*word\b: only non-word bytes between the line start and s.
	anchored := func(w string, s, e int) bool {
		if wordAt(w, e) {
			return false
		}
		for j := s - 1; j >= 0 && w[j] != '\n'; j-- {
			if isWord(w[j]) {
				return false
			}
		}
		return true
	}
	boundary := func(w string, s int) bool { return s == 0 || !isWord(w[s-1]) }
	// \bword\s*: (error, exception, fatal), or anchored.
	colon := func(w string, s, e int) bool {
		return boundary(w, s) && colonAfter(w, e) || anchored(w, s, e)
	}
	keys := []errorKey{
		{"error", colon},
		{"exception", colon},
		{"fatal", colon},
		{"panic", anchored},
		{"traceback", anchored},
		{"fail", func(w string, s, e int) bool { // \bfail(ed|ure)?\b
			if !boundary(w, s) {
				return false
			}
			for _, suf := range []string{"ed", "ure", ""} {
				if len(w)-e >= len(suf) && hasPrefixFold(w[e:], suf) && !wordAt(w, e+len(suf)) {
					return true
				}
			}
			return false
		}},
		{"not found", func(w string, s, e int) bool { return boundary(w, s) && !wordAt(w, e) }},
		{"no such file", always},
		{"permission denied", always},
		{"command not found", always},
		{"exit code", func(w string, _, e int) bool { return codeAfter(w, e, false) }},
		{"exit status", func(w string, _, e int) bool { return codeAfter(w, e, false) }},
		{"returncode", func(w string, _, e int) bool { return codeAfter(w, e, true) }},
	}
	for _, k := range []string{"错误", "失败", "エラー", "ошибка", "Ошибка", "ОШИБКА"} {
		keys = append(keys, errorKey{k, always}) // not folded: no ASCII letters
	}
	return keys
}()

// errorByFirst lists errorKeys by their first byte.
var errorByFirst = func() (t [256][]errorKey) {
	for _, k := range errorKeys {
		t[k.word[0]] = append(t[k.word[0]], k)
	}
	return t
}()

// errorPairs is the set of errorKeys' first two bytes, ASCII-lowercased.
var errorPairs = func() (set [1 << 16 / 64]uint64) {
	for _, k := range errorKeys {
		p := uint16(k.word[0])<<8 | uint16(k.word[1])
		set[p>>6] |= 1 << (p & 63)
	}
	return set
}()

var lowerASCII = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if 'A' <= i && i <= 'Z' {
			t[i] += 'a' - 'A'
		}
	}
	return t
}()

// hasPrefixFold reports whether s starts with the lowercase word, ASCII
// letters compared case-insensitively; len(s) >= len(word).
func hasPrefixFold(s, word string) bool {
	for i := 0; i < len(word); i++ {
		if lowerASCII[s[i]] != word[i] {
			return false
		}
	}
	return true
}

func isWord(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// wordAt reports whether l[i] is a word character (false past the end).
func wordAt(l string, i int) bool { return i < len(l) && isWord(l[i]) }

// colonAfter: \b\s*: after position e.
func colonAfter(l string, e int) bool {
	if wordAt(l, e) {
		return false
	}
	// \s also matches "\n", but a newline ends the line: no colon follows.
	for e < len(l) && (l[e] == ' ' || l[e] == '\t' || l[e] == '\r' || l[e] == '\f') {
		e++
	}
	return e < len(l) && l[e] == ':'
}

// codeAfter: :? ?[1-9] after "exit code"/"exit status", or "?: ?[1-9]
// after "returncode".
func codeAfter(l string, e int, returncode bool) bool {
	if returncode {
		if e < len(l) && l[e] == '"' {
			e++
		}
		if e >= len(l) || l[e] != ':' {
			return false
		}
		e++
	} else if e < len(l) && l[e] == ':' {
		e++
	}
	if e < len(l) && l[e] == ' ' {
		e++
	}
	return e < len(l) && '1' <= l[e] && l[e] <= '9'
}
