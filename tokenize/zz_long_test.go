package tokenize

import (
	"strings"
	"testing"
)

func BenchmarkLongPiece(b *testing.B) {
	e := mustEncoding(b, O200kBase)
	q := hfTokenizer(b, "qwen3")
	for _, tc := range []struct{ name, s string }{{"a", strings.Repeat("a", 1<<20)}, {"mixed", strings.Repeat("qwertyuiopasdfghjklzxcvbnm", 1<<20/26)}} {
		b.Run("o200k/"+tc.name, func(b *testing.B) {
			for b.Loop() {
				e.Count(tc.s)
			}
		})
		b.Run("qwen3/"+tc.name, func(b *testing.B) {
			for b.Loop() {
				q.Count(tc.s)
			}
		})
	}
}
