package llamafactory

import (
	"testing"

	"github.com/trajcompress/trajcompress/tokenize"
)

// benchCases are the real records (own tools) and a qwen3 renderer, with
// b's bytes set to their size; b is skipped without the real data.
func benchCases(b *testing.B) ([]refCase, *Renderer) {
	cases := ownCases(&testing.T{})
	if len(cases) == 0 {
		b.Skip("no real data")
	}
	r, err := New(Options{Template: "qwen3", Date: "15 Jan 2025"})
	if err != nil {
		b.Fatal(err)
	}
	size := 0
	for _, c := range cases {
		size += len(c.rec.Raw())
	}
	b.SetBytes(int64(size))
	return cases, r
}

// BenchmarkEncodeReal encodes every real record (own tools) with qwen3,
// counting with o200k_base (the package's own cost plus the counter's).
func BenchmarkEncodeReal(b *testing.B) {
	tok, err := tokenize.New(tokenize.O200kBase)
	if err != nil {
		b.Fatal(err)
	}
	cases, r := benchCases(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, c := range cases {
			r.Encode(c.rec, c.rec.Turns, systemOf(c), Tokens{Counter: tok})
		}
	}
}

// BenchmarkRenderReal is BenchmarkEncodeReal without counting.
func BenchmarkRenderReal(b *testing.B) {
	cases, r := benchCases(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, c := range cases {
			r.render(c.rec, c.rec.Turns, systemOf(c)) //nolint:errcheck // the cost, not the result
		}
	}
}
