package jsonx

import (
	"bytes"
	"encoding/hex"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestRepairUTF8(t *testing.T) {
	cases := []struct {
		in, want string
		n        int
	}{
		{"plain", "plain", 0},
		{"é中😀\uFFFD", "é中😀\uFFFD", 0}, // a U+FFFD in the input is valid text
		{"a\xffb", "a\uFFFDb", 1},
		{"\xe2\x82", "\uFFFD", 1},                 // truncated 3-byte sequence: one maximal subpart
		{"\xe2\x82\"", "\uFFFD\"", 1},             // ... and the quote after it is kept
		{"\xf0\x9f\x98", "\uFFFD", 1},             // truncated 4-byte sequence
		{"\xf0\x9f\x98x", "\uFFFDx", 1},           //
		{"\xc0\xaf", "\uFFFD\uFFFD", 2},           // overlong: C0 never leads
		{"\xe0\x80\xaf", "\uFFFD\uFFFD\uFFFD", 3}, // E0 needs A0..BF next
		{"\xed\xa0\x80", "\uFFFD\uFFFD\uFFFD", 3}, // a surrogate encoded
		{"\xf4\x90\x80\x80", "\uFFFD\uFFFD\uFFFD\uFFFD", 4},
		{"\x80\x80", "\uFFFD\uFFFD", 2},
		{"{\"a\":\"x\xe9y\"}", "{\"a\":\"x\uFFFDy\"}", 1}, // Latin-1 é inside a JSON string
	}
	for _, c := range cases {
		got, n := RepairUTF8([]byte(c.in))
		if string(got) != c.want || n != c.n {
			t.Errorf("RepairUTF8(%q) = %q, %d; want %q, %d", c.in, got, n, c.want, c.n)
		}
	}
	valid := []byte("ok")
	if got, _ := RepairUTF8(valid); &got[0] != &valid[0] {
		t.Error("valid input was copied")
	}
}

// whatwgDecode is the WHATWG Encoding Standard's UTF-8 decoder (§9.1.1,
// with error mode "replacement"), transcribed step by step: an independent
// statement of the same rule RepairUTF8 implements with Unicode's table.
func whatwgDecode(b []byte) (string, int) {
	var out strings.Builder
	errs := 0
	cp, seen, needed := rune(0), 0, 0
	lower, upper := byte(0x80), byte(0xBF)
	for i := 0; i <= len(b); {
		if i == len(b) {
			if needed != 0 {
				out.WriteRune(utf8.RuneError)
				errs++
			}
			break
		}
		c := b[i]
		if needed == 0 {
			switch {
			case c <= 0x7F:
				out.WriteByte(c)
			case c >= 0xC2 && c <= 0xDF:
				needed, cp = 1, rune(c&0x1F)
			case c >= 0xE0 && c <= 0xEF:
				if c == 0xE0 {
					lower = 0xA0
				}
				if c == 0xED {
					upper = 0x9F
				}
				needed, cp = 2, rune(c&0xF)
			case c >= 0xF0 && c <= 0xF4:
				if c == 0xF0 {
					lower = 0x90
				}
				if c == 0xF4 {
					upper = 0x8F
				}
				needed, cp = 3, rune(c&0x7)
			default:
				out.WriteRune(utf8.RuneError)
				errs++
			}
			i++
			continue
		}
		if c < lower || c > upper {
			cp, seen, needed, lower, upper = 0, 0, 0, 0x80, 0xBF
			out.WriteRune(utf8.RuneError)
			errs++
			continue // the byte is processed again ("prepend")
		}
		lower, upper = 0x80, 0xBF
		cp = cp<<6 | rune(c&0x3F)
		seen++
		i++
		if seen == needed {
			out.WriteRune(cp)
			cp, seen, needed = 0, 0, 0
		}
	}
	return out.String(), errs
}

// trickyBytes makes byte strings dense in lead bytes, continuation bytes
// and the edges of Table 3-7.
func trickyBytes(rng *rand.Rand, n int) []byte {
	pool := []byte{'a', '"', '\\', 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF,
		0xE0, 0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF}
	b := make([]byte, n)
	for i := range b {
		b[i] = pool[rng.IntN(len(pool))]
	}
	return b
}

func TestRepairUTF8MatchesWHATWG(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		b := trickyBytes(rng, rng.IntN(12))
		want, wn := whatwgDecode(b)
		got, n := RepairUTF8(b)
		if string(got) != want || n != wn {
			t.Fatalf("RepairUTF8(%x) = %x, %d; WHATWG %x, %d", b, got, n, want, wn)
		}
	}
}

// TestRepairUTF8MatchesPython checks RepairUTF8 against CPython's
// bytes.decode("utf-8", "replace"), a decoder nobody here wrote.
func TestRepairUTF8MatchesPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed: the CPython cross-check is skipped")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var in bytes.Buffer
	var cases [][]byte
	for range 5000 {
		b := trickyBytes(rng, 1+rng.IntN(10))
		cases = append(cases, b)
		in.WriteString(hex.EncodeToString(b) + "\n")
	}
	cmd := exec.Command(py, "-c", `import sys
for line in sys.stdin:
    sys.stdout.write(bytes.fromhex(line.strip()).decode("utf-8", "replace").encode("utf-8").hex() + "\n")`)
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(cases) {
		t.Fatalf("python3 returned %d lines for %d cases", len(lines), len(cases))
	}
	for i, b := range cases {
		got, _ := RepairUTF8(b)
		if hex.EncodeToString(got) != lines[i] {
			t.Fatalf("RepairUTF8(%x) = %x, CPython %s", b, got, lines[i])
		}
	}
}

func FuzzRepairUTF8(f *testing.F) {
	f.Add([]byte("{\"a\":\"x\xe9y\"}"))
	f.Add([]byte("\xf0\x9f\x98\xe2\x82\xc0\xaf\xed\xa0\x80"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, n := RepairUTF8(b)
		want, wn := whatwgDecode(b)
		if string(got) != want || n != wn {
			t.Fatalf("RepairUTF8(%x) = %x, %d; WHATWG %x, %d", b, got, n, want, wn)
		}
		if !utf8.Valid(got) || (n == 0) != utf8.Valid(b) {
			t.Fatalf("RepairUTF8(%x) = %x, %d", b, got, n)
		}
		if again, n2 := RepairUTF8(got); n2 != 0 || !bytes.Equal(again, got) {
			t.Fatal("not idempotent")
		}
		if Valid(b) != Valid(got) {
			t.Fatalf("JSON validity changed: %q → %q", b, got)
		}
	})
}

func TestAppendStringKeep(t *testing.T) {
	if got := string(AppendStringKeep(nil, "a\xff\"b\n")); got != "\"a\xff\\\"b\\n\"" {
		t.Errorf("AppendStringKeep = %q", got)
	}
	if got := string(AppendStringKeep(nil, "é\"")); got != string(AppendString(nil, "é\"")) {
		t.Errorf("AppendStringKeep differs from AppendString on valid text: %q", got)
	}
}
