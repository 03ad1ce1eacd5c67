package tokenize

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		wantErr bool
	}{
		{name: "o200k_base"},
		{name: "cl100k_base"},
		{name: "chars4"},
		{name: "p50k_base", wantErr: true},
		{name: "", wantErr: true},
		{name: "O200K_BASE", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tt.name)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("New(%q) = %v, want error", tt.name, c)
				}
				for _, n := range Names() {
					if !strings.Contains(err.Error(), n) {
						t.Errorf("error %q does not list %q", err, n)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if e, ok := c.(*Encoding); ok && e.Name() != tt.name {
				t.Errorf("Name() = %q", e.Name())
			}
			again, _ := New(tt.name)
			if again != c {
				t.Errorf("New(%q) twice returned different counters", tt.name)
			}
		})
	}
	if got := Names(); !slices.Equal(got, []string{"chars4", "cl100k_base", "o200k_base"}) {
		t.Errorf("Names() = %v", got)
	}
}

// TestLazyLoad checks, in a fresh process running only this test, that
// loading o200k_base leaves cl100k_base unparsed.
func TestLazyLoad(t *testing.T) {
	if os.Getenv("TOKENIZE_LAZY_CHILD") == "1" {
		if _, err := New(O200kBase); err != nil {
			t.Fatal(err)
		}
		if encodings[O200kBase].enc == nil {
			t.Fatal("o200k_base not loaded after New")
		}
		if encodings[CL100kBase].enc != nil {
			t.Fatal("cl100k_base loaded although only o200k_base was asked for")
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestLazyLoad$", "-test.v")
	cmd.Env = append(os.Environ(), "TOKENIZE_LAZY_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestLazyLoad") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

func TestChars4(t *testing.T) {
	tests := []struct {
		name string
		text string
		want int
	}{
		{"empty", "", 0},
		{"three", "abc", 0},
		{"four", "abcd", 1},
		{"multibyte", "中文字符中文字符", 2},
		{"emoji", "🎉🎉🎉🎉", 1},
		{"invalid_one_per_subpart", "\xe2\x82\xe2\x82\xe2\x82\xe2\x82", 1},
		{"invalid_one_per_byte", "\x80\x80\x80\x80", 1},
	}
	c, _ := New(Chars4)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := c.Count(tt.text); got != tt.want {
				t.Errorf("Count(%q) = %d, want %d", tt.text, got, tt.want)
			}
		})
	}
}

func TestReplaceInvalid(t *testing.T) {
	const r = "\uFFFD"
	tests := []struct {
		name, in, want string
	}{
		{"valid", "héllo 中 🎉", "héllo 中 🎉"},
		{"lone_continuation", "a\x80b", "a" + r + "b"},
		{"two_continuations", "\x80\xbf", r + r},
		{"truncated_3byte", "\xe2\x82x", r + "x"},
		{"truncated_4byte_at_end", "x\xf0\x9f\x98", "x" + r},
		{"overlong_2byte", "\xc0\xaf", r + r},
		{"overlong_3byte", "\xe0\x80\xaf", r + r + r},
		{"surrogate", "\xed\xa0\x80", r + r + r},
		{"above_max", "\xf4\x90\x80\x80", r + r + r + r},
		{"bad_lead", "\xf5\xff", r + r},
		{"valid_fffd_kept", "a\uFFFDb", "a" + r + "b"},
		{"lead_then_ascii", "\xc3(", r + "("},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ReplaceInvalid(tt.in); got != tt.want {
				t.Errorf("ReplaceInvalid(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestCountArbitraryBytes checks that Count never panics on arbitrary bytes
// and always equals len(Encode).
func TestCountArbitraryBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, name := range []string{O200kBase, CL100kBase} {
		enc := mustEncoding(t, name)
		for range 2000 {
			b := make([]byte, rng.IntN(300))
			for i := range b {
				switch rng.IntN(3) {
				case 0:
					b[i] = byte(rng.IntN(256))
				case 1:
					b[i] = " \n\r\t'sSaZ0!"[rng.IntN(11)]
				default:
					b[i] = byte(0x80 + rng.IntN(0x80))
				}
			}
			s := string(b)
			if n, ids := enc.Count(s), enc.Encode(s); n != len(ids) {
				t.Fatalf("%s %q: Count = %d, len(Encode) = %d", name, s, n, len(ids))
			}
		}
	}
}

func FuzzCount(f *testing.F) {
	for _, s := range []string{"", "a", "\xff", "\xe2\x82", "hello 'S\r\n  ", strings.Repeat("ab", 100)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, name := range []string{O200kBase, CL100kBase} {
			enc := mustEncoding(t, name)
			ids := enc.Encode(s)
			if n := enc.Count(s); n != len(ids) {
				t.Fatalf("%s: Count = %d, len(Encode) = %d", name, n, len(ids))
			}
			if len(s) > 0 && len(ids) == 0 {
				t.Fatalf("%s: no tokens for %q", name, s)
			}
		}
	})
}

// TestMergeLargeMatchesSmall checks the heap merge against the reference's
// linear scan on pieces short enough for both.
func TestMergeLargeMatchesSmall(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	alphabets := []string{"ab", "abc ", "aaaaab", "xyzxyz", "中文", "-=", "0123456789", "the quick brown fox"}
	for _, name := range []string{O200kBase, CL100kBase} {
		v := mustEncoding(t, name).v
		for range 3000 {
			alpha := []rune(alphabets[rng.IntN(len(alphabets))])
			var b strings.Builder
			for b.Len() < 2+rng.IntN(smallPiece-4) {
				b.WriteRune(alpha[rng.IntN(len(alpha))])
			}
			p := b.String()
			if len(p) > smallPiece {
				continue
			}
			small, ns := v.mergeSmall(p, nil, true)
			large, nl := v.mergeLarge(p, nil, true)
			if !slices.Equal(small, large) || ns != nl || ns != len(small) {
				t.Fatalf("%s %q: linear %v (%d), heap %v (%d)", name, p, small, ns, large, nl)
			}
		}
	}
}

// TestLongPieces covers inputs that are one piece of 100 KB or more (the
// heap merge path); equality with the reference on long pieces is checked by
// the golden long_* cases, here Count and Encode must agree and be sane.
func TestLongPieces(t *testing.T) {
	tests := []struct {
		name string
		text string
	}{
		{"letters", strings.Repeat("abcdefghij", 10000)},
		{"one_letter", strings.Repeat("a", 100000)},
		{"cjk", strings.Repeat("我需要为生成一张发票", 5000)},
		{"punct", strings.Repeat("-=+*/<>!?", 10000)},
		{"spaces", strings.Repeat(" ", 100000)},
		{"spaces_then_letter", strings.Repeat(" ", 100000) + "x"},
		{"newlines", strings.Repeat("\n", 100000)},
	}
	for _, name := range []string{O200kBase, CL100kBase} {
		enc := mustEncoding(t, name)
		for _, tt := range tests {
			t.Run(name+"/"+tt.name, func(t *testing.T) {
				ids := enc.Encode(tt.text)
				n := enc.Count(tt.text)
				if n != len(ids) || n == 0 || n > len(tt.text) {
					t.Fatalf("Count = %d, len(Encode) = %d, len(text) = %d", n, len(ids), len(tt.text))
				}
			})
		}
	}
}

func TestCountAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under -race; run without -race")
	}
	texts := []struct {
		name, text string
	}{
		{"prose", "The quick brown fox jumps over the lazy dog. It's 5 o'clock."},
		{"code", "func main() {\n\tfmt.Println(\"hello\")\n}\n"},
		{"rare_words", "Supercalifragilisticexpialidocious pneumonoultramicroscopic zzqxj"},
		{"long_piece", strings.Repeat("abcdefghij", 200)},
		{"cjk", "我需要为John Doe生成一张发票。"},
		{"invalid_utf8", "caf\xe9 \xff\xfe ok"},
	}
	for _, name := range []string{O200kBase, CL100kBase} {
		enc := mustEncoding(t, name)
		for _, tt := range texts {
			t.Run(name+"/"+tt.name, func(t *testing.T) {
				enc.Count(tt.text) // warm the pools
				if a := testing.AllocsPerRun(100, func() { enc.Count(tt.text) }); a != 0 {
					t.Errorf("Count allocates %.1f times per call", a)
				}
			})
		}
	}
}
