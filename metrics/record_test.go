package metrics

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/outcome"
)

// The record path's steps, as pipeline.Compressor takes them, give the
// observation and the compression_metrics the peer writes.
func TestObservationSteps(t *testing.T) {
	cases := []struct {
		name string
		do   func(o *Observation)
		want Observation
		json string
	}{
		{"reject", func(o *Observation) { o.Reject("invalid_json") },
			Observation{Outcome: outcome.Invalid, RejectReason: "invalid_json"}, ""},
		{"skipped", func(o *Observation) { o.Measure(90, 4); o.Leave(outcome.SkippedUnderTarget, "") },
			Observation{Outcome: outcome.SkippedUnderTarget, TokensBefore: 90, TokensAfter: 90, TurnsBefore: 4, TurnsAfter: 4},
			`{"original_tokens":90,"compressed_tokens":90,"tokens_saved":0,"compression_ratio":1.0,"original_turns":4,"compressed_turns":4,"turns_removed":0,"compression_region":{"start_idx":-1,"end_idx":-1,"turns_count":0},"was_compressed":false,"still_over_limit":false,"skipped_under_target":true,"summarization_api_calls":0,"summarization_errors":0}`},
		{"summary_failed", func(o *Observation) {
			o.Measure(900, 12)
			o.Region = &[2]int{3, 8}
			o.Leave(outcome.SummaryFailed, "timeout")
		}, Observation{Outcome: outcome.SummaryFailed, Reason: "timeout", TokensBefore: 900, TokensAfter: 900, TurnsBefore: 12, TurnsAfter: 12}, ""},
		{"compressed", func(o *Observation) {
			o.Measure(900, 12)
			o.Region = &[2]int{3, 8}
			o.SummaryCalls = 1
			o.Settle(outcome.CompressedOverLimit, 610, 8)
		}, Observation{Outcome: outcome.CompressedOverLimit, TokensBefore: 900, TokensAfter: 610, TurnsBefore: 12, TurnsAfter: 8, Region: &[2]int{3, 8}, SummaryCalls: 1},
			`{"original_tokens":900,"compressed_tokens":610,"tokens_saved":290,"compression_ratio":0.6778,"original_turns":12,"compressed_turns":8,"turns_removed":4,"compression_region":{"start_idx":3,"end_idx":8,"turns_count":5},"was_compressed":true,"still_over_limit":true,"skipped_under_target":false,"summarization_api_calls":1,"summarization_errors":0}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var o Observation
			c.do(&o)
			if string(o.AppendJSON(nil)) != string(c.want.AppendJSON(nil)) || o.RejectReason != c.want.RejectReason {
				t.Errorf("got  %s\nwant %s", o.AppendJSON(nil), c.want.AppendJSON(nil))
			}
			if c.json == "" {
				return
			}
			b, err := o.TrajectoryJSON()
			if err != nil || string(b) != c.json {
				t.Errorf("TrajectoryJSON = %s, %v\nwant %s", b, err, c.json)
			}
		})
	}
}

// TestOutcomeLineUTF8Repaired: the outcome line carries utf8_repaired only
// when the record had ill-formed UTF-8, and the summary counts such
// records (merge-exact) in records_utf8_repaired, absent when zero.
func TestOutcomeLineUTF8Repaired(t *testing.T) {
	o := Observation{Source: "f", Line: 3, Outcome: outcome.SkippedUnderTarget, TokensBefore: 5, TurnsBefore: 1}
	if b := string(o.AppendJSON(nil)); strings.Contains(b, "utf8") {
		t.Errorf("valid record: %s", b)
	}
	var s, a, b Summary
	s.Observe(o)
	a.Observe(o)
	if strings.Contains(string(must(json.Marshal(s.Report(RunInfo{})))), "utf8") {
		t.Error("records_utf8_repaired present with none repaired")
	}
	o.UTF8Repaired = 2
	if b := string(o.AppendJSON(nil)); !strings.Contains(b, `"pairing_problems_before":0,"utf8_repaired":2,`) {
		t.Errorf("repaired record: %s", b)
	}
	s.Observe(o)
	b.Observe(o)
	a.Merge(&b)
	if !a.Equal(&s) || s.Report(RunInfo{}).Outcomes.RecordsUTF8Repaired != 1 {
		t.Errorf("records_utf8_repaired = %d, want 1 (merged equal: %v)", s.Report(RunInfo{}).Outcomes.RecordsUTF8Repaired, a.Equal(&s))
	}
}

// TestOutcomeLineImagesRemoved: the outcome line carries images_removed
// and image_tokens_saved only when an image was removed; the summary sums
// them (merge-exact, kept by the state) in the report's images section,
// absent when none was.
func TestOutcomeLineImagesRemoved(t *testing.T) {
	o := Observation{Source: "f", Line: 3, Outcome: outcome.Compressed, TokensBefore: 5000, TurnsBefore: 9, TokensAfter: 3000, TurnsAfter: 9}
	var s, a, b Summary
	s.Observe(o)
	a.Observe(o)
	if l := string(o.AppendJSON(nil)); strings.Contains(l, "image") {
		t.Errorf("no image removed: %s", l)
	}
	if r := string(must(json.Marshal(s.Report(RunInfo{})))); strings.Contains(r, "image") {
		t.Errorf("images section with none removed: %s", r)
	}
	o.ImagesRemoved, o.ImageTokensSaved = 2, 1530
	if l := string(o.AppendJSON(nil)); !strings.Contains(l, `"pairing_problems_before":0,"images_removed":2,"image_tokens_saved":1530,`) {
		t.Errorf("record with images removed: %s", l)
	}
	s.Observe(o)
	s.Observe(o)
	b.Observe(o)
	b.Observe(o)
	st, err := b.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	var back Summary
	if err := back.UnmarshalState(st); err != nil {
		t.Fatal(err)
	}
	a.Merge(&back)
	if !a.Equal(&s) {
		t.Error("merged state differs from observing all")
	}
	if got := s.Report(RunInfo{}).Images; got == nil || *got != (ImagesSection{ImagesRemoved: 4, ImageTokensSaved: 3060}) {
		t.Errorf("images section %+v", got)
	}
	var h strings.Builder
	s.Human(&h)
	if !strings.Contains(h.String(), "images:  4 old images replaced by text, 3060 tokens saved") {
		t.Errorf("human summary:\n%s", h.String())
	}
}

// The human summary's prepass total includes the image step's tokens
// (images removed by --drop-old-images or --prepass), and says what each
// part saved; the images found come before the images replaced (the order
// a reader scans them in).
func TestHumanPrepassImages(t *testing.T) {
	var s Summary
	o := Observation{Source: "f", Line: 1, Outcome: outcome.Compressed, TokensBefore: 5000, TurnsBefore: 9, TokensAfter: 3000, TurnsAfter: 9,
		Images: 3, ImagesRemoved: 2, ImageTokensSaved: 1530}
	o.Prepass.Ran, o.Prepass.Fit = true, true
	s.Observe(o)
	o.Line, o.ImagesRemoved, o.ImageTokensSaved = 2, 1, 400
	o.Prepass.Saved = [NumPrepassSteps]int{100, 20, 0}
	s.Observe(o)
	var h strings.Builder
	s.Human(&h)
	out := h.String()
	for _, want := range []string{
		"images:  6 found, counted in the tokens below\nimages:  3 old images replaced by text, 1930 tokens saved\n",
		"prepass: 2 of 2 records over target fit by the prepass alone; 2050 tokens saved (1930 by old images, 120 by the text steps)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("human summary lacks %q:\n%s", want, out)
		}
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// TestTwoTurnListsCounted: a record read by one of two identical turn
// lists says which in its outcome line and is counted, merge-exact and
// through the state, in records_two_turn_lists (absent when none).
func TestTwoTurnListsCounted(t *testing.T) {
	o := Observation{Source: "f", Line: 3, Outcome: outcome.SkippedUnderTarget, TokensBefore: 5, TurnsBefore: 1}
	var s, a, b Summary
	s.Observe(o)
	a.Observe(o)
	if strings.Contains(string(o.AppendJSON(nil)), "turn_list") || strings.Contains(string(must(json.Marshal(s.Report(RunInfo{})))), "two_turn_lists") {
		t.Error("turn list note present with none")
	}
	o.TurnListRead = "conversations"
	if l := string(o.AppendJSON(nil)); !strings.Contains(l, `"pairing_problems_before":0,"turn_list_read":"conversations",`) {
		t.Errorf("outcome line: %s", l)
	}
	s.Observe(o)
	b.Observe(o)
	a.Merge(&b)
	st, err := a.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	var back Summary
	if err := back.UnmarshalState(st); err != nil {
		t.Fatal(err)
	}
	if !a.Equal(&s) || !back.Equal(&s) || s.Report(RunInfo{}).Outcomes.RecordsTwoTurnLists != 1 {
		t.Errorf("records_two_turn_lists = %d, want 1 (merged equal: %v, state equal: %v)", s.Report(RunInfo{}).Outcomes.RecordsTwoTurnLists, a.Equal(&s), back.Equal(&s))
	}
	var h strings.Builder
	s.Human(&h)
	if !strings.Contains(h.String(), `1 records held both "conversations" and "messages"`) {
		t.Errorf("human summary: %s", h.String())
	}
}

// TestTrainerFates: the outcome line carries what the trainer does to the
// row before and after; the report counts the lossy, dropped and skipped
// rows and the tokens lost, and has no trainer section without a trainer.
func TestTrainerFates(t *testing.T) {
	var s Summary
	s.Observe(Observation{Source: "f", Line: 1, Outcome: outcome.SkippedUnderTarget, TokensBefore: 10, TokensAfter: 10, TurnsBefore: 2, TurnsAfter: 2})
	if s.Report(RunInfo{}).Trainer != nil {
		t.Fatal("trainer section without a trainer")
	}
	o := Observation{Source: "f", Line: 2, Outcome: outcome.Compressed, TokensBefore: 5000, TokensAfter: 4000, TurnsBefore: 9, TurnsAfter: 5,
		Trainer: &[2]TrainerFate{{Action: "cut", Lost: 904}, {}}}
	s.Observe(o)
	s.Observe(Observation{Source: "f", Line: 3, Outcome: outcome.Uncompressible, Reason: "chat_template", TokensBefore: 7, TurnsBefore: 3,
		Trainer: &[2]TrainerFate{{Action: "skip"}, {Action: "skip"}}})
	s.Observe(Observation{Source: "f", Line: 4, Outcome: outcome.CompressedOverLimit, TokensBefore: 9000, TokensAfter: 5000, TurnsBefore: 9, TurnsAfter: 5,
		Trainer: &[2]TrainerFate{{Action: "drop", Lost: 9000}, {Action: "drop", Lost: 5000}}})
	// A row whose trained tokens could not be counted says why, and is
	// counted.
	unknown := Observation{Source: "f", Line: 5, Outcome: outcome.SkippedUnderTarget, TokensBefore: 10, TokensAfter: 10, TurnsBefore: 2, TurnsAfter: 2,
		Trainer: &[2]TrainerFate{{TrainedUnknown: "axolotl: no token offsets"}, {TrainedUnknown: "axolotl: no token offsets"}}}
	s.Observe(unknown)
	if line := string(unknown.AppendJSON(nil)); !strings.Contains(line, `"trainer_before":{"action":"","tokens_lost":0,"trained_unknown":"axolotl: no token offsets"}`) {
		t.Errorf("outcome line %s", line)
	}
	got := s.Report(RunInfo{}).Trainer
	want := TrainerSection{Records: 4, LossyBefore: 3, DroppedBefore: 1, SkippedBefore: 1, LostBefore: 9904, LossyAfter: 2, DroppedAfter: 1, SkippedAfter: 1, LostAfter: 5000,
		UnknownBefore: 1, UnknownAfter: 1}
	if got == nil || *got != want {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	line := string(o.AppendJSON(nil))
	if !strings.Contains(line, `"trainer_before":{"action":"cut","tokens_lost":904},"trainer_after":{"action":"","tokens_lost":0}`) {
		t.Errorf("outcome line %s", line)
	}
	st, err := s.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	var back Summary
	if err := back.UnmarshalState(st); err != nil || *back.Report(RunInfo{}).Trainer != want {
		t.Errorf("state round trip: %v", err)
	}
}
