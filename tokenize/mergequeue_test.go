package tokenize

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// longPieces returns pieces of 100 to 3000 bytes over small alphabets, so
// that merges cascade and ranks tie, plus runs of one byte.
func longPieces() []string {
	rng := rand.New(rand.NewPCG(11, 12))
	alphabets := []string{"a", "ab", "abc", "aeiou", "qwertyuiopasdfghjklzxcvbnm", " ", " \n", "-=", "01"}
	var out []string
	for _, a := range alphabets {
		for range 6 {
			n := 100 + rng.IntN(2900)
			var b strings.Builder
			for b.Len() < n {
				b.WriteByte(a[rng.IntN(len(a))])
			}
			out = append(out, b.String())
		}
	}
	return append(out, strings.Repeat("我需要", 400), strings.Repeat("ab", 2000))
}

// TestMergeQueueMatchesLinear checks the queued merges (queueMerge)
// against the reference's linear scan, which they replace above
// smallPiece bytes where the backtracking encoder does not, for tiktoken
// ranks and a tokenizer.json's merges.
func TestMergeQueueMatchesLinear(t *testing.T) {
	enc := mustEncoding(t, O200kBase)
	for _, p := range longPieces() {
		n := len(p) + 1
		want, _ := enc.v.mergeLinear(p, make([]int32, n), make([]uint32, n), nil, true)
		got, cnt := enc.v.queueMerge(p, nil, true)
		if !slices.Equal(got, want) || cnt != len(want) {
			t.Fatalf("o200k %.40q (%d bytes): queueMerge differs from mergeLinear at token %d", p, len(p), firstDiff(got, want))
		}
	}
	for _, key := range []string{"qwen3", "llama3"} {
		m := hfTokenizer(t, key).model
		for _, p := range longPieces() {
			want, _ := m.mergeLinear(p, make([]uint32, len(p)), make([]uint32, len(p)), nil, true)
			got, cnt := m.queueMerge(p, nil, true)
			if !slices.Equal(got, want) || cnt != len(want) {
				t.Fatalf("%s %.40q (%d bytes): queueMerge differs from mergeLinear at token %d", key, p, len(p), firstDiff(got, want))
			}
		}
	}
}
