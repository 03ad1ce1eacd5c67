package metrics

import (
	"strconv"

	"github.com/trajcompress/trajcompress/internal/jsonx"
)

// TrainerFate is what the trainer of a run's training config does to one
// row at its own limit (the row as its trainer counts it: the run's
// tokens_before / tokens_after): Action is "" (trained on whole), "cut"
// (LLaMA-Factory's infer_seqlen), "truncate" or "truncate_start" (cut at
// an end), "drop" (not trained on), "raise" (axolotl stops) or "skip"
// (LLaMA-Factory skips the row for its shape); Lost is the tokens not
// trained on: over the limit when cut, the whole row when dropped.
// TrainedUnknown, when set, is why the row's trained tokens, on which the
// trainer's fate of it depends (axolotl under sample_packing drops a row
// with none), could not be counted: the fate then assumes it has some.
type TrainerFate struct {
	Action         string
	Lost           int
	TrainedUnknown string
}

// trainerCounts are the rows a trainer loses, before and after
// compression; comparable.
type trainerCounts struct {
	Records       int64 `json:"records"` // records a trainer judged
	LossyBefore   int64 `json:"lossy_before"`
	DroppedBefore int64 `json:"dropped_before"`
	SkippedBefore int64 `json:"skipped_before"`
	LostBefore    int64 `json:"tokens_lost_before"`
	LossyAfter    int64 `json:"lossy_after"`
	DroppedAfter  int64 `json:"dropped_after"`
	SkippedAfter  int64 `json:"skipped_after"`
	LostAfter     int64 `json:"tokens_lost_after"`
	Repaired      int64 `json:"repaired,omitempty"`
	UnknownBefore int64 `json:"trained_unknown_before,omitempty"`
	UnknownAfter  int64 `json:"trained_unknown_after,omitempty"`
}

func (t *trainerCounts) observe(o Observation) {
	if o.Trainer == nil {
		return
	}
	t.Records++
	if len(o.Repairs) > 0 {
		t.Repaired++
	}
	if o.Trainer[0].TrainedUnknown != "" {
		t.UnknownBefore++
	}
	if o.Trainer[1].TrainedUnknown != "" {
		t.UnknownAfter++
	}
	add := func(f TrainerFate, lossy, dropped, skipped, lost *int64) {
		switch f.Action {
		case "":
			return
		case "skip":
			*skipped++
		case "drop", "raise":
			*dropped++
		}
		*lossy++
		*lost += int64(f.Lost)
	}
	add(o.Trainer[0], &t.LossyBefore, &t.DroppedBefore, &t.SkippedBefore, &t.LostBefore)
	add(o.Trainer[1], &t.LossyAfter, &t.DroppedAfter, &t.SkippedAfter, &t.LostAfter)
}

func (t *trainerCounts) merge(o trainerCounts) {
	t.Records += o.Records
	t.LossyBefore += o.LossyBefore
	t.DroppedBefore += o.DroppedBefore
	t.SkippedBefore += o.SkippedBefore
	t.LostBefore += o.LostBefore
	t.LossyAfter += o.LossyAfter
	t.DroppedAfter += o.DroppedAfter
	t.SkippedAfter += o.SkippedAfter
	t.LostAfter += o.LostAfter
	t.Repaired += o.Repaired
	t.UnknownBefore += o.UnknownBefore
	t.UnknownAfter += o.UnknownAfter
}

// TrainerSection is what the trainer of the run's training config would
// do to the rows at its own limit, as read (before) and as written
// (after): the rows it would not train on whole (lossy: cut, truncated,
// dropped or skipped), of them the rows dropped (or raised on) and the
// rows skipped for their shape, and the tokens it would not train on.
// Present only in a run with a trainer (--trainer-config, --trainer). The
// after figures are the ones a run should bring to 0 (skipped rows aside).
// Repaired counts the rows repaired so that the trainer accepts them (the
// before figures are of the rows as read, the after ones as written).
// UnknownBefore and UnknownAfter count the rows whose trained tokens, on
// which the trainer's fate depends, could not be counted (the outcome
// line's trained_unknown says why; absent when 0).
type TrainerSection struct {
	Records       int64 `json:"records"`
	LossyBefore   int64 `json:"rows_lossy_before"`
	DroppedBefore int64 `json:"rows_dropped_before"`
	SkippedBefore int64 `json:"rows_skipped_before"`
	LostBefore    int64 `json:"tokens_lost_before"`
	LossyAfter    int64 `json:"rows_lossy_after"`
	DroppedAfter  int64 `json:"rows_dropped_after"`
	SkippedAfter  int64 `json:"rows_skipped_after"`
	LostAfter     int64 `json:"tokens_lost_after"`
	Repaired      int64 `json:"rows_repaired"`
	UnknownBefore int64 `json:"rows_trained_unknown_before,omitempty"`
	UnknownAfter  int64 `json:"rows_trained_unknown_after,omitempty"`
}

func (t trainerCounts) section() *TrainerSection {
	if t.Records == 0 {
		return nil
	}
	s := TrainerSection(t)
	return &s
}

// appendTrainer writes the trainer's fate of the row before and after, in
// the outcome line (only in a run with a trainer).
func (o Observation) appendTrainer(dst []byte) []byte {
	if o.Trainer == nil {
		return dst
	}
	if len(o.Repairs) > 0 {
		dst = append(dst, `,"repairs":[`...)
		for i, r := range o.Repairs {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = jsonx.AppendString(dst, r)
		}
		dst = append(dst, ']')
	}
	for i, k := range []string{`,"trainer_before":{"action":"`, `,"trainer_after":{"action":"`} {
		dst = append(dst, k...)
		dst = append(dst, o.Trainer[i].Action...)
		dst = append(dst, `","tokens_lost":`...)
		dst = strconv.AppendInt(dst, int64(o.Trainer[i].Lost), 10)
		if u := o.Trainer[i].TrainedUnknown; u != "" {
			dst = append(dst, `,"trained_unknown":`...)
			dst = jsonx.AppendString(dst, u)
		}
		dst = append(dst, '}')
	}
	return dst
}
