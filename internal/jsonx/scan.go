package jsonx

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/bits"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// The scanner below walks JSON that encoding/json.Valid has already
// accepted, so it only needs to find where values start and end; it never
// has to report syntax errors. Working on byte spans is what lets untouched
// fields be written back byte for byte.

var errNotObject = errors.New("not a JSON object")

// IsSpace reports whether c is JSON white space.
func IsSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && IsSpace(b[i]) {
		i++
	}
	return i
}

// skipString returns the index just past the string starting at b[i] == '"'.
// It jumps from quote to quote with bytes.IndexByte (vectorised), and a
// quote preceded by an odd number of backslashes is escaped.
func skipString(b []byte, i int) int {
	i++
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return len(b)
		}
		q := i + j
		k := q
		for k > i && b[k-1] == '\\' {
			k--
		}
		if (q-k)%2 == 0 {
			return q + 1
		}
		i = q + 1
	}
}

// skipValue returns the index just past the value starting at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	default: // number, true, false, null
		for i < len(b) {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
			i++
		}
		return i
	}
}

// Member is one "key": value pair of an object, as spans into the bytes
// that were scanned.
type Member struct {
	Key        []byte // the key's raw bytes, quotes included
	KeyStart   int    // offset of Key
	Start, End int    // the value's span
	// Elems lists an array value's elements when [ValidMembers] was asked
	// to list them; nil otherwise.
	Elems []Elem
}

// Elem is one element of an array, as a span; for an object, when listed,
// its members (with offsets into the same bytes).
type Elem struct {
	Start, End int
	Object     bool
	Members    []Member
}

// Members lists the members of the object starting at b[i] in order. It
// also returns the index of the closing brace.
func Members(b []byte, i int) ([]Member, int, error) {
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != '{' {
		return nil, 0, errNotObject
	}
	var out []Member
	i = skipSpace(b, i+1)
	for i < len(b) && b[i] != '}' {
		ks := i
		i = skipString(b, i)
		key := b[ks:i]
		i = skipSpace(b, i)
		i = skipSpace(b, i+1) // ':'
		vs := i
		i = skipValue(b, i)
		out = append(out, Member{Key: key, KeyStart: ks, Start: vs, End: i})
		i = skipSpace(b, i)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
	return out, i, nil
}

// Elements lists the spans of the elements of the array starting at b[i].
func Elements(b []byte, i int) [][2]int {
	var out [][2]int
	i = skipSpace(b, i+1)
	for i < len(b) && b[i] != ']' {
		s := i
		i = skipValue(b, i)
		out = append(out, [2]int{s, i})
		i = skipSpace(b, i)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
	return out
}

// KeyIs reports whether the raw quoted key equals name. Keys with escapes
// are decoded first.
func KeyIs(raw []byte, name string) bool {
	if len(raw) == len(name)+2 && string(raw[1:len(raw)-1]) == name {
		return true
	}
	for _, c := range raw {
		if c == '\\' {
			s, _ := Unquote(raw)
			return s == name
		}
	}
	return false
}

// Find returns the member named name. When a key repeats, the last one
// wins, as in Python's json (what trainers read) and encoding/json.
func Find(ms []Member, name string) (Member, bool) {
	for i := len(ms) - 1; i >= 0; i-- {
		if KeyIs(ms[i].Key, name) {
			return ms[i], true
		}
	}
	return Member{}, false
}

// Unquote decodes a JSON string literal (quotes included), such as a value
// found by [Lookup]. Invalid UTF-8 bytes are kept as they are, so the
// tokenizer sees exactly what the file holds; a lone surrogate escape
// becomes U+FFFD. The result shares raw's memory when raw has no escapes:
// raw must not change afterwards.
func Unquote(raw []byte) (string, bool) {
	s, _, ok := UnquotePy(raw)
	return s, ok
}

// UnquotePy is [Unquote] that also reports whether raw is the literal
// Python's json.dumps(s, ensure_ascii=False) writes for the decoded s: its
// escapes are only \", \\, \b, \f, \n, \r, \t and, for the other
// bytes below 0x20, \u00xx in lower-case hex (no \/, no \u escape of
// anything else), and it holds no raw byte below 0x20 (valid JSON holds
// none; it is not checked). Then raw itself is s written by json.dumps
// (a template's tojson), and need not be written again.
func UnquotePy(raw []byte) (string, bool, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false, false
	}
	s := raw[1 : len(raw)-1]
	esc := bytes.IndexByte(s, '\\')
	if esc < 0 {
		// No escapes: the text is the bytes themselves. The caller never
		// changes raw afterwards (the contract above), so the string can
		// share its memory instead of copying it.
		return unsafe.String(unsafe.SliceData(s), len(s)), true, true
	}
	out, py, ok := unquoteFrom(make([]byte, 0, len(s)), s, esc)
	if !ok {
		return "", false, false
	}
	// out is this call's own buffer and is never written again: the
	// string takes it over instead of copying it.
	return unsafe.String(unsafe.SliceData(out), len(out)), py, true
}

// AppendUnquotePy is [UnquotePy] appending the decoded text to dst (which
// needs at most len(raw)-2 more bytes) instead of making a string of it:
// a caller decoding many literals can give them one buffer.
func AppendUnquotePy(dst, raw []byte) ([]byte, bool, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return dst, false, false
	}
	s := raw[1 : len(raw)-1]
	esc := bytes.IndexByte(s, '\\')
	if esc < 0 {
		return append(dst, s...), true, true
	}
	return unquoteFrom(dst, s, esc)
}

// unquoteFrom appends to dst the text of a literal's inside s, whose first
// escape is at esc.
func unquoteFrom(dst, s []byte, esc int) ([]byte, bool, bool) {
	py := true
	out := append(dst, s[:esc]...)
	for i := esc; i < len(s); {
		if s[i] != '\\' {
			// Copy the run up to the next escape in one go.
			j := bytes.IndexByte(s[i:], '\\')
			if j < 0 {
				out = append(out, s[i:]...)
				break
			}
			out = append(out, s[i:i+j]...)
			i += j
		}
		if i+1 >= len(s) {
			return dst, false, false
		}
		switch s[i+1] {
		case '"', '\\':
			out = append(out, s[i+1])
		case '/':
			out = append(out, '/')
			py = false
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(s, i+2)
			if !ok {
				return dst, false, false
			}
			if py && !pyControlEscape(s[i+2:i+6], r) {
				py = false
			}
			i += 6
			if utf16.IsSurrogate(r) {
				if r2, ok2 := lowSurrogate(s, i); ok2 {
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						out = utf8.AppendRune(out, dec)
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
			continue
		default:
			return dst, false, false
		}
		i += 2
	}
	return out, py, true
}

// pyControlEscape reports whether the four hex digits h of a \u escape of
// r are how json.dumps writes r: a byte below 0x20 that has no short
// escape (\b, \f, \n, \r, \t), in lower case.
func pyControlEscape(h []byte, r rune) bool {
	const hex = "0123456789abcdef"
	switch r {
	case '\b', '\f', '\n', '\r', '\t':
		return false
	}
	return r < 0x20 && h[0] == '0' && h[1] == '0' && h[2] == hex[r>>4] && h[3] == hex[r&0xf]
}

// IndexSpecial returns the index of the first byte of s that JSON must
// escape in a string ('"', '\\' or a byte below 0x20), or -1: eight
// bytes at a time.
func IndexSpecial(s string) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s[i:]), 8))
		if m := specialMask(x); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' {
			return i
		}
	}
	return -1
}

func lowSurrogate(s []byte, i int) (rune, bool) {
	if i+1 < len(s) && s[i] == '\\' && s[i+1] == 'u' {
		return hex4(s, i+2)
	}
	return 0, false
}

func hex4(s []byte, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range s[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// AppendString appends s to dst as a JSON string and returns the extended
// slice. Like Go's encoder it writes UTF-8 as is, but it does not escape
// <, > and &, so text reads as in the input; invalid UTF-8 bytes become
// U+FFFD (JSON output must be valid). Every JSON string trajcompress writes
// goes through it.
func AppendString(dst []byte, s string) []byte { return appendString(dst, s, true) }

// AppendStringKeep is [AppendString] that keeps invalid UTF-8 bytes as
// they are instead of replacing them: for readers that hand on text as the
// file holds it (a Parquet or Arrow string value), so that the one repair
// step ([RepairUTF8], in package pipeline) sees and counts it, as it does
// for a JSONL line. Its output is JSON only when s is valid UTF-8.
func AppendStringKeep(dst []byte, s string) []byte { return appendString(dst, s, false) }

func appendString(dst []byte, s string, repair bool) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	// Bytes >= 0x80 stop the word loop only when invalid UTF-8 is to be
	// repaired; kept as they are, they are never escaped.
	var stopHigh uint64 = high8
	if !repair {
		stopHigh = 0
	}
	start := 0
	for i := 0; i < len(s); {
		// 8 bytes at a time: no byte to escape (and, to repair, none >=
		// 0x80).
		for i+8 <= len(s) {
			x := binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s[i:]), 8))
			if specialMask(x)|x&stopHigh != 0 {
				break
			}
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		if !repair {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\ufffd"...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// Lookup returns the raw JSON value of key in the JSON object obj, and
// false when obj is not a valid JSON object or has no such key. It reads
// obj without copying or modifying it.
func Lookup(obj []byte, key string) ([]byte, bool) {
	vals, ok := Fields(obj, key)
	if !ok || vals[0] == nil {
		return nil, false
	}
	return vals[0], true
}

// Fields is [Lookup] for several keys of one object, validating and
// scanning it once: vals[i] is the raw value of keys[i], or nil when the
// object has no such key. ok is false when obj is not a valid JSON object.
func Fields(obj []byte, keys ...string) (vals [][]byte, ok bool) {
	ms, _, ok := ValidMembers(obj, nil)
	if !ok {
		return nil, false
	}
	vals = make([][]byte, len(keys))
	for i, k := range keys {
		if m, ok := Find(ms, k); ok {
			vals[i] = obj[m.Start:m.End]
		}
	}
	return vals, true
}

// NumbersFitFloat64 reports whether every number in the valid JSON value b
// parses as a float64 (strconv.ParseFloat without error), which is when
// encoding/json can decode b into interface values (1e400 cannot be).
func NumbersFitFloat64(b []byte) bool {
	for i := 0; i < len(b); {
		switch c := b[i]; {
		case c == '"':
			i = skipString(b, i)
		case c == '-' || isDigit(c):
			j, _ := validNumber(b, i)
			if _, err := strconv.ParseFloat(string(b[i:j]), 64); err != nil {
				return false
			}
			i = max(j, i+1)
		default:
			i++
		}
	}
	return true
}

// SkipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func SkipSpace(b []byte, i int) int { return skipSpace(b, i) }

// SkipString returns the index just past the JSON string starting at
// b[i] (the opening quote).
func SkipString(b []byte, i int) int { return skipString(b, i) }

// SkipValue returns the index just past the JSON value starting at b[i].
func SkipValue(b []byte, i int) int { return skipValue(b, i) }
