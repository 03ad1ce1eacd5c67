package redact

import (
	"testing"

	"github.com/trajcompress/trajcompress/internal/testenv"
)

// BenchmarkRedactReal runs Redact over the real data's turn texts
// (testenv.RealDataDir; skipped when absent). SetBytes makes -bench report
// MB/s of text.
func BenchmarkRedactReal(b *testing.B) {
	dir := testenv.RealDataDir()
	if dir == "" {
		b.Skip("real data absent (testenv.RealDataDir)")
	}
	texts, err := testenv.RealTurnTexts(dir, 0)
	if err != nil {
		b.Fatal(err)
	}
	raw := make([][]byte, len(texts))
	n := 0
	for i, t := range texts {
		raw[i] = []byte(t)
		n += len(t)
	}
	r := Default()
	b.SetBytes(int64(n))
	b.ReportAllocs()
	var dst []byte
	for b.Loop() {
		for _, t := range raw {
			dst, _ = r.Redact(dst[:0], t)
		}
	}
}
