package traj_test

import (
	"testing"

	"github.com/trajcompress/trajcompress/fixtures/gen"
	"github.com/trajcompress/trajcompress/traj"
)

// BenchmarkDecode decodes 200 generated records (the benchmark corpus's
// shape: median 6000, p99 60000 tokens); MB/s is of JSONL bytes.
func BenchmarkDecode(b *testing.B) {
	var lines [][]byte
	size := 0
	err := gen.Generate(gen.Options{Count: 200, Seed: 7, MedianTokens: 6000, P99Tokens: 60000}, func(line []byte) error {
		lines = append(lines, append([]byte(nil), line...))
		size += len(line)
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(size))
	for b.Loop() {
		for i, l := range lines {
			traj.Decode(l, traj.Pos{Line: int64(i + 1)}, traj.Schema{})
		}
	}
}
