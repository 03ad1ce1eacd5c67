package prepass_test

import (
	"testing"

	"github.com/trajcompress/trajcompress/fixtures/gen"
	"github.com/trajcompress/trajcompress/prepass"
	"github.com/trajcompress/trajcompress/tokenize"
	"github.com/trajcompress/trajcompress/traj"
)

// BenchmarkApply runs the prepass (all three steps, never fitting) over
// the middle of 100 generated records of each dialect, with the chars4
// counter; MB/s is of the records' bytes.
func BenchmarkApply(b *testing.B) {
	c, err := tokenize.New("chars4")
	if err != nil {
		b.Fatal(err)
	}
	var recs []*traj.Record
	size := 0
	for _, d := range []string{"sharegpt", "openai"} {
		err = gen.Generate(gen.Options{Count: 100, Seed: 7, MedianTokens: 6000, P99Tokens: 60000, Dialect: d}, func(line []byte) error {
			r, err := traj.Decode(append([]byte(nil), line...), traj.Pos{}, traj.Schema{})
			if err != nil || len(r.Turns) < 6 {
				return nil
			}
			size += len(line)
			recs = append(recs, r)
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	cfg := prepass.Config{Counter: c, DigestOver: 200, ArgsOver: 100}
	never := func(int) bool { return false }
	b.SetBytes(int64(size))
	for b.Loop() {
		for _, r := range recs {
			prepass.Apply(r, r.Turns, 2, len(r.Turns)-2, never, cfg)
		}
	}
}
