package jsonx

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestUnquote(t *testing.T) {
	cases := []struct{ in, want string }{
		{`"plain"`, "plain"},
		{`"a\"b\\c\/d\b\f\n\r\t"`, "a\"b\\c/d\b\f\n\r\t"},
		{`"\u00e9\u4e2d"`, "é中"},
		{`"\ud83d\ude00"`, "😀"},
		{`"\ud83d x"`, "\ufffd x"},
		{"\"bad \xff byte\"", "bad \xff byte"},
	}
	for _, c := range cases {
		got, ok := Unquote([]byte(c.in))
		if !ok || got != c.want {
			t.Errorf("Unquote(%s) = %q, %v; want %q", c.in, got, ok, c.want)
		}
	}
}

func TestAppendQuotedRoundTrip(t *testing.T) {
	for _, s := range []string{"", "a\"b\\c\n\x01\x1f", "é中😀<>&", "\u2028"} {
		q := AppendString(nil, s)
		var back string
		if err := json.Unmarshal(q, &back); err != nil || back != s {
			t.Errorf("%q → %s → %q (%v)", s, q, back, err)
		}
	}
	if got := string(AppendString(nil, "a\xffb")); got != "\"a\ufffdb\"" {
		t.Errorf("invalid UTF-8 not replaced: %s", got)
	}
}

// quoteSpec is AppendString's specification, rune by rune: '"', '\\' and
// control bytes escaped (short forms for \n \r \t), an invalid UTF-8 byte
// as U+FFFD, everything else as it is.
func quoteSpec(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteString(`\` + string(r))
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\ufffd"):
			b.WriteString("\ufffd")
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func FuzzAppendString(f *testing.F) {
	f.Add("plain ascii text that is longer than eight bytes\n\"quoted\" \\ and \x01 é中😀 \xff end")
	f.Add(strings.Repeat("abcdefgh", 5) + "\x7f\x80")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(AppendString(nil, s)), quoteSpec(s); got != want {
			t.Fatalf("AppendString(%q) = %s, want %s", s, got, want)
		}
		if got, want := string(AppendStringKeep(nil, s)), keepSpec(s); got != want {
			t.Fatalf("AppendStringKeep(%q) = %s, want %s", s, got, want)
		}
	})
}

// keepSpec is AppendStringKeep byte by byte: the ASCII bytes as
// AppendString escapes them, every other byte as it is.
func keepSpec(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < utf8.RuneSelf {
			q := quoteSpec(string(c))
			b.WriteString(q[1 : len(q)-1])
		} else {
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// pyDumps is json.dumps(s, ensure_ascii=False) of valid UTF-8 s, written
// rune by rune with PyEscape: the reference UnquotePy's report is checked
// against.
func pyDumps(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		if r < 0x20 || r == '"' || r == '\\' {
			PyEscape(&b, r)
		} else {
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// TestUnquotePy: a literal is reported as json.dumps's exactly when it is
// the one json.dumps(s, ensure_ascii=False) writes for what it decodes
// to; the decoded text is Unquote's either way.
func TestUnquotePy(t *testing.T) {
	for _, c := range []struct {
		in string
		py bool
	}{
		{`"plain é中"`, true},
		{`""`, true},
		{`"a\"b\\c\b\f\n\r\t"`, true},
		{`"\u0000\u001b\u001f\u000b"`, true},
		{`"\u001B"`, false}, // upper-case hex
		{`"\u000a"`, false}, // \n has a short form
		{`"\u0008"`, false}, // \b too
		{`"a\/b"`, false},
		{`"\u00e9"`, false},
		{`"\ud83d\ude00"`, false},
		{`"\u0020"`, false},
		{`"x\ny"`, true},
	} {
		s, py, ok := UnquotePy([]byte(c.in))
		want, _ := Unquote([]byte(c.in))
		if !ok || s != want || py != c.py {
			t.Errorf("UnquotePy(%s) = %q, %v, %v; want %q, %v", c.in, s, py, ok, want, c.py)
		}
		if py && pyDumps(s) != c.in {
			t.Errorf("UnquotePy(%s): json.dumps writes %s", c.in, pyDumps(s))
		}
	}
}

// FuzzUnquotePy: on valid UTF-8 string literals, UnquotePy decodes as
// Unquote (AppendUnquotePy too, after what its buffer holds), and reports json.dumps's form exactly when writing the decoded
// text again as json.dumps does gives the literal back.
func FuzzUnquotePy(f *testing.F) {
	for _, s := range []string{`"a\nb"`, `"\u00e9\ud83d\ude00"`, `"x\\y\"z"`, `"\u001f\u001F"`, `"plain"`, `"a\/b\b"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid([]byte(s)) || len(s) == 0 || s[0] != '"' || skipString([]byte(s), 0) != len(s) || !utf8.ValidString(s) {
			return
		}
		got, py, ok := UnquotePy([]byte(s))
		want, ok2 := Unquote([]byte(s))
		if ok != ok2 || got != want {
			t.Fatalf("UnquotePy(%q) = %q, %v; Unquote %q, %v", s, got, ok, want, ok2)
		}
		if py != (pyDumps(got) == s) {
			t.Fatalf("UnquotePy(%q) says json.dumps's form %v; json.dumps writes %q", s, py, pyDumps(got))
		}
		app, apy, aok := AppendUnquotePy([]byte("pre"), []byte(s))
		if string(app) != "pre"+got || apy != py || aok != ok {
			t.Fatalf("AppendUnquotePy(pre, %q) = %q, %v, %v; UnquotePy %q, %v, %v", s, app, apy, aok, got, py, ok)
		}
	})
}

// TestIndexSpecial: the first '"', '\\' or control byte, at every place
// around the eight-byte words and with bytes above 0x7f before it.
func TestIndexSpecial(t *testing.T) {
	for n := range 20 {
		for at := -1; at < n; at++ {
			for _, c := range []byte{'"', '\\', 0, '\n', 0x1f} {
				b := []byte(strings.Repeat("aé ~\x7f", n)[:n])
				if at >= 0 {
					b[at] = c
				}
				// The filler holds no byte to escape (é is 0xc3 0xa9).
				if got := IndexSpecial(string(b)); got != at {
					t.Fatalf("IndexSpecial(%q) = %d, want %d", b, got, at)
				}
			}
		}
	}
}
