package summary_test

import (
	"context"
	"testing"

	"github.com/trajcompress/trajcompress/fixtures/gen"
	"github.com/trajcompress/trajcompress/summary"
	"github.com/trajcompress/trajcompress/tokenize"
	"github.com/trajcompress/trajcompress/traj"
)

// BenchmarkDeterministic summarises the middle of 100 generated records
// of the end-to-end benchmark's shape at the default 750-token target,
// with o200k_base; MB/s is of the summarised turns' text.
func BenchmarkDeterministic(b *testing.B) {
	enc, err := tokenize.New("o200k_base")
	if err != nil {
		b.Fatal(err)
	}
	var reqs []summary.Request
	size := 0
	err = gen.Generate(gen.Options{Count: 100, Seed: 7, MedianTokens: 6000, P99Tokens: 60000}, func(line []byte) error {
		r, err := traj.Decode(append([]byte(nil), line...), traj.Pos{}, traj.Schema{})
		if err != nil || len(r.Turns) < 6 {
			return nil
		}
		turns := r.Turns[2 : len(r.Turns)-2]
		for _, t := range turns {
			size += len(t.Text)
		}
		reqs = append(reqs, summary.Request{Turns: turns, Start: 2, TargetTokens: 750, Counter: enc})
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	d := summary.Deterministic{Counter: enc}
	b.SetBytes(int64(size))
	for b.Loop() {
		for _, r := range reqs {
			d.Summarize(context.Background(), r)
		}
	}
}

// BenchmarkRetention measures Retention over the middle of 100 generated
// records of each dialect against a short text.
func BenchmarkRetention(b *testing.B) {
	var regions [][]traj.Turn
	size := 0
	for _, d := range []string{"sharegpt", "openai"} {
		err := gen.Generate(gen.Options{Count: 100, Seed: 7, MedianTokens: 6000, P99Tokens: 60000, Dialect: d}, func(line []byte) error {
			r, err := traj.Decode(append([]byte(nil), line...), traj.Pos{}, traj.Schema{})
			if err != nil || len(r.Turns) < 6 {
				return nil
			}
			size += len(line)
			regions = append(regions, r.Turns[2:len(r.Turns)-2])
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(size))
	for b.Loop() {
		for _, turns := range regions {
			summary.Retention(turns, "Tools: bash ×3, read_file ×1\n[3 call] bash(command=ls)")
		}
	}
}
