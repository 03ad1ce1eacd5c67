package jsonx

import (
	"strings"
	"testing"
)

// Python 3: repr(x) for each x.
func TestPyFloat(t *testing.T) {
	for f, want := range map[float64]string{
		1: "1.0", 0.1: "0.1", 1e16: "1e+16", 1e15: "1000000000000000.0", 1e-5: "1e-05",
		0.0001: "0.0001", -2.5: "-2.5", 123456789.125: "123456789.125",
	} {
		if got := PyFloat(f); got != want {
			t.Errorf("PyFloat(%v) = %s, want %s", f, got, want)
		}
	}
}

// Python 3: json.dumps(chr(r))[1:-1] for each r.
func TestPyEscape(t *testing.T) {
	for r, want := range map[rune]string{
		'"': `\"`, '\\': `\\`, '\n': `\n`, '\r': `\r`, '\t': `\t`, '\b': `\b`, '\f': `\f`,
		0: `\u0000`, 0x1b: `\u001b`, 0x1f: `\u001f`, 0x0b: `\u000b`,
	} {
		var b strings.Builder
		PyEscape(&b, r)
		if b.String() != want {
			t.Errorf("PyEscape(%U) = %s, want %s", r, b.String(), want)
		}
	}
}
