package llamafactory

import (
	"os"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/traj"
)

// FuzzEncode: any record traj reads is encoded or skipped by every
// template without a panic, the same way twice, and a row that is not
// skipped has a pair for every two messages and counts it encloses.
func FuzzEncode(f *testing.F) {
	b, err := os.ReadFile("testdata/synthetic.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f.Add(line)
	}
	f.Fuzz(func(t *testing.T, line string) {
		rec, err := traj.Decode([]byte(line), traj.Pos{}, traj.Schema{})
		if err != nil {
			return
		}
		for _, name := range Names() {
			r, err := New(Options{Template: name, Date: "15 Jan 2025"})
			if err != nil {
				t.Fatal(err)
			}
			tok := Tokens{Counter: runes{}, HasBOS: true}
			row := r.Encode(rec, rec.Turns, rec.System, tok)
			again := r.Encode(rec, rec.Turns, rec.System, tok)
			if rowCounts(row) != rowCounts(again) {
				t.Fatalf("%s: %s then %s", name, rowCounts(row), rowCounts(again))
			}
			if (row.Skip == nil) != (r.Skip(rec, rec.Turns, rec.System) == nil) {
				t.Fatalf("%s: Encode and Skip disagree", name)
			}
			if row.Skip != nil {
				continue
			}
			if len(row.Pairs) == 0 {
				t.Fatalf("%s: not skipped and no pair", name)
			}
			for i, p := range row.Pairs {
				if p.First < 0 || p.End > len(rec.Turns) || p.First >= p.End || (i > 0 && p.First < row.Pairs[i-1].End) {
					t.Fatalf("%s: pair %d covers turns [%d, %d) of %d", name, i, p.First, p.End, len(rec.Turns))
				}
			}
			for _, cutoff := range []int{1, 17, 1 << 20} {
				k := r.Cutoff(row, cutoff)
				if k.Length > max(cutoff, row.Total()) || k.Length+k.TokensLost != row.Total() {
					t.Fatalf("%s: cutoff %d kept %d lost %d of %d", name, cutoff, k.Length, k.TokensLost, row.Total())
				}
			}
		}
	})
}
