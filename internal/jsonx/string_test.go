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
	})
}
