//go:build unix

package tokenize

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// BenchmarkSPRunMerge times mergeRuns against mergeQueued on Llama-2's
// symbols of 64 KiB chunks: ordinary words (no runs), words with runs of
// 2-9 spaces (the code indentation case) and one run of ▁ — what decides
// worthRuns' threshold. cpu-ns/op is the process's CPU time per merge,
// which a loaded machine distorts less than ns/op.
func BenchmarkSPRunMerge(b *testing.B) {
	m := spTokenizer(b, "llama2").sp
	rng := rand.New(rand.NewPCG(1, 2))
	words := func(space func() string) string {
		var s strings.Builder
		for s.Len() < 1<<16 {
			s.WriteString(space())
			for range 2 + rng.IntN(7) {
				s.WriteByte(byte('a' + rng.IntN(26)))
			}
		}
		return s.String()
	}
	cases := []struct{ name, text string }{
		{"words", words(func() string { return "▁" })},
		{"indented", words(func() string { return strings.Repeat("▁", 2+rng.IntN(8)) })},
		{"run", strings.Repeat("▁", 1<<16/3)},
	}
	for _, c := range cases {
		ids := spSymbols(m, c.text)
		b.Run(fmt.Sprintf("%s/worthRuns=%v/runs", c.name, worthRuns(ids)), func(b *testing.B) {
			id := slices.Clone(ids)
			c0 := processCPU()
			for b.Loop() {
				copy(id, ids)
				mergeRuns(m.merges, id, nil, false)
			}
			b.ReportMetric(float64(processCPU()-c0)/float64(b.N), "cpu-ns/op")
		})
		b.Run(c.name+"/queued", func(b *testing.B) {
			id := slices.Clone(ids)
			sc := new(mergeScratch)
			c0 := processCPU()
			for b.Loop() {
				copy(id, ids)
				mergeQueued(&pairMerger{mt: m.merges, id: id}, len(id), len(m.merges.newID), sc)
			}
			b.ReportMetric(float64(processCPU()-c0)/float64(b.N), "cpu-ns/op")
		})
	}
}
