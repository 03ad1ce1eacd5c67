package jsonx

import (
	"strconv"
	"strings"
)

// PyFloat is Python's repr of a finite float, which json.dumps writes too:
// the shortest digits that read back, in fixed notation when the exponent
// is in [-4, 16), else in exponent notation; integral values keep a ".0".
// NaN and the infinities are the caller's: Python spells them nan/inf in
// repr and NaN/Infinity in json.dumps.
func PyFloat(f float64) string {
	e := strconv.FormatFloat(f, 'e', -1, 64)
	exp, _ := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
	if exp < -4 || exp >= 16 {
		return e
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

// PyEscape writes r as Python's json.dumps escapes it inside a string:
// '"' and '\\' with a backslash, \n \r \t \b \f by name, any other
// character below U+0020 as \u00XX. The caller writes every other
// character (as itself, or as \uXXXX under ensure_ascii).
func PyEscape(b *strings.Builder, r rune) {
	switch r {
	case '"':
		b.WriteString(`\"`)
	case '\\':
		b.WriteString(`\\`)
	case '\n':
		b.WriteString(`\n`)
	case '\r':
		b.WriteString(`\r`)
	case '\t':
		b.WriteString(`\t`)
	case '\b':
		b.WriteString(`\b`)
	case '\f':
		b.WriteString(`\f`)
	default:
		const hex = "0123456789abcdef"
		b.WriteString(`\u00`)
		b.WriteByte(hex[r>>4&0xf])
		b.WriteByte(hex[r&0xf])
	}
}
