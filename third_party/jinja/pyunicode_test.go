package jinja

import (
	"bufio"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"unicode"
)

// pyUnicodeScript prints, one JSON array per line, a string and its
// upper, lower, title, capitalize, isdigit, islower, isupper, isalpha,
// isalnum and isspace in
// python3: every character its Unicode database assigns, then strings
// built around capital sigma, title-case digraphs and full mappings.
const pyUnicodeScript = `
import json, random, sys, unicodedata
print(json.dumps(unicodedata.unidata_version))
def row(s):
    print(json.dumps([s, s.upper(), s.lower(), s.title(), s.capitalize(), s.isdigit(), s.islower(), s.isupper(), s.isalpha(), s.isalnum(), s.isspace()]))
for c in range(0x110000):
    if unicodedata.category(chr(c)) not in ("Cn", "Cs"):
        row(chr(c))
pool = "ΣσςΑαaA1 .'’\u0308\u0301ʰªǅǆǄßİ²Ⅻΐﬁ-"
rng = random.Random(7)
for _ in range(50000):
    row("".join(rng.choice(pool) for _ in range(rng.randint(1, 7))))
`

// TestPyUnicodeMatchesPython compares the engine's str case mappings and
// predicates (pyunicode.go) with python3's, for every character both
// Unicode databases assign and 50,000 strings around the context rules.
// The comparison needs a python3 of the tables' Unicode version (Debian
// 12's 3.11: Unicode 14); with another it skips, saying so.
func TestPyUnicodeMatchesPython(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the comparison with python3 over every character runs in the full test")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: cannot compare the case tables with Python (apt-get install python3)")
	}
	cmd := exec.Command(py, "-c", pyUnicodeScript)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 1<<20)
	sc.Scan()
	var version string
	if err := json.Unmarshal(sc.Bytes(), &version); err != nil {
		t.Fatal(err)
	}
	if version != pyUnicodeVersion {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Skipf("python3 has Unicode %s, the tables were made from %s: compare with that Python, or regenerate them (python3 gen_pyunicode.py)", version, pyUnicodeVersion)
	}
	rows, bad := 0, 0
	for sc.Scan() {
		var r struct {
			s, upper, lower, title, capitalize string
			digit, lower2, upper2              bool
		}
		var a []any
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			t.Fatal(err)
		}
		r.s, r.upper, r.lower, r.title, r.capitalize = a[0].(string), a[1].(string), a[2].(string), a[3].(string), a[4].(string)
		r.digit, r.lower2, r.upper2 = a[5].(bool), a[6].(bool), a[7].(bool)
		if !goAssigns(r.s) {
			continue
		}
		rows++
		got := []any{pyUpper(r.s), pyLower(r.s), pyTitle(r.s), pyCapitalize(r.s), allDigits(r.s), pyIsLower(r.s), pyIsUpper(r.s),
			strMethod(t, "isalpha", r.s), strMethod(t, "isalnum", r.s), strMethod(t, "isspace", r.s)}
		want := []any{r.upper, r.lower, r.title, r.capitalize, r.digit, r.lower2, r.upper2, a[8], a[9], a[10]}
		names := []string{"upper", "lower", "title", "capitalize", "isdigit", "islower", "isupper", "isalpha", "isalnum", "isspace"}
		for i := range got {
			if got[i] != want[i] {
				bad++
				if bad <= 20 {
					t.Errorf("%q.%s(): got %v, python3 %v", r.s, names[i], got[i], want[i])
				}
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if rows < 100000 {
		t.Fatalf("only %d strings compared", rows)
	}
	t.Logf("%d strings × 10 operations compared with python3 (Unicode %s): %d differ", rows, version, bad)
}

// goAssigns reports whether Go's unicode tables assign every character of s.
func goAssigns(s string) bool {
	for _, r := range s {
		found := false
		for _, tab := range unicode.Categories {
			if unicode.Is(tab, r) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// strMethod is the engine's str method name of s, a bool.
func strMethod(t *testing.T, name, s string) bool {
	v, err := pyStrMethods[name](s, nil)
	if err != nil {
		t.Fatal(err)
	}
	return v.AsBool()
}

func allDigits(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool { return !pyIsDigit(r) }) < 0
}
