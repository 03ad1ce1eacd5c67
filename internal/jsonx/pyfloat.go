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
