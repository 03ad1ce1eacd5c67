package errline

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// errorRe is the specification of First, line by line.
var errorRe = regexp.MustCompile(`(?im)^\W*(error|fatal|panic|exception|traceback)\b|\b(error|exception|fatal)\s*:|\bfail(ed|ure)?\b|no such file|permission denied|command not found|\bnot found\b|exit (code|status):? ?[1-9]|returncode"?: ?[1-9]|错误|失败|エラー|ошибка`)

func TestIsErrorLineCases(t *testing.T) {
	cases := []struct {
		line string
		want bool
	}{
		{"Error: cannot open file\n", true},
		{"  ** FATAL ** disk full", true},
		{"panic: runtime error: index out of range", true},
		{"Traceback (most recent call last):", true},
		{"--- FAIL: TestA (0.01s)", true},
		{"3 failed, 10 passed", true},
		{"failure in step 2", true},
		{"failover completed", false},
		{"http.Error(w, err.Error(), 500)", false},
		{"errors are handled below", false},
		{"ValueError: bad value", false}, // no word boundary before "error"
		{"value error : x", true},
		{"bash: foo: command not found", true},
		{"cat: x: No such file or directory", true},
		{"mkdir: Permission denied", true},
		{"404 Not Found", true},
		{"notfound", false},
		{"Process exit code: 2", true},
		{"exit status 0", false},
		{`{"returncode": 1}`, true},
		{`"returncode": 0`, false},
		{"错误：无法连接到数据库", true},
		{"Ошибка подключения", true},
		{"all good", false},
		{"", false},
	}
	for _, c := range cases {
		if got := isErrorLine(c.line); got != c.want {
			t.Errorf("isErrorLine(%q) = %v, want %v", c.line, got, c.want)
		}
		if spec := errorRe.MatchString(c.line); spec != c.want {
			t.Errorf("the spec disagrees on %q: %v", c.line, spec)
		}
	}
}

// isErrorLine reports whether First finds line (one line) to be
// an error report.
func isErrorLine(line string) bool {
	_, ok := First(line)
	return ok
}

// specFirstLine is what First must return: the first line of w
// (as strings.Lines cuts them) that errorRe matches.
func specFirstLine(w string) (string, bool) {
	for l := range strings.Lines(w) {
		if errorRe.MatchString(l) {
			return l, true
		}
	}
	return "", false
}

// TestIsErrorLineMatchesSpec: random lines built from the pattern's own
// fragments agree with the regexp, one by one and as whole texts.
func TestIsErrorLineMatchesSpec(t *testing.T) {
	frags := []string{"error", "Error", "ERROR", "fatal", "panic", "exception", "traceback", "fail", "failed", "failure",
		"failover", "not found", "notfound", "no such file", "permission denied", "command not found", "exit code",
		"exit status", "returncode", `"`, ":", " ", "  ", "\t", "1", "0", "9", "_", "x", "-", "*", "(", "错误", "Ошибка", "é", "\n"}
	r := rand.New(rand.NewPCG(1, 2))
	n := 200000
	if testing.Short() {
		n = 20000 // the first tenth of the same lines
	}
	for range n {
		var b strings.Builder
		for range 1 + r.IntN(6) {
			b.WriteString(frags[r.IntN(len(frags))])
		}
		for l := range strings.Lines(b.String()) {
			if got, want := isErrorLine(l), errorRe.MatchString(l); got != want {
				t.Fatalf("isErrorLine(%q) = %v, spec says %v", l, got, want)
			}
		}
		checkFirstLine(t, b.String())
	}
}

func checkFirstLine(t *testing.T, w string) {
	t.Helper()
	got, gok := First(w)
	want, wok := specFirstLine(w)
	if got != want || gok != wok {
		t.Fatalf("First(%q) = %q, %v; spec says %q, %v", w, got, gok, want, wok)
	}
}

// TestFirstErrorLineTexts: the earliest matching line wins whichever
// alternative matches it, and checks after a keyword stop at its line.
func TestFirstErrorLineTexts(t *testing.T) {
	for _, w := range []string{
		"ok\nall good\nexit code: 2\nError: late\n",
		"fine\n  warning: x failed\npanic: y\n",
		"error\n: not a colon after error on the same line\n",
		"exit code\n1\nreturncode\n: 1\n",
		"line one\n错误\nfatal: later\n",
		"no errors here\nnothing\n",
		"trailing Traceback",
		"",
	} {
		checkFirstLine(t, w)
	}
}

func FuzzIsErrorLine(f *testing.F) {
	f.Add("Error: x")
	f.Add("exit code: 3")
	f.Fuzz(func(t *testing.T, l string) {
		if strings.ContainsAny(l, "\u017f\u212a") {
			return // folded by the regexp only (documented)
		}
		for line := range strings.Lines(l) {
			if got, want := isErrorLine(line), errorRe.MatchString(line); got != want {
				t.Fatalf("isErrorLine(%q) = %v, spec says %v", line, got, want)
			}
		}
		checkFirstLine(t, l)
	})
}

// BenchmarkErrorLine: the error search on a 20 KB test log with no error
// line (both 4 KiB windows searched to the end), the common case.
func BenchmarkErrorLine(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < 20000; i++ {
		fmt.Fprintf(&sb, "ok  \tgithub.com/example/pkg%d\t0.%03ds coverage: %d%% of statements in the rest of the tree\n", i, i, i%100)
	}
	s := sb.String()
	b.SetBytes(2 * Window)
	for b.Loop() {
		if _, ok := Find(s); ok {
			b.Fatal("found an error line")
		}
	}
}
