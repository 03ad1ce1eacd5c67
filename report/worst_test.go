package report

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/metrics"
	"github.com/trajcompress/trajcompress/outcome"
)

func TestWorstKeepsTheWorstInOrder(t *testing.T) {
	w := NewWorst(3)
	var lines bytes.Buffer
	obs := []metrics.Observation{
		{Line: 1, Outcome: outcome.Uncompressible, Reason: "no_middle", TokensBefore: 900, TokensAfter: 1}, // unchanged: after = before
		{Line: 2, Outcome: outcome.CompressedOverLimit, TokensBefore: 2000, TokensAfter: 1500},
		{Line: 3, Outcome: outcome.SummaryFailed, Reason: "timeout", TokensBefore: 1500},
		{Line: 4, Outcome: outcome.Compressed, TokensBefore: 5000, TokensAfter: 900},
		{Line: 5, Outcome: outcome.SkippedUnderTarget, TokensBefore: 100},
		{Line: 6, Outcome: outcome.CompressedOverLimit, TokensBefore: 1600, TokensAfter: 1000},
		{Line: 7, Outcome: outcome.Compressed, TokensBefore: 3000, TokensAfter: 1000},
		{Line: 8, Outcome: outcome.Invalid, RejectReason: "invalid_json"},
	}
	for _, o := range obs {
		o.Source = "a.jsonl"
		w.Observe(o)
		lines.Write(o.AppendJSON(nil))
		lines.WriteByte('\n')
	}
	line := func(cs []Case) []int64 {
		var out []int64
		for _, c := range cs {
			out = append(out, c.Line)
		}
		return out
	}
	// Over target: 1500 (line 2) and 1500 (line 3, later), 1000 (line 6);
	// line 1 (900) falls off.
	if got := line(w.over); len(got) != 3 || got[0] != 2 || got[1] != 3 || got[2] != 6 {
		t.Errorf("over target: lines %v, want [2 3 6]", got)
	}
	if got := line(w.saved); len(got) != 3 || got[0] != 4 || got[1] != 7 || got[2] != 6 {
		t.Errorf("savings: lines %v, want [4 7 6]", got)
	}
	// The --outcomes lines give the same tables.
	r := NewWorst(3)
	if err := ReadOutcomes(&lines, "o.jsonl", r); err != nil {
		t.Fatal(err)
	}
	if r.Records() != 8 || len(r.over) != 3 || len(r.saved) != 3 {
		t.Fatalf("from the lines: %d records, %d over, %d saved", r.Records(), len(r.over), len(r.saved))
	}
	for i := range r.over {
		if r.over[i] != w.over[i] || r.saved[i] != w.saved[i] {
			t.Errorf("row %d differs: %+v / %+v, %+v / %+v", i, r.over[i], w.over[i], r.saved[i], w.saved[i])
		}
	}
}

func TestReadOutcomesRefuses(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"{\"source\":\"a\",\"line\":1,\"outcome\":\"compressed\",\"tokens_before\":5,\"tokens_after\":3}\n{", "o.jsonl:2: not an outcomes line"},
		{`{"source":"a","line":1,"outcome":"shrunk","tokens_before":5,"tokens_after":3}`, `o.jsonl:1: not an outcomes line (outcome "shrunk"`},
		{`{"summary":{}}`, "o.jsonl:1: not an outcomes line"},
	} {
		err := ReadOutcomes(strings.NewReader(tc.in), "o.jsonl", NewWorst(3))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.want)
		}
	}
}

// TestWorstMergeOfParts: the Worst of consecutive parts of a run, taken
// through JSON and merged in order (lines counted from each part's start,
// shifted back), equals the Worst of the whole run.
func TestWorstMergeOfParts(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	outs := outcome.All()
	var obs []metrics.Observation
	for i := range 3000 {
		o := metrics.Observation{Source: "a.jsonl", Line: int64(i + 1), Outcome: outs[r.IntN(len(outs))], TokensBefore: r.IntN(50) * 100}
		o.TokensAfter = r.IntN(o.TokensBefore + 1) // ties on purpose
		if o.Outcome == outcome.Uncompressible {
			o.Reason = "collapsed"
		}
		obs = append(obs, o)
	}
	whole := NewWorst(DefaultWorst)
	for _, o := range obs {
		whole.Observe(o)
	}
	merged := NewWorst(DefaultWorst)
	for start := 0; start < len(obs); {
		end := min(len(obs), start+1+r.IntN(400))
		part := NewWorst(DefaultWorst)
		for _, o := range obs[start:end] {
			o.Line -= int64(start) // relative to the part
			part.Observe(o)
		}
		b, err := json.Marshal(part)
		if err != nil {
			t.Fatal(err)
		}
		var back Worst
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		merged.Merge(&back, int64(start))
		start = end
	}
	if !reflect.DeepEqual(merged, whole) {
		t.Fatalf("merged parts:\n%+v\nwhole:\n%+v", merged, whole)
	}
}
