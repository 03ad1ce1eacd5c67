package pipeline

import (
	"context"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/snap"
)

// charCounter counts a token per four bytes: cheap, so the benchmark
// measures the record path rather than a tokenizer.
type charCounter struct{}

func (charCounter) Count(s string) int { return len(s) / 4 }

// BenchmarkCompress measures one record through Compress: decode, count,
// plan, summarize (fixed text), assemble, recount and encode.
func BenchmarkCompress(b *testing.B) {
	roles := "system human gpt" + strings.Repeat(" tool gpt", 30) + " human gpt"
	sizes := make([]int, len(strings.Fields(roles)))
	for i := range sizes {
		sizes[i] = 200
	}
	line := []byte(shareGPTLine(roles, sizes...))
	for _, bc := range []struct {
		name string
		mod  func(*Options)
	}{
		{"skipped", func(o *Options) { o.Budget.Target = 1 << 30 }},
		{"compressed", nil},
		{"metrics", func(o *Options) { o.PerRecordMetrics = true }},
		{"alternate", func(o *Options) { o.Placement.Alternate = true }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c := newComp(b, func(o *Options) {
				o.Budget = snap.Budget{Target: 3000, SummaryTokens: 100, LastN: 4, ProtectFirstSystem: true, ProtectFirstUser: true, ProtectFirstAssistant: true, ProtectFirstTool: true}
				o.Counting.Counter = charCounter{}
				if bc.mod != nil {
					bc.mod(o)
				}
			})
			b.SetBytes(int64(len(line)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Compress(context.Background(), line, pos); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
