package tokenize

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// FuzzLoadHFModel feeds model values to the loader, in a tokenizer.json
// with no normalizer or pre-tokenizer: each is refused with a one-line
// error naming a model field, or counts text without panicking, Count
// equal to the number of ids.
func FuzzLoadHFModel(f *testing.F) {
	for _, m := range []string{
		`{"type": "BPE", "byte_fallback": true, "fuse_unk": true, "unk_token": "<unk>", "vocab": {"<unk>": 0, "<0x41>": 1, "a": 2, "b": 3, "▁": 4, "ab": 5, "▁ab": 6}, "merges": ["a b", "▁ ab"]}`,
		`{"type": "BPE", "ignore_merges": true, "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": [["a", "b"]]}`,
		`{"type": "BPE", "dropout": 0.5, "vocab": {"a": 0}, "merges": []}`,
		`{"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": ["#version: 0.2", "a b"]}`,
		`{"type": "BPE", "vocab": {"a": 0, "a": 1}, "merges": []}`,
		`{"type": "Unigram", "vocab": [["a", -1.0]]}`,
		`{"type": "BPE", "unk_token": null, "continuing_subword_prefix": "##", "vocab": {}, "merges": []}`,
	} {
		f.Add([]byte(m), "ab ▁ab A\u00e9\U0001F600 b")
	}
	f.Fuzz(func(t *testing.T, model []byte, text string) {
		if len(model) > 1<<14 || len(text) > 1<<10 {
			t.Skip()
		}
		data := append(append([]byte(`{"normalizer": null, "pre_tokenizer": null, "model": `), model...), '}')
		tk, err := parseHF(data)
		if err != nil {
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "tokenizer.json") {
				t.Errorf("refusal not one line naming the file's part: %q", msg)
			}
			return
		}
		ids := tk.Encode(text)
		if n := tk.Count(text); n != len(ids) {
			t.Errorf("Count %d, Encode %d ids", n, len(ids))
		}
	})
}

// FuzzSPModelOracle checks the SentencePiece-style model, chunking and
// caches included, against a plain transcription of tokenizers' BPE
// merge_word (naiveSPEncode) on random small vocabularies: characters
// with and without tokens, byte-fallback tokens for some bytes, unk with
// and without fuse_unk, ignore_merges, random merges (some joining ▁ to
// what precedes it).
func FuzzSPModelOracle(f *testing.F) {
	f.Add(uint64(1), "ab▁ba▁▁abé😀c")
	f.Add(uint64(7), "▁▁▁aaaa▁b>▁<")
	f.Add(uint64(42), strings.Repeat("ab▁", 40)+strings.Repeat("a", 100))
	f.Fuzz(func(t *testing.T, seed uint64, text string) {
		if len(text) > 400 {
			t.Skip()
		}
		text = string(appendReplaced(nil, text))
		spec := randomSPModel(rand.New(rand.NewPCG(seed, seed>>7)))
		tk, raw := loadSPSpec(t, spec)
		want := spec.encode(text)
		for range 2 { // the second time through the caches
			if got := tk.Encode(text); !slices.Equal(got, want) {
				t.Fatalf("%q: got %v, want %v\nmodel %s", text, got, want, raw)
			}
			if n := tk.Count(text); n != len(want) {
				t.Fatalf("%q: Count %d, want %d\nmodel %s", text, n, len(want), raw)
			}
		}
	})
}

// loadSPSpec loads spec as a tokenizer.json with no normalizer or
// pre-tokenizer; raw is that file.
func loadSPSpec(t *testing.T, spec *spSpec) (tk *HFTokenizer, raw []byte) {
	t.Helper()
	raw, err := json.Marshal(map[string]any{"normalizer": nil, "pre_tokenizer": nil, "model": spec.json()})
	if err != nil {
		t.Fatal(err)
	}
	if tk, err = parseHF(raw); err != nil {
		t.Fatalf("load: %v\n%s", err, raw)
	}
	return tk, raw
}

type spSpec struct {
	vocab                         map[string]int
	merges                        [][2]string
	byteFallback, fuseUnk, ignore bool
	unk                           string
}

func (s *spSpec) json() map[string]any {
	m := map[string]any{"type": "BPE", "vocab": s.vocab, "merges": s.merges, "byte_fallback": s.byteFallback,
		"fuse_unk": s.fuseUnk, "ignore_merges": s.ignore, "dropout": nil}
	if s.unk != "" {
		m["unk_token"] = s.unk
	}
	return m
}

// randomSPModel draws a small vocabulary over a, b, c, é, ▁, <, >, with
// some byte-fallback tokens, and merges of random token pairs whose
// concatenation it adds.
func randomSPModel(rng *rand.Rand) *spSpec {
	s := &spSpec{vocab: map[string]int{}, byteFallback: rng.IntN(2) == 0, fuseUnk: rng.IntN(2) == 0, ignore: rng.IntN(4) == 0}
	add := func(tok string) {
		if _, ok := s.vocab[tok]; !ok {
			s.vocab[tok] = len(s.vocab)
		}
	}
	if rng.IntN(3) > 0 {
		s.unk = "<unk>"
		add(s.unk)
	}
	for _, c := range []string{"a", "b", "c", "é", "▁", "<", ">"} {
		if rng.IntN(5) > 0 {
			add(c)
		}
	}
	for b := range 256 {
		if rng.IntN(8) > 0 {
			add(fmt.Sprintf("<0x%02X>", b))
		}
	}
	var toks []string
	for tok := range s.vocab {
		toks = append(toks, tok)
	}
	slices.Sort(toks)
	for range rng.IntN(40) {
		a, b := toks[rng.IntN(len(toks))], toks[rng.IntN(len(toks))]
		if strings.Contains(a+b, " ") || len(a+b) > 40 {
			continue
		}
		s.merges = append(s.merges, [2]string{a, b})
		add(a + b)
		toks = append(toks, a+b)
	}
	return s
}

// encode is tokenizers' BPE on one word (models/bpe/model.rs merge_word,
// then word.rs merge_all): one symbol per character (its token, else its
// <0xNN> tokens, else unk, fused), then the lowest-ranked pair, leftmost,
// until none merges.
func (s *spSpec) encode(w string) []int {
	if w == "" {
		return nil
	}
	if id, ok := s.vocab[w]; ok && s.ignore {
		return []int{id}
	}
	var sym []string
	pending := false
	for _, r := range w {
		c := string(r)
		if _, ok := s.vocab[c]; ok {
			if pending {
				sym, pending = append(sym, s.unk), false
			}
			sym = append(sym, c)
			continue
		}
		if s.byteFallback {
			var bs []string
			for k := range len(c) {
				tok := fmt.Sprintf("<0x%02X>", c[k])
				if _, ok := s.vocab[tok]; !ok {
					bs = nil
					break
				}
				bs = append(bs, tok)
			}
			if bs != nil {
				sym = append(sym, bs...)
				continue
			}
		}
		if s.unk != "" {
			if pending && !s.fuseUnk {
				sym = append(sym, s.unk)
			}
			pending = true
		}
	}
	if pending {
		sym = append(sym, s.unk)
	}
	rank := map[[2]string]int{}
	for k, m := range s.merges {
		rank[m] = k
	}
	for {
		best, at := -1, -1
		for i := 0; i+1 < len(sym); i++ {
			if r, ok := rank[[2]string{sym[i], sym[i+1]}]; ok && (best < 0 || r < best) {
				best, at = r, i
			}
		}
		if at < 0 {
			break
		}
		sym = append(append(sym[:at:at], sym[at]+sym[at+1]), sym[at+2:]...)
	}
	ids := make([]int, len(sym))
	for i, t := range sym {
		ids[i] = s.vocab[t]
	}
	return ids
}
