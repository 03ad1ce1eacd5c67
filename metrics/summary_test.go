package metrics

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trajcompress/trajcompress/outcome"
	"github.com/trajcompress/trajcompress/snap"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

// randomObservation returns an observation with a random outcome and
// plausible counts.
func randomObservation(r *rand.Rand, line int64) Observation {
	outs := outcome.All()
	// More group names than MaxGroups, so that merges fold some into other.
	o := Observation{Source: "f.jsonl", Line: line, Outcome: outs[r.IntN(len(outs))], Group: fmt.Sprintf("g%03d", r.IntN(MaxGroups*3/2))}
	if o.Outcome == outcome.Invalid {
		o.RejectReason = "not valid JSON"
		return o
	}
	o.TokensBefore = r.IntN(200000)
	o.TurnsBefore = 1 + r.IntN(300)
	o.TokensAfter = r.IntN(200000) // ignored for unchanged outcomes
	o.TurnsAfter = r.IntN(300)
	switch o.Outcome {
	case outcome.Uncompressible:
		o.Reason = string(outcome.AllReasons()[r.IntN(3)])
	case outcome.Compressed, outcome.CompressedOverLimit:
		o.TokensAfter = r.IntN(o.TokensBefore + 1)
		o.TurnsAfter = 1 + r.IntN(o.TurnsBefore)
		o.Region = &[2]int{2, 2 + o.TurnsBefore - o.TurnsAfter + 1}
		o.SummaryCalls = 1 + r.IntN(3)
		o.SummaryErrors = o.SummaryCalls - 1
		o.CacheHit = r.IntN(2) == 0
		o.PromptTokens, o.CompletionTokens = r.IntN(5000), r.IntN(800)
	case outcome.SummaryFailed:
		o.SummaryCalls, o.SummaryErrors = 3, 3
	}
	if r.IntN(3) == 0 {
		o.Prepass = Prepass{Ran: true, Fit: r.IntN(2) == 0, Saved: [NumPrepassSteps]int{r.IntN(100), r.IntN(5000), r.IntN(300)}}
	}
	if r.IntN(4) == 0 {
		kinds := []string{"aws_access_token", "jwt", "url_password"}
		o.Redactions = map[string]int{kinds[r.IntN(3)]: 1 + r.IntN(3), kinds[r.IntN(3)]: 1}
	}
	if o.Region != nil {
		o.Retention = Retention{Tools: r.IntN(5), Args: r.IntN(20)}
		o.Retention.ToolsKept, o.Retention.ArgsKept = r.IntN(o.Retention.Tools+1), r.IntN(o.Retention.Args+1)
	}
	if o.Outcome == outcome.Compressed && r.IntN(3) == 0 {
		o.ImagesRemoved, o.ImageTokensSaved = 1+r.IntN(5), r.IntN(4000)
	}
	if r.IntN(2) == 0 {
		acts := []string{"", "cut", "drop", "skip", "truncate"}
		before := TrainerFate{Action: acts[r.IntN(5)], Lost: r.IntN(9000)}
		after := TrainerFate{Action: acts[r.IntN(5)], Lost: r.IntN(100)}
		if before.Lost%7 == 0 { // trained tokens not counted (no token offsets)
			before.TrainedUnknown, after.TrainedUnknown = "no offsets", "no offsets"
		}
		o.Trainer = &[2]TrainerFate{before, after}
	}
	return o
}

func reportJSON(t *testing.T, s *Summary, info RunInfo) string {
	t.Helper()
	var buf bytes.Buffer
	if err := s.Report(info).WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestMergeEqualsObservingAll(t *testing.T) {
	info := RunInfo{Tokenizer: "o200k_base", Prepass: true, Redaction: true}
	for seed := range uint64(25) {
		r := rand.New(rand.NewPCG(seed, 99))
		n := r.IntN(400)
		parts := make([]Summary, 1+r.IntN(8))
		var all Summary
		for i := range n {
			o := randomObservation(r, int64(i+1))
			all.Observe(o)
			parts[r.IntN(len(parts))].Observe(o)
		}
		// merge in a random order into a fresh summary
		var merged Summary
		for _, i := range r.Perm(len(parts)) {
			merged.Merge(&parts[i])
		}
		if !merged.Equal(&all) {
			t.Fatalf("seed %d: merged summary of %d parts differs from observing all %d", seed, len(parts), n)
		}
		if a, m := reportJSON(t, &all, info), reportJSON(t, &merged, info); a != m {
			t.Fatalf("seed %d: reports differ:\nall:\n%s\nmerged:\n%s", seed, a, m)
		}
		if all.RecordsIn() != int64(n) || all.RecordsIn() != all.RecordsOut()+all.RecordsRejected() {
			t.Fatalf("seed %d: in %d, out %d, rejected %d for %d observations", seed, all.RecordsIn(), all.RecordsOut(), all.RecordsRejected(), n)
		}
	}
}

func TestEqualDetectsDifferences(t *testing.T) {
	var a, b Summary
	a.Observe(Observation{Outcome: outcome.Compressed, TokensBefore: 100, TokensAfter: 50})
	b.Observe(Observation{Outcome: outcome.Compressed, TokensBefore: 100, TokensAfter: 51})
	if a.Equal(&b) {
		t.Error("summaries with different tokens after compare equal")
	}
	var c, d Summary
	c.Observe(Observation{Outcome: outcome.SkippedUnderTarget, Redactions: map[string]int{"jwt": 1}})
	d.Observe(Observation{Outcome: outcome.SkippedUnderTarget, Redactions: map[string]int{"jwt": 2}})
	if c.Equal(&d) {
		t.Error("summaries with different redaction counts compare equal")
	}
}

// The peer's AggregateMetrics tests (docs/peer.md §9), under our report.
func TestReportPeerAggregateCases(t *testing.T) {
	compressed := func(before, after int) Observation {
		return Observation{Outcome: outcome.Compressed, TokensBefore: before, TokensAfter: after, TurnsBefore: 10, TurnsAfter: 7, Region: &[2]int{4, 8}, SummaryCalls: 1}
	}
	cases := []struct {
		name  string
		obs   []Observation
		check func(t *testing.T, r Report, js string)
	}{
		{"empty_defaults", nil, func(t *testing.T, r Report, js string) {
			for _, want := range []string{`"avg_compression_ratio": 1.0`, `"avg_tokens_saved_per_compressed": 0,`,
				`"avg_turns_removed_per_compressed": 0`, `"success_rate": 1.0`, `"overall_compression_ratio": 0.0`, `"compression_rate": 0.0`} {
				if !strings.Contains(js, want) {
					t.Errorf("report lacks %s:\n%s", want, js)
				}
			}
		}},
		{"compressed_counted_and_ratio_recorded", []Observation{compressed(1000, 400)}, func(t *testing.T, r Report, _ string) {
			if r.Summary.TrajectoriesCompressed != 1 || r.Averages.AvgCompressionRatio != 0.4 {
				t.Errorf("compressed %d, avg ratio %v; want 1, 0.4", r.Summary.TrajectoriesCompressed, r.Averages.AvgCompressionRatio)
			}
		}},
		{"skipped_is_not_compressed", []Observation{{Outcome: outcome.SkippedUnderTarget, TokensBefore: 10, TurnsBefore: 3}}, func(t *testing.T, r Report, _ string) {
			if r.Summary.TrajectoriesSkippedUnderTarget != 1 || r.Summary.TrajectoriesCompressed != 0 || r.Tokens.TotalAfter != 10 {
				t.Errorf("summary %+v tokens %+v", r.Summary, r.Tokens)
			}
		}},
		{"compressed_over_limit_counts_in_both", []Observation{{Outcome: outcome.CompressedOverLimit, TokensBefore: 30000, TokensAfter: 20000, TurnsBefore: 20, TurnsAfter: 15}}, func(t *testing.T, r Report, _ string) {
			if r.Summary.TrajectoriesCompressed != 1 || r.Summary.TrajectoriesStillOverLimit != 1 || r.Outcomes.FailedToFit != 1 {
				t.Errorf("summary %+v, failed_to_fit %d", r.Summary, r.Outcomes.FailedToFit)
			}
		}},
		{"three_compressed_save_15000_at_half", []Observation{compressed(10000, 5000), compressed(10000, 5000), compressed(10000, 5000)}, func(t *testing.T, r Report, js string) {
			if r.Tokens.TotalSaved != 15000 || r.Averages.AvgCompressionRatio != 0.5 {
				t.Errorf("total_saved %d avg ratio %v; want 15000, 0.5", r.Tokens.TotalSaved, r.Averages.AvgCompressionRatio)
			}
			if !strings.Contains(js, `"avg_tokens_saved_per_compressed": 5000.0`) || !strings.Contains(js, `"avg_turns_removed_per_compressed": 3.0`) {
				t.Errorf("averages not printed as floats:\n%s", js)
			}
		}},
		{"unchanged_outcomes_have_after_equal_before", []Observation{
			{Outcome: outcome.Uncompressible, Reason: string(outcome.NoMiddle), TokensBefore: 20000, TokensAfter: 0, TurnsBefore: 4},
			{Outcome: outcome.SummaryFailed, TokensBefore: 30000, TurnsBefore: 40, SummaryCalls: 3, SummaryErrors: 3},
		}, func(t *testing.T, r Report, _ string) {
			if r.Tokens.TotalAfter != 50000 || r.Turns.TotalAfter != 44 || r.Summary.TotalTrajectories != 2 || r.Summary.TrajectoriesFailed != 1 {
				t.Errorf("tokens %+v turns %+v summary %+v", r.Tokens, r.Turns, r.Summary)
			}
			if r.Summary.TrajectoriesStillOverLimit != 2 || r.Outcomes.FailedToFit != 1 || r.Summarization.SuccessRate != 0 {
				t.Errorf("still over %d failed_to_fit %d success %v", r.Summary.TrajectoriesStillOverLimit, r.Outcomes.FailedToFit, r.Summarization.SuccessRate)
			}
		}},
		{"invalid_is_rejected_and_in_no_total", []Observation{{Outcome: outcome.Invalid, RejectReason: "bad json", TokensBefore: 5}, {Outcome: outcome.SkippedUnderTarget, TokensBefore: 7, TurnsBefore: 2}}, func(t *testing.T, r Report, _ string) {
			o := r.Outcomes
			if o.RecordsIn != 2 || o.RecordsOut != 1 || o.RecordsRejected != 1 || o.Invalid != 1 || r.Tokens.TotalBefore != 7 || r.Summary.TotalTrajectories != 1 {
				t.Errorf("outcomes %+v tokens %+v", o, r.Tokens)
			}
			if r.Distributions.TokensBefore.Max != 7 {
				t.Errorf("distribution includes the rejected record: %+v", r.Distributions.TokensBefore)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var s Summary
			for _, o := range tc.obs {
				s.Observe(o)
			}
			tc.check(t, s.Report(RunInfo{}), reportJSON(t, &s, RunInfo{}))
		})
	}
}

// goldenSummary observes a fixed mix of every outcome and reason.
func goldenSummary() *Summary {
	var s Summary
	obs := []Observation{
		{Source: "runs/a.jsonl", Line: 1, Outcome: outcome.SkippedUnderTarget, TokensBefore: 9000, TurnsBefore: 12},
		{Source: "runs/a.jsonl", Line: 2, Outcome: outcome.Compressed, TokensBefore: 30000, TokensAfter: 14000, TurnsBefore: 60, TurnsAfter: 21, Region: &[2]int{4, 44}, SummaryCalls: 1, PromptTokens: 16000, CompletionTokens: 700,
			Prepass: Prepass{Ran: true, Saved: [NumPrepassSteps]int{120, 3000, 0}}, Retention: Retention{Tools: 4, ToolsKept: 4, Args: 20, ArgsKept: 17}, Redactions: map[string]int{"github_pat": 1}},
		{Source: "runs/a.jsonl", Line: 3, Outcome: outcome.CompressedOverLimit, TokensBefore: 50000, TokensAfter: 20001, TurnsBefore: 80, TurnsAfter: 9, Region: &[2]int{4, 76}, SummaryCalls: 2, SummaryErrors: 1, CacheHit: true},
		{Source: "runs/a.jsonl", Line: 4, Outcome: outcome.Uncompressible, Reason: string(outcome.NoMiddle), TokensBefore: 16000, TurnsBefore: 4},
		{Source: "runs/a.jsonl", Line: 5, Outcome: outcome.Uncompressible, Reason: string(outcome.Collapsed), TokensBefore: 17000, TurnsBefore: 10},
		{Source: "runs/b.jsonl", Line: 1, Outcome: outcome.Uncompressible, Reason: string(outcome.RegionTooSmall), TokensBefore: 15251, TurnsBefore: 7},
		{Source: "runs/b.jsonl", Line: 2, Outcome: outcome.SummaryFailed, Reason: "timeout", TokensBefore: 40000, TurnsBefore: 33, SummaryCalls: 3, SummaryErrors: 3},
		{Source: "runs/b.jsonl", Line: 3, Outcome: outcome.Invalid, RejectReason: "line 3: not a JSON object", Redactions: map[string]int{"url_password": 1}},
		{Source: "runs/b.jsonl", Line: 4, Outcome: outcome.Compressed, TokensBefore: 20000, TokensAfter: 15250, TurnsBefore: 30, TurnsAfter: 25, Region: &[2]int{5, 11}, SummaryCalls: 1,
			Prepass: Prepass{Ran: true, Saved: [NumPrepassSteps]int{0, 800, 40}}, Retention: Retention{Tools: 2, ToolsKept: 2, Args: 3, ArgsKept: 2}},
	}
	for _, o := range obs {
		s.Observe(o)
	}
	return &s
}

func TestReportGolden(t *testing.T) {
	b := snap.DefaultBudget()
	info := RunInfo{
		Tokenizer: "o200k_base", TurnOverhead: 3, Budget: &b, Prepass: true, Redaction: true,
		Start: time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC),
		End:   time.Date(2026, 11, 22, 9, 1, 2, 345678912, time.UTC),
	}
	s := goldenSummary()
	s.Label("agent_runs.jsonl")
	got := reportJSON(t, s, info)
	path := filepath.Join("testdata", "report.golden.json")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./metrics -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("report differs from %s (go test ./metrics -update to accept):\ngot:\n%s", path, got)
	}
	// Key order is part of the contract: the peer's sections first.
	order := []string{`"summary"`, `"tokens"`, `"turns"`, `"averages"`, `"summarization"`, `"processing"`, `"outcomes"`, `"distributions"`, `"groups"`, `"prepass"`, `"redaction"`, `"retention"`, `"run"`}
	last := -1
	for _, k := range order {
		i := strings.Index(got, k)
		if i <= last {
			t.Errorf("section %s out of order", k)
		}
		last = i
	}
	var generic map[string]any
	if err := json.Unmarshal([]byte(got), &generic); err != nil {
		t.Errorf("report is not valid JSON: %v", err)
	}
}

func TestObservationAppendJSON(t *testing.T) {
	cases := []struct {
		name string
		o    Observation
		want string
	}{
		{"compressed_with_region",
			Observation{Source: "runs/a.jsonl", Line: 2, Outcome: outcome.Compressed, TokensBefore: 30000, TokensAfter: 14000, TurnsBefore: 60, TurnsAfter: 21, Region: &[2]int{4, 44}},
			`{"source":"runs/a.jsonl","line":2,"outcome":"compressed","reason":null,"tokens_before":30000,"tokens_after":14000,"turns_before":60,"turns_after":21,"region":[4,44],"pairing_problems":0,"pairing_problems_before":0,"prepass":null,"redactions":{},"retention":null}`},
		{"uncompressible_reason_after_equals_before",
			Observation{Source: "a", Line: 9, Outcome: outcome.Uncompressible, Reason: "no_middle", TokensBefore: 20000, TurnsBefore: 4},
			`{"source":"a","line":9,"outcome":"uncompressible","reason":"no_middle","tokens_before":20000,"tokens_after":20000,"turns_before":4,"turns_after":4,"region":null,"pairing_problems":0,"pairing_problems_before":0,"prepass":null,"redactions":{},"retention":null}`},
		{"invalid_uses_reject_reason_and_escapes",
			Observation{Source: "dir/\"q\".jsonl", Line: 3, Outcome: outcome.Invalid, RejectReason: "bad\tline\x01 é \xff"},
			`{"source":"dir/\"q\".jsonl","line":3,"outcome":"invalid","reason":"bad\tline\u0001 é �","tokens_before":0,"tokens_after":0,"turns_before":0,"turns_after":0,"region":null,"pairing_problems":0,"pairing_problems_before":0,"prepass":null,"redactions":{},"retention":null}`},
		{"prepass_redactions_retention",
			Observation{Source: "a", Line: 1, Outcome: outcome.Compressed, TokensBefore: 900, TokensAfter: 500, TurnsBefore: 9, TurnsAfter: 9,
				Prepass:    Prepass{Ran: true, Fit: true, Saved: [NumPrepassSteps]int{10, 380, 0}},
				Redactions: map[string]int{"url_password": 1, "aws_access_token": 2},
				Retention:  Retention{Tools: 3, ToolsKept: 3, Args: 10, ArgsKept: 9}},
			`{"source":"a","line":1,"outcome":"compressed","reason":null,"tokens_before":900,"tokens_after":500,"turns_before":9,"turns_after":9,"region":null,"pairing_problems":0,"pairing_problems_before":0,` +
				`"prepass":{"fit":true,"saved":{"duplicates":10,"digests":380,"arguments":0}},"redactions":{"aws_access_token":2,"url_password":1},"retention":{"tool_names":[3,3],"paths_commands":[9,10]}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := string(tc.o.AppendJSON([]byte("x")))
			if got != "x"+tc.want {
				t.Errorf("AppendJSON =\n%s\nwant\n%s", got, "x"+tc.want)
			}
			m, err := json.Marshal(tc.o)
			if err != nil || string(m) != tc.want {
				t.Errorf("json.Marshal = %s, %v", m, err)
			}
			if !json.Valid(m) {
				t.Errorf("not valid JSON: %s", m)
			}
		})
	}
}

func TestTrajectoryMetrics(t *testing.T) {
	cases := []struct {
		name string
		o    Observation
		want string
	}{
		{"compressed",
			Observation{Outcome: outcome.Compressed, TokensBefore: 30000, TokensAfter: 14000, TurnsBefore: 60, TurnsAfter: 21, Region: &[2]int{4, 44}, SummaryCalls: 2, SummaryErrors: 1},
			`{"original_tokens":30000,"compressed_tokens":14000,"tokens_saved":16000,"compression_ratio":0.4667,"original_turns":60,"compressed_turns":21,"turns_removed":39,"compression_region":{"start_idx":4,"end_idx":44,"turns_count":40},"was_compressed":true,"still_over_limit":false,"skipped_under_target":false,"summarization_api_calls":2,"summarization_errors":1}`},
		{"over_limit_ratio_one",
			Observation{Outcome: outcome.CompressedOverLimit, TokensBefore: 100, TokensAfter: 100, TurnsBefore: 9, TurnsAfter: 7, Region: &[2]int{4, 7}, SummaryCalls: 1},
			`{"original_tokens":100,"compressed_tokens":100,"tokens_saved":0,"compression_ratio":1.0,"original_turns":9,"compressed_turns":7,"turns_removed":2,"compression_region":{"start_idx":4,"end_idx":7,"turns_count":3},"was_compressed":true,"still_over_limit":true,"skipped_under_target":false,"summarization_api_calls":1,"summarization_errors":0}`},
		{"skipped_defaults_region",
			Observation{Outcome: outcome.SkippedUnderTarget, TokensBefore: 0, TurnsBefore: 0},
			`{"original_tokens":0,"compressed_tokens":0,"tokens_saved":0,"compression_ratio":0.0,"original_turns":0,"compressed_turns":0,"turns_removed":0,"compression_region":{"start_idx":-1,"end_idx":-1,"turns_count":0},"was_compressed":false,"still_over_limit":false,"skipped_under_target":true,"summarization_api_calls":0,"summarization_errors":0}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(NewTrajectoryMetrics(tc.o))
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Errorf("got\n%s\nwant\n%s", b, tc.want)
			}
		})
	}
}

func TestHuman(t *testing.T) {
	var buf bytes.Buffer
	goldenSummary().Human(&buf)
	out := buf.String()
	for _, want := range []string{"skipped_under_target", "compressed_over_limit", "region_too_small", "failed to fit",
		"records: 9 in, 8 out, 1 rejected", "tokens:  197251 before, 146502 after, 50749 saved (ratio 0.7427)",
		"prepass: 0 of 2 records over target fit by the prepass alone; 3960 tokens saved", "redacted: 2 secrets in 2 records"} {
		if !strings.Contains(out, want) {
			t.Errorf("Human output lacks %q:\n%s", want, out)
		}
	}
}

func TestObservePanicsOnUnknownOutcome(t *testing.T) {
	cases := []struct {
		name string
		o    Observation
	}{
		{"unknown_outcome", Observation{Outcome: "exploded"}},
		{"unknown_reason", Observation{Outcome: outcome.Uncompressible, Reason: "until_collapsed"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("Observe(%+v) did not panic", tc.o)
				}
			}()
			var s Summary
			s.Observe(tc.o)
		})
	}
}

// Images and those of unknown size are sums: merged exactly, reported in
// the images section (absent without images, with the rule then only),
// and in the outcome line only when the record had one.
func TestImagesCounted(t *testing.T) {
	var a, b Summary
	a.Observe(Observation{Outcome: outcome.SkippedUnderTarget, Images: 3, ImagesUnknownSize: 1})
	b.Observe(Observation{Outcome: outcome.Compressed, Images: 2})
	b.Observe(Observation{Outcome: outcome.Invalid})
	var none Summary
	none.Observe(Observation{Outcome: outcome.SkippedUnderTarget})
	if r := none.Report(RunInfo{ImageTokens: "openai"}); r.Images != nil || r.Run.ImageTokens != "" {
		t.Errorf("without images: section %+v, rule %q", r.Images, r.Run.ImageTokens)
	}
	a.Merge(&b)
	r := a.Report(RunInfo{ImageTokens: "openai"})
	if r.Images == nil || *r.Images != (ImagesSection{Images: 5, ImagesUnknownSize: 1}) || r.Run.ImageTokens != "openai" {
		t.Errorf("images section %+v, rule %q", r.Images, r.Run.ImageTokens)
	}
	var h, hn strings.Builder
	a.Human(&h)
	none.Human(&hn)
	if !strings.Contains(h.String(), "images:  5 found, counted in the tokens below (1 of unknown size") || strings.Contains(hn.String(), "images") {
		t.Errorf("human tables:\n%s\n%s", h.String(), hn.String())
	}
	line := string(Observation{Outcome: outcome.SkippedUnderTarget, Images: 3}.AppendJSON(nil))
	if !strings.Contains(line, `"pairing_problems_before":0,"images":3,`) {
		t.Errorf("outcome line %s", line)
	}
	if line := string(Observation{Outcome: outcome.SkippedUnderTarget}.AppendJSON(nil)); strings.Contains(line, "images") {
		t.Errorf("outcome line without images: %s", line)
	}
}
