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

// seqSplitter returns the pieces of a sequence of known splits (by stage
// name), as HFTokenizer.spans splits with those stages.
func seqSplitter(t *testing.T, names []string) func(string) []string {
	byName := map[string]preStage{}
	for _, st := range knownPatterns {
		byName[st.name] = st
	}
	tk := &HFTokenizer{}
	for _, n := range names {
		st, ok := byName[n]
		if !ok {
			t.Fatalf("no known pattern named %q", n)
		}
		st.simple = true
		tk.stages = append(tk.stages, st)
	}
	return func(s string) []string {
		var out []string
		tk.spans(s, 0, 0, func(i, j int) { out = append(out, s[i:j]) })
		return out
	}
}

// lemmaTexts is partTexts with more of what DeepSeek-V3's splits treat
// apart: digit runs of every length, CJK and kana runs, punctuation
// before ASCII letters.
func lemmaTexts() []string {
	texts := partTexts(31, 1500)
	rng := rand.New(rand.NewPCG(33, 8))
	atoms := []string{"1", "12", "1234", "٣٤", "中文", "ひらがな", "カタカナ", "。", "，", "#tag", "a.b", "_x", "$1", "é", " \n", "\n\n", " ", "\t", "x", "\u0301", "「」"}
	for _, s := range partTexts(32, 1500) {
		var b strings.Builder
		for k, r := range strings.SplitAfter(s, "") {
			if k%3 == 0 {
				b.WriteString(atoms[rng.IntN(len(atoms))])
			}
			b.WriteString(r)
		}
		texts = append(texts, b.String())
	}
	return texts
}

// lemmaCase is one check of the split property: the part s[a:e] of
// stretch s.
type lemmaCase struct {
	s    string
	a, e int
}

// lemmaHolds reports whether x = s[a:e] splits as s's pieces in [a, b)
// (b the last piece boundary at or before e) followed by the pieces of
// s[b:e] on its own.
func lemmaHolds(split func(string) []string, pieces []string, bounds []int, c lemmaCase) bool {
	var want []string
	b := c.a
	for k, p := range pieces {
		if bounds[k] >= c.a && bounds[k+1] <= c.e {
			want = append(want, p)
			b = bounds[k+1]
		}
	}
	want = append(want, split(c.s[b:c.e])...)
	return slices.Equal(split(c.s[c.a:c.e]), want)
}

// lemmaParts calls fn for each part of each text that the property's
// conditions allow: a is a piece boundary (unless anyA) and e ends s or
// x ends as ps.endOK requires (unless anyE).
func lemmaParts(ps partSplit, split func(string) []string, texts []string, anyA, anyE bool, fn func(pieces []string, bounds []int, c lemmaCase) bool) {
	for _, s := range texts {
		pieces := split(s)
		bounds := []int{0}
		for _, p := range pieces {
			bounds = append(bounds, bounds[len(bounds)-1]+len(p))
		}
		starts := bounds[:len(bounds)-1]
		if anyA {
			starts = runeStarts(s)
		}
		for _, a := range starts {
			for _, e := range runeStarts(s) {
				if e <= a || e < len(s) && !anyE && !ps.endOK(s[a:e]) {
					continue
				}
				if !fn(pieces, bounds, lemmaCase{s, a, e}) {
					return
				}
			}
		}
	}
}

// The property CountStretchPart relies on, for each split sequence it
// takes (partSplits): when a is a piece boundary of s and x = s[a:e]
// ends s or ends with a code point that is not white space, x splits as
// s's pieces in [a, b) (b the last piece boundary at or before e)
// followed by the pieces of s[b:e] on its own. Checked piece for piece on
// every such a and e.
func TestSplitPartsLemma(t *testing.T) {
	initClasses()
	initPS()
	texts := lemmaTexts()
	if testing.Short() {
		texts = everyNth(texts, 3) // the quick loop; all of them without -short
	}
	texts = raceSample(texts)
	for _, ps := range partSplits {
		t.Run(strings.Join(ps.names, "+"), func(t *testing.T) {
			split := seqSplitter(t, ps.names)
			checked := 0
			lemmaParts(ps, split, texts, false, false, func(pieces []string, bounds []int, c lemmaCase) bool {
				if !lemmaHolds(split, pieces, bounds, c) {
					t.Fatalf("%q [%d:%d]: the part does not split as the stretch", c.s, c.a, c.e)
				}
				checked++
				return true
			})
			t.Logf("%d parts checked", checked)
		})
	}
}

// Each condition of the property is needed: without it, the generated
// parts hold a counterexample for every split sequence (so the lemma
// test's texts are rich enough to catch a condition that is missing).
func TestSplitPartsLemmaConditions(t *testing.T) {
	initClasses()
	initPS()
	texts := lemmaTexts()
	for _, ps := range partSplits {
		split := seqSplitter(t, ps.names)
		conds := []struct {
			name       string
			ps         partSplit
			anyA, anyE bool
		}{{"a any code point", ps, true, false}, {"x ending anyhow", ps, false, true}}
		if ps.lastLNPS {
			weaker := ps
			weaker.lastLNPS = false
			conds = append(conds, struct {
				name       string
				ps         partSplit
				anyA, anyE bool
			}{"x ending in any code point but white space", weaker, false, false})
		}
		for _, cond := range conds {
			t.Run(strings.Join(ps.names, "+")+"/"+cond.name, func(t *testing.T) {
				var found *lemmaCase
				lemmaParts(cond.ps, split, texts, cond.anyA, cond.anyE, func(pieces []string, bounds []int, c lemmaCase) bool {
					if !lemmaHolds(split, pieces, bounds, c) {
						found = &c
						return false
					}
					return true
				})
				if found == nil {
					t.Fatalf("no counterexample without the condition")
				}
				t.Logf("counterexample: %q [%d:%d]", found.s, found.a, found.e)
			})
		}
	}
}

// CountStretchPart counts the stretch as CountStretch does, and a part it
// can count as Count counts the part on its own; with the chat-template
// framing it is meant for, it can count most parts.
func TestCountStretchPart(t *testing.T) {
	for _, key := range []string{"qwen3", "llama3", "gptoss", "deepseek_v3"} {
		t.Run(key, func(t *testing.T) {
			tok := hfTokenizer(t, key)
			if !tok.CountsParts() || !Memo(tok, 64).CountsParts() {
				t.Fatalf("%s: parts not counted", key)
			}
			m := Memo(tok, 64)
			rng := rand.New(rand.NewPCG(5, 6))
			var okN, all int
			for k, s := range partTexts(41, raceOr(3000/raceEvery, 3000)) {
				if !utf8.ValidString(s) {
					continue
				}
				if k%4 == 0 {
					// A normalized added token of DeepSeek-V3's inside
					// the stretch (plain text to the others).
					at := runeStarts(s)
					i := at[rng.IntN(len(at))]
					s = s[:i] + "<｜Assistant｜>" + s[i:]
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
				// DeepSeek-V3's turn markers are normalized added tokens: a
				// stretch holds them (plain text to the others).
				for _, f := range [][2]string{{"user\n", ""}, {"\n", "\n"}, {"\n\n", ""}, {"assistant\n", "\n"}, {"<｜User｜>", "<｜Assistant｜>"}, {"<｜tool▁output▁begin｜>", "<｜tool▁output▁end｜>\n"}} {
					s := f[0] + x + f[1]
					if _, part, ok := tok.CountStretchPart(s, len(f[0]), len(f[0])+len(x)); ok {
						framed++
						if part != tok.Count(x) {
							t.Errorf("%q in %q: part %d, Count %d", x, s, part, tok.Count(x))
						}
					}
				}
			}
			t.Logf("%d of %d random parts counted from the stretch; %d of 24 framed texts", okN, all, framed)
			if okN < all/10 || framed < 18 {
				t.Errorf("too few parts counted: %d of %d random, %d of 24 framed", okN, all, framed)
			}
		})
	}
}

// A tokenizer whose pipeline does not allow it never counts a part: a
// sequence of splits that is not one of partSplits (digits one by one,
// then GPT-2's pattern: each stage is known, the sequence is not checked)
// is refused, however each of its stages would be on its own.
func TestCountStretchPartRefused(t *testing.T) {
	tok := loadVariant(t)
	if tok.CountsParts() || Memo(tok, 64).CountsParts() {
		t.Fatal("digits1+gpt2 (a sequence not checked) reported to allow parts")
	}
	s := "user\nHello world 123"
	if n, _, ok := tok.CountStretchPart(s, 5, len(s)); ok || n != tok.Count(s) {
		t.Errorf("digits1+gpt2: %d, %v; want %d, false", n, ok, tok.Count(s))
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
