package tokenize

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// pathologicalInputs are 1 MiB inputs for the normalizer and
// pre-tokenizer kinds: ordinary text to compare with, and the shapes
// that make a splitter or a merge superlinear if anything does.
func pathologicalInputs() []struct{ name, text string } {
	const n = 1 << 20
	rng := rand.New(rand.NewPCG(5, 5))
	words := strings.Fields("the quick brown fox jumps over the lazy dog; it's 12 o'clock, and we'll see—maybe. " +
		"func main() { fmt.Println(\"héllo\") } // 東京 ﬁn x² ＡＢ Ümlaut İstanbul")
	var ord strings.Builder
	for ord.Len() < n {
		ord.WriteString(words[rng.IntN(len(words))])
		ord.WriteByte(" \n\t "[rng.IntN(4)])
	}
	rnd := make([]byte, n)
	for i := range rnd {
		rnd[i] = byte(rng.Uint32())
	}
	lower := make([]byte, n)
	for i := range lower {
		lower[i] = 'a' + byte(rng.IntN(26))
	}
	return []struct{ name, text string }{
		{"ordinary", ord.String()[:n]},
		{"one_letter", strings.Repeat("a", n)},
		{"spaces", strings.Repeat(" ", n)},
		{"metaspace", strings.Repeat("\u2581", n/3)},
		{"random_bytes", string(rnd)},
		{"no_spaces", string(lower)},
		{"punctuation", strings.Repeat("!?.,", n/4)},
		{"digits", strings.Repeat("1234567890", n/10)},
	}
}

// BenchmarkHFKindsPathological counts each pathological input with a
// tokenizer of each new normalizer or pre-tokenizer kind (warm: one count
// first). Run with
//
//	go test ./tokenize -run '^$' -bench HFKindsPathological -benchtime 3x
//
// and compare each input's time with "ordinary" (bench/README.md).
func BenchmarkHFKindsPathological(b *testing.B) {
	variants := loadKindsVariants(b)
	inputs := pathologicalInputs()
	for _, key := range []string{"claude", "gpt4o", "n_llama2", "n_nfkc_lower_strip", "n_replace_regex", "p_metaspace_always",
		"p_gemma", "p_split_str_contiguous", "p_split_re_mergedwithnext_inv", "p_whitespace", "p_punctuation_contiguous",
		"p_bytelevel_then_digits", "p_bert"} {
		tk := kindsTokenizer(b, variants[key])
		for _, in := range inputs {
			b.Run(key+"/"+in.name, func(b *testing.B) {
				tk.Count(in.text)
				b.SetBytes(int64(len(in.text)))
				for b.Loop() {
					tk.Count(in.text)
				}
			})
		}
	}
}
