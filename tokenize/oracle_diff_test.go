package tokenize

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/trajcompress/trajcompress/internal/testenv"
)

// goClass is a class flag with Go's own (Unicode 15.0) table for it.
type goClass struct {
	t    *unicode.RangeTable
	flag uint8
}

// go15Differs reports whether s holds a code point whose flags under Go's
// tables differ from ours(r).
func go15Differs(s string, classes []goClass, ours func(rune) uint8) bool {
	for _, r := range s {
		var f uint8
		for _, c := range classes {
			if unicode.Is(c.t, r) {
				f |= c.flag
			}
		}
		if f != ours(r) {
			return true
		}
	}
	return false
}

// inUnicode16 reports whether s holds a code point whose class differs
// between Go's Unicode 15.0 tables (the oracle's) and the Unicode 16.0
// tables of the reference and this package, where the two legitimately
// differ.
func inUnicode16(s string) bool {
	initClasses()
	return go15Differs(s, []goClass{{unicode.Lu, cLu}, {unicode.Ll, cLl}, {unicode.Lt, cLt}, {unicode.Lm, cLm},
		{unicode.Lo, cLo}, {unicode.M, cM}, {unicode.N, cN}, {unicode.White_Space, cWS}}, classOf)
}

func checkOracle(t *testing.T, name, label, text string) bool {
	t.Helper()
	want := oracleEncode(t, name, text)
	got := mustEncoding(t, name).Encode(text)
	if !slices.Equal(got, want) {
		t.Errorf("%s %s %.200q: differs from tiktoken-go at token %d\n got %v\nwant %v", name, label, text, firstDiff(got, want), got, want)
		return false
	}
	return true
}

// randomText builds valid UTF-8 from pieces chosen to stress the split
// patterns: letter case runs, marks, digits, apostrophes, whitespace runs
// with \r\n, punctuation, CJK and emoji.
func randomText(rng *rand.Rand, n int) string {
	atoms := []string{
		"a", "b", "z", "A", "Q", "Z", "é", "É", "ǅ", "ʰ", "中", "カ", "ー", "\u0301", "\u0300", "क्ष", "ก\u0e31",
		"0", "7", "٣", "½", "Ⅻ", "²",
		"'", "'s", "'S", "'ll", "'LL", "'ſ", "'re", "'Ve", "'d", "'m", "'t",
		" ", " ", "  ", "\t", "\n", "\r\n", "\r", "\u00a0", "\u3000", "\u2028", "\u0085", "\v", "\f",
		"!", ".", ",", "/", "//", "\\", "-", "_", "(", ")", "{", "}", "\"", "<|endoftext|>", "...", "?!",
		"🎉", "👍🏽", "\u200b", "\ufeff", "\x00", "\x7f", "\U0001F1FA\U0001F1F8",
		"hello", "World", "HTTP", "JSONParser", "snake_case", "ONE'S", "don't",
	}
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(atoms[rng.IntN(len(atoms))])
	}
	return b.String()
}

func TestAgainstOracle(t *testing.T) {
	for _, name := range []string{O200kBase, CL100kBase} {
		t.Run(name+"/golden", func(t *testing.T) {
			for _, g := range raceSample(loadGolden(t)) {
				if utf8.ValidString(g.raw) && !inUnicode16(g.raw) {
					checkOracle(t, name, g.Name, g.raw)
				}
			}
		})
		t.Run(name+"/random", func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(len(name))))
			for i := range raceOr(3000/raceEvery, 3000) {
				s := randomText(rng, 1+rng.IntN(120))
				if !checkOracle(t, name, "random", s) && i > 0 {
					return
				}
			}
		})
		t.Run(name+"/real", func(t *testing.T) {
			dir := testenv.RealDataDir()
			if dir == "" {
				t.Skip("shared real data absent")
			}
			texts := realTurnTexts(t, dir)
			// The oracle is slow, so take a deterministic sample of about
			// 1.5 MB (under -short its first 300 KB, under -race 40 KB),
			// each text cut to 8 KB at a code point boundary.
			rng := rand.New(rand.NewPCG(7, 7))
			budget, checked := 1_500_000, 0
			if testing.Short() {
				budget = 300_000
			}
			budget = raceOr(40_000, budget)
			for budget > 0 {
				s := texts[rng.IntN(len(texts))]
				if len(s) > 8<<10 {
					cut := 8 << 10
					for cut > 0 && !utf8.RuneStart(s[cut]) {
						cut--
					}
					s = s[:cut]
				}
				budget -= len(s)
				if !utf8.ValidString(s) || inUnicode16(s) {
					continue
				}
				checked++
				if !checkOracle(t, name, "real", s) {
					return
				}
			}
			t.Logf("%d real turn texts agree", checked)
		})
	}
}

// FuzzAgainstOracle checks that the engine and pkoukk/tiktoken-go agree on
// valid UTF-8 (inputs bounded: the oracle is quadratic on long pieces).
func FuzzAgainstOracle(f *testing.F) {
	for _, s := range []string{"hello world", "I'M 'ſ 'LL", "  \r\n\t x", "中文 🎉 ǅa", "123456 ½", "a\u0301B\u0300c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 512 || !utf8.ValidString(s) || inUnicode16(s) {
			t.Skip()
		}
		for _, name := range []string{O200kBase, CL100kBase} {
			checkOracle(t, name, "fuzz", s)
		}
	})
}
