package tokenize

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// spMergePlain merges the symbols ids one merge at a time with
// mergeQueued, the path the golden files check on ordinary text.
func spMergePlain(mt *mergeTable, ids []uint32) []int {
	id := slices.Clone(ids)
	n := len(id)
	out := make([]int, 0, n)
	if n < 2 {
		for _, t := range id {
			out = append(out, int(t))
		}
		return out
	}
	sc := new(mergeScratch)
	mergeQueued(&pairMerger{mt: mt, id: id}, n, len(mt.newID), sc)
	for i := int32(0); int(i) < n; i = sc.next[i] {
		out = append(out, int(id[i]))
	}
	return out
}

// spSymbols returns the initial symbols of the normalized chunk c.
func spSymbols(m *spModel, c string) []uint32 {
	id := make([]uint32, len(c))
	return id[:m.symbols(c, id)]
}

// checkRuns compares mergeRuns with the plain merge on the symbols of c
// and returns the queue entries mergeRuns popped.
func checkRuns(t *testing.T, m *spModel, name, c string) int {
	t.Helper()
	ids := spSymbols(m, c)
	want := spMergePlain(m.merges, ids)
	r := runMerger{mt: m.merges, head: -1}
	r.run(slices.Clone(ids))
	var got []int
	for s := r.head; s >= 0; s = r.seg[s].next {
		for range r.seg[s].count {
			got = append(got, int(r.seg[s].tok))
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%s: %d symbols: runs give %d tokens, plain %d; first difference at token %d\n got %v\nwant %v", name, len(ids), len(got), len(want), firstDiff(got, want), head(got), head(want))
	}
	if out, n := mergeRuns(m.merges, slices.Clone(ids), nil, true); n != len(want) || !slices.Equal(out, want) {
		t.Fatalf("%s: mergeRuns gives %d (%d ids), want %d", name, n, len(out), len(want))
	}
	return r.pops
}

// TestSPRunsMatchPlain checks the run merging against the symbol-by-symbol
// merge on the real Gemma 3, Llama-2 and Gemini vocabularies: a run of n
// copies of one character, alone and between other characters, for
// every n up to 5,000 (▁, the normalized space, alone and after x) or
// 600 (a, é, 東, a newline, which falls back to <0x0A>; 200 in the other
// contexts), and for large n; and random texts of runs. It also checks
// that a run costs few steps: 2^20 ▁ in under 2,000 queue pops.
func TestSPRunsMatchPlain(t *testing.T) {
	maxSpace, maxOther, large := 5000, 600, []int{1023, 1024, 1025, 4096, 9999, 65536, 100003}
	if testing.Short() || raceEnabled {
		maxSpace, maxOther, large = 700, 150, []int{1024, 4097}
	}
	if raceEnabled { // single-goroutine (racesample_test.go)
		maxSpace, maxOther = 250, 50
	}
	for _, key := range []string{"gemma3", "llama2", "gemini"} {
		t.Run(key, func(t *testing.T) {
			m := spTokenizer(t, key).sp
			if m == nil {
				t.Fatalf("%s is not SentencePiece-style", key)
			}
			contexts := [][2]string{{"", ""}, {"x", "y"}, {"▁hello", "world▁"}, {"é", "▁a"}, {"\n", "東"}}
			for _, sym := range []string{"▁", "a", "é", "東", "\n"} {
				limit := maxOther
				if sym == "▁" {
					limit = maxSpace
				}
				for ci, ctx := range contexts {
					if ci > 1 {
						// The other contexts up to a third (▁: a tenth).
						limit = min(limit, maxOther) / 3
					}
					for n := 1; n <= limit; n++ {
						checkRuns(t, m, fmt.Sprintf("%q×%d in %q", sym, n, ctx), ctx[0]+strings.Repeat(sym, n)+ctx[1])
					}
					for _, n := range large {
						checkRuns(t, m, fmt.Sprintf("%q×%d in %q", sym, n, ctx), ctx[0]+strings.Repeat(sym, n)+ctx[1])
					}
				}
			}
			if pops := checkRuns(t, m, "▁×2^20", strings.Repeat("▁", 1<<20)); pops > 2000 {
				t.Errorf("2^20 ▁: %d queue pops, want under 2,000 (the runs are merged one by one)", pops)
			}
			rng := rand.New(rand.NewPCG(5, 29))
			alphabet := []string{"▁", "▁", "▁", "a", "é", "東", "\n", "x", "hello", "▁the", "😀", "\x00"}
			texts := 200
			if testing.Short() {
				texts = 30
			}
			texts = raceOr(10, texts)
			for k := range texts {
				var b strings.Builder
				for b.Len() < 6000 && rng.IntN(40) > 0 {
					n := 1 + rng.IntN(8)
					if rng.IntN(3) == 0 {
						n = 1 + rng.IntN(400)
					}
					b.WriteString(strings.Repeat(alphabet[rng.IntN(len(alphabet))], n))
				}
				checkRuns(t, m, fmt.Sprintf("random text %d", k), b.String())
				// And through the chunking: the piece's tokens equal the
				// plain merge's of its chunks.
				c := b.String()
				got, n := m.pieceTokens(c, nil, true)
				if cnt := spCountPlain(m, c); n != len(got) || n != cnt {
					t.Fatalf("random text %d: pieceTokens %d tokens (%d ids), plain %d", k, n, len(got), cnt)
				}
			}
		})
	}
}

// spCountPlain counts the piece c with the plain merge on the whole
// piece, no chunking and no cache.
func spCountPlain(m *spModel, c string) int {
	if m.ignoreMerges {
		if id := m.tok.lookup(c); id != noRank {
			return 1
		}
	}
	return len(spMergePlain(m.merges, spSymbols(m, c)))
}

// FuzzSPRunMerge checks mergeRuns against the symbol-by-symbol merge and
// the whole model against the transcription of tokenizers' merge_word
// (spSpec.encode) on random vocabularies made for runs: characters a, b,
// ▁, tokens that are runs of one of them (random lengths) or mixed, and
// their merges in random order (longer runs merging first or last, as in
// Gemma 3 and Llama-2), on texts made of long runs.
func FuzzSPRunMerge(f *testing.F) {
	f.Add(uint64(1), []byte{0, 200, 1, 3, 2, 90, 0, 7})
	f.Add(uint64(3), []byte{2, 255, 2, 255, 0, 1, 2, 130})
	f.Add(uint64(8), []byte{0, 77, 1, 1, 0, 77})
	f.Fuzz(func(t *testing.T, seed uint64, runs []byte) {
		if len(runs) > 64 {
			t.Skip()
		}
		spec := randomRunModel(rand.New(rand.NewPCG(seed, seed>>9)))
		tk, raw := loadSPSpec(t, spec)
		chars := []string{"a", "b", "▁", "c"}
		var b strings.Builder
		for i := 0; i+1 < len(runs); i += 2 {
			b.WriteString(strings.Repeat(chars[int(runs[i])%len(chars)], 1+int(runs[i+1])))
		}
		text := b.String()
		m := tk.sp
		ids := spSymbols(m, text)
		want := spMergePlain(m.merges, ids)
		if got, n := mergeRuns(m.merges, slices.Clone(ids), nil, true); n != len(want) || !slices.Equal(got, want) {
			t.Fatalf("%q: mergeRuns %v, plain %v\nmodel %s", text, got, want, raw)
		}
		if utf8Len := len([]rune(text)); utf8Len <= 3000 {
			want = spec.encode(text)
			if got := tk.Encode(text); !slices.Equal(got, want) {
				t.Fatalf("%q: Encode %v, want %v\nmodel %s", text, got, want, raw)
			}
			if n := tk.Count(text); n != len(want) {
				t.Fatalf("%q: Count %d, want %d\nmodel %s", text, n, len(want), raw)
			}
		}
	})
}

// randomRunModel draws a vocabulary over a, b, c and ▁ (c sometimes
// without a token, so byte fallback or unk) whose tokens are mostly runs
// of one character, with merges in random order.
func randomRunModel(rng *rand.Rand) *spSpec {
	s := &spSpec{vocab: map[string]int{}, merges: [][2]string{}, byteFallback: rng.IntN(2) == 0, fuseUnk: rng.IntN(2) == 0, ignore: rng.IntN(5) == 0, unk: "<unk>"}
	add := func(tok string) {
		if _, ok := s.vocab[tok]; !ok {
			s.vocab[tok] = len(s.vocab)
		}
	}
	add(s.unk)
	for _, c := range []string{"a", "b", "▁"} {
		add(c)
	}
	if rng.IntN(2) == 0 {
		add("c")
	}
	add("<0x63>")
	toks := []string{"a", "b", "▁"}
	for range 5 + rng.IntN(60) {
		var a, b string
		if rng.IntN(4) == 0 {
			a, b = toks[rng.IntN(len(toks))], toks[rng.IntN(len(toks))]
		} else {
			c := []string{"a", "b", "▁"}[rng.IntN(3)]
			a, b = strings.Repeat(c, 1+rng.IntN(6)), strings.Repeat(c, 1+rng.IntN(6))
			if _, ok := s.vocab[a]; !ok {
				continue
			}
			if _, ok := s.vocab[b]; !ok {
				continue
			}
		}
		if len(a+b) > 48 {
			continue
		}
		s.merges = append(s.merges, [2]string{a, b})
		add(a + b)
		toks = append(toks, a+b)
	}
	rng.Shuffle(len(s.merges), func(i, j int) { s.merges[i], s.merges[j] = s.merges[j], s.merges[i] })
	return s
}

// TestSPRunModelsRepeat checks that FuzzSPRunMerge's vocabularies reach
// the repetition mergeRuns is for, and often, on runs of 300 of one
// character: else the fuzz target would check only the one-by-one steps.
func TestSPRunModelsRepeat(t *testing.T) {
	models, repeating := 300, 0
	for seed := range uint64(models) {
		tk, _ := loadSPSpec(t, randomRunModel(rand.New(rand.NewPCG(seed, seed>>9))))
		for _, c := range []string{"a", "b", "▁"} {
			r := runMerger{mt: tk.sp.merges, head: -1}
			r.run(spSymbols(tk.sp, strings.Repeat(c, 300)))
			if r.bulks > 0 {
				repeating++
				break
			}
		}
	}
	if repeating < models/3 {
		t.Errorf("%d of %d random vocabularies repeat cascades on a run of 300, want a third or more", repeating, models)
	}
	t.Logf("%d of %d random vocabularies repeat cascades on a run of 300", repeating, models)
}

// TestSPGoldenRuns checks Encode and Count against Hugging Face
// tokenizers on runs of one character (space, ▁, a, é, 東, newline, tab,
// emoji), n copies for n up to 40 and from 62 to 100,003 (and 2^20 spaces
// and a's, 2^18 ▁), alone and between other characters, for Gemma 3,
// Llama-2 and Gemini (testdata/hf/golden_sp_runs.jsonl, from
// gen_golden_sp_runs.mjs).
func TestSPGoldenRuns(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "hf", "golden_sp_runs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	type runCase struct {
		Pre, Sym, Post         string
		N                      int
		Gemma3, Llama2, Gemini string
	}
	var cases []runCase
	for line := range strings.SplitSeq(strings.TrimSpace(string(raw)), "\n") {
		var c runCase
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, c)
	}
	if len(cases) < 2000 {
		t.Fatalf("golden_sp_runs.jsonl: %d cases, want the 2,483 gen_golden_sp_runs.mjs writes", len(cases))
	}
	for _, key := range []string{"gemma3", "llama2", "gemini"} {
		t.Run(key, func(t *testing.T) {
			tk := spTokenizer(t, key)
			ok := 0
			for i, c := range cases {
				if (testing.Short() || raceEnabled) && c.N > 5000 {
					continue
				}
				want := map[string]string{"gemma3": c.Gemma3, "llama2": c.Llama2, "gemini": c.Gemini}[key]
				text := c.Pre + strings.Repeat(c.Sym, c.N) + c.Post
				ids := tk.Encode(text)
				got := idsCountSHA(ids)
				if n := tk.Count(text); got != want || n != len(ids) {
					t.Errorf("golden_sp_runs.jsonl:%d %q + %q×%d + %q: %s (Count %d), want %s", i+1, c.Pre, c.Sym, c.N, c.Post, got, n, want)
					continue
				}
				ok++
			}
			t.Logf("%s: %d runs exact", key, ok)
		})
	}
}
