package tokenize

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// partTexts is random text with the atoms a chat template's framing puts
// around a turn's text.
func partTexts(seed uint64, n int) []string {
	rng := rand.New(rand.NewPCG(seed, 7))
	frames := []string{"user\n", "assistant\n", "\n", "\n\n", "\n</x>", "}\n", " ", "\t", "\u00a0", "x", "\u0301", "'s", "12"}
	out := make([]string, 0, n)
	for range n {
		var b strings.Builder
		b.WriteString(frames[rng.IntN(len(frames))])
		b.WriteString(randomText(rng, 1+rng.IntN(60)))
		b.WriteString(frames[rng.IntN(len(frames))])
		out = append(out, strings.ReplaceAll(b.String(), "<|endoftext|>", "<|end"))
	}
	return out
}

// runeStarts returns the offsets of s's code points, and len(s).
func runeStarts(s string) []int {
	var at []int
	for i := range s {
		at = append(at, i)
	}
	return append(at, len(s))
}

// The property CountStretchPart relies on, for each splitter it takes:
// when a is a piece boundary of s and x = s[a:e] ends s or ends with a
// code point that is not white space, x splits as s's pieces in [a, b)
// (b the last piece boundary at or before e) followed by the pieces of
// s[b:e] on its own. Checked piece for piece on every such a and e.
func TestSplitPartsLemma(t *testing.T) {
	initClasses()
	texts := partTexts(31, 1500)
	for _, st := range knownPatterns {
		if !partSplitters[st.name] {
			continue
		}
		t.Run(st.name, func(t *testing.T) {
			checked := 0
			for _, s := range texts {
				pieces := splitPieces(st.next, s)
				bounds := []int{0}
				for _, p := range pieces {
					bounds = append(bounds, bounds[len(bounds)-1]+len(p))
				}
				for _, a := range bounds[:len(bounds)-1] {
					for _, e := range runeStarts(s) {
						if e <= a {
							continue
						}
						x := s[a:e]
						if e < len(s) {
							r, _ := utf8.DecodeLastRuneInString(x)
							if cl, _ := classAt(string(r), 0); cl&cWS != 0 {
								continue
							}
						}
						var want []string
						b := a
						for k, p := range pieces {
							if bounds[k] >= a && bounds[k+1] <= e {
								want = append(want, p)
								b = bounds[k+1]
							}
						}
						want = append(want, splitPieces(st.next, s[b:e])...)
						if got := splitPieces(st.next, x); !slices.Equal(got, want) {
							t.Fatalf("%q [%d:%d]:\n got %q\nwant %q", s, a, e, got, want)
						}
						checked++
					}
				}
			}
			t.Logf("%d parts checked", checked)
		})
	}
}

// CountStretchPart counts the stretch as CountStretch does, and a part it
// can count as Count counts the part on its own; with the chat-template
// framing it is meant for, it can count most parts.
func TestCountStretchPart(t *testing.T) {
	for _, key := range []string{"qwen3", "llama3", "gptoss"} {
		t.Run(key, func(t *testing.T) {
			tok := hfTokenizer(t, key)
			if !tok.CountsParts() || !Memo(tok, 64).CountsParts() {
				t.Fatalf("%s: parts not counted", key)
			}
			m := Memo(tok, 64)
			rng := rand.New(rand.NewPCG(5, 6))
			var okN, all int
			for _, s := range partTexts(41, 3000) {
				if !utf8.ValidString(s) {
					continue
				}
				at := runeStarts(s)
				for range 8 {
					a, e := at[rng.IntN(len(at))], at[rng.IntN(len(at))]
					if a >= e {
						continue
					}
					n, part, ok := tok.CountStretchPart(s, a, e)
					if want := tok.Count(s); n != want {
						t.Fatalf("%q: count %d, want %d", s, n, want)
					}
					if ok && part != tok.Count(s[a:e]) {
						t.Fatalf("%q [%d:%d] = %q: part %d, Count %d", s, a, e, s[a:e], part, tok.Count(s[a:e]))
					}
					if mn, mp, mok := m.CountStretchPart(s, a, e); mn != n || mok && mp != part {
						t.Fatalf("%q [%d:%d]: memo %d %d %v, tokenizer %d %d %v", s, a, e, mn, mp, mok, n, part, ok)
					}
					all++
					if ok {
						okN++
					}
				}
			}
			framed := 0
			for _, x := range []string{"Hello, world", "def f(x):\n    return x", "{\"a\": 1}", "结果：好的"} {
				for _, f := range [][2]string{{"user\n", ""}, {"\n", "\n"}, {"\n\n", ""}, {"assistant\n", "\n"}} {
					s := f[0] + x + f[1]
					if _, part, ok := tok.CountStretchPart(s, len(f[0]), len(f[0])+len(x)); ok {
						framed++
						if part != tok.Count(x) {
							t.Errorf("%q in %q: part %d, Count %d", x, s, part, tok.Count(x))
						}
					}
				}
			}
			t.Logf("%d of %d random parts counted from the stretch; %d of 16 framed texts", okN, all, framed)
			if okN < all/10 || framed < 12 {
				t.Errorf("too few parts counted: %d of %d random, %d of 16 framed", okN, all, framed)
			}
		})
	}
}

// A tokenizer whose pipeline does not allow it never counts a part.
func TestCountStretchPartRefused(t *testing.T) {
	tok := hfTokenizer(t, "deepseek_v3")
	if tok.CountsParts() || Memo(tok, 64).CountsParts() {
		t.Fatal("deepseek_v3's pipeline (several splits) reported to allow parts")
	}
	s := "user\nHello world"
	if n, _, ok := tok.CountStretchPart(s, 5, len(s)); ok || n != tok.Count(s) {
		t.Errorf("deepseek_v3: %d, %v; want %d, false", n, ok, tok.Count(s))
	}
}

// Through the memo, a stretch seen before still gives its part: the part
// is memoised with it, as Count would memoise it.
func TestMemoCountStretchPart(t *testing.T) {
	tok := hfTokenizer(t, "qwen3")
	m := Memo(tok, 64)
	x := strings.Repeat("a turn's text, long enough for the memo; ", 10) + "end."
	s := "\n" + x + "\n"
	for k := range 4 {
		n, part, ok := m.CountStretchPart(s, 1, 1+len(x))
		if n != tok.Count(s) || ok && part != tok.Count(x) {
			t.Fatalf("call %d: %d, %d, %v; want %d, %d", k, n, part, ok, tok.Count(s), tok.Count(x))
		}
		if !ok {
			t.Errorf("call %d: part not given", k)
		}
	}
	if h, _ := m.Stats(); h == 0 {
		t.Errorf("the memo never answered")
	}
}
