package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/schollz/progressbar/v3"
)

// TestProgressLineFitsTerminal renders the bar as the CLI configures it,
// at its widest (six-figure counts everywhere, the longest byte figures
// and times), and checks every rendered line fits the terminal: a longer
// line wraps, and each refresh then adds a line.
func TestProgressLineFitsTerminal(t *testing.T) {
	t.Parallel()
	parts := []string{"999.9k rec 999.9k/s", "comp 999.9k", "over 999.9k", "skip 999.9k", "uncomp 999.9k", "fail 999.9k", "rej 999.9k", "api 999.9k", "cache 999.9k"}
	ansi := regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)
	for _, cols := range []int{80, 100, 120, 200} {
		var buf bytes.Buffer
		bar := progressbar.NewOptions64(999<<20,
			progressbar.OptionSetWriter(&buf),
			progressbar.OptionShowBytes(true),
			progressbar.OptionSetWidth(8), // what the library narrows the bar to when the line is long
			progressbar.OptionSetPredictTime(true),
		)
		bar.Describe(fitDesc(parts, cols-barRest))
		bar.Set64(998 << 20)
		for _, line := range strings.FieldsFunc(ansi.ReplaceAllString(buf.String(), ""), func(r rune) bool { return r == '\r' || r == '\n' }) {
			if n := len([]rune(line)); n > cols {
				t.Errorf("%d columns: a %d-column line %q", cols, n, line)
			}
		}
	}
	if got := fitDesc(parts, 200); got != strings.Join(parts, " ") {
		t.Errorf("wide terminal drops parts: %q", got)
	}
}

func TestShort(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{0: "0", 9999: "9999", 12345: "12.3k", 999_949: "999.9k", 4_500_000: "4.5M"} {
		if got := short(n); got != want {
			t.Errorf("short(%d) = %q, want %q", n, got, want)
		}
	}
}
