package jobcore

import (
	"context"
	"fmt"
	"strings"

	"github.com/trajcompress/trajcompress/internal/jsonx"
	"github.com/trajcompress/trajcompress/metrics"
	"github.com/trajcompress/trajcompress/trainer/trainercfg"
	"github.com/trajcompress/trajcompress/trainview"
)

// Fate is what a trainer does to one row, given its limit.
type Fate struct {
	// Action is "" (the row is trained on whole), "cut" (LLaMA-Factory's
	// infer_seqlen cut some pairs), "truncate" (cut at the end: axolotl's
	// excess_length_strategy truncate, TRL), "truncate_start" (TRL's
	// keep_end), "drop" (the row is not trained on: axolotl's default, or
	// TRL with no trained token left), "raise" (axolotl's raise: the run
	// stops), "skip" (LLaMA-Factory skips the row for its shape) or "over"
	// (over the limit, under no trainer's rule: hf).
	Action string
	// Tokens is the row's length as the trainer counts it; Lost the tokens
	// of it the trainer does not train on (the whole row when dropped).
	Tokens, Lost int
	// Why says it in words, for validate's lines ("" when trained whole).
	Why string
	// Repairable: a skipped row compress repairs (unless --no-repair).
	Repairable bool
	// Trained is the row's trained tokens where they were counted (axolotl:
	// under sample_packing, or for a row over the limit in validate), -1
	// otherwise; TrainedLost the trained tokens the trainer does not
	// train on.
	Trained, TrainedLost int
	// TrainedErr, when set, is why the trained tokens could not be counted
	// where the fate depends on them (axolotl's labelling under
	// sample_packing, or of a row over the limit in validate: a
	// training_detail under a tokenizer without offsets,
	// trainview.ErrNoOffsets, a template that raises on a labelling
	// turn); Trained is then -1 and Why says so.
	TrainedErr error
}

// Lossy says whether the trainer loses part or all of the row.
func (f Fate) Lossy() bool { return f.Action != "" }

// FateOf says what trainer s (nil: hf, no trainer's rule) does to the row
// of view v, counted by rc, for limit (cutoff_len, sequence_len,
// max_length). An error is the renderer's refusal of the row.
func FateOf(s *trainercfg.Spec, rc trainview.RecordCounter, v trainview.View, limit int) (Fate, error) {
	if lf, ok := rc.(*LlamaFactoryCounter); ok {
		row := lf.Row(v)
		if row.Skip != nil {
			verb := "skips the row"
			if row.Skip.Fatal {
				verb = "raises on the row (its pre-processing stops)"
			}
			f := Fate{Action: "skip", Why: fmt.Sprintf("LLaMA-Factory %s: %s", verb, row.Skip)}
			if _, done := lf.Repair(v.Record); len(done) > 0 {
				f.Why += "; compress repairs it (" + strings.Join(done, ", ") + ") unless --no-repair"
				f.Repairable = true
			}
			return f, nil
		}
		f := Fate{Tokens: row.Total()}
		c := lf.R.Cutoff(row, limit)
		if len(c.Cut) == 0 && len(c.Dropped) == 0 {
			return f, nil
		}
		f.Action, f.Lost = trainercfg.OverCut, c.TokensLost
		f.Why = fmt.Sprintf("LLaMA-Factory cuts it to cutoff_len %d (infer_seqlen): %d tokens, %d trained, lost of %d; %d of %d pairs cut, %d dropped; %d turns lost, %d cut",
			limit, c.TokensLost, c.TargetLost, f.Tokens, len(c.Cut), len(row.Pairs), len(c.Dropped), c.TurnsLost, c.TurnsCut)
		return f, nil
	}
	n, err := rc.CountCached(v, nil)
	if err != nil {
		return Fate{}, err
	}
	return fateAt(s, rc, n, limit, func() (trainview.View, error) { return v, nil }, true), nil
}

// fateAt is what trainer s does to a row of n tokens as rc counts it, at
// limit; view returns the row's view, asked for only when the fate
// depends on which of its tokens are trained, or, with report, to say how
// many trained tokens a row over the limit loses.
func fateAt(s *trainercfg.Spec, rc trainview.RecordCounter, n, limit int, view func() (trainview.View, error), report bool) Fate {
	f := Fate{Tokens: n}
	kind := trainercfg.HF
	if s != nil {
		kind = s.Kind
	}
	if kind == trainercfg.TRL && s.AssistantOnlyLoss {
		if v, err := view(); err == nil && !hasAssistant(v) {
			f.Action, f.Lost = trainercfg.OverRaise, n
			f.Why = "TRL raises (its tokenization stops): " + trlNoAssistant
			return f
		}
	}
	if kind == trainercfg.TRL && s.Packing && limit > 0 {
		return trlPacked(s, f, limit)
	}
	if kind == trainercfg.Axolotl {
		return axolotlFate(s, rc, f, limit, view, report)
	}
	if limit <= 0 || n <= limit {
		return f
	}
	over := n - limit
	switch kind {
	case trainercfg.TRL:
		f.Action, f.Lost = s.Over, over
		where := "the last"
		if s.Over == trainercfg.OverTruncateStart {
			where = "the first"
		}
		f.Why = fmt.Sprintf("TRL cuts it to max_length %d: %s %d of %d tokens lost", limit, where, over, n)
		if s.AssistantOnlyLoss {
			trlDrop(s, rc, &f, limit, view)
		}
	default:
		f.Action, f.Lost = "over", over
		f.Why = fmt.Sprintf("%d tokens once templated, over --max-length %d by %d", n, limit, over)
	}
	return f
}

// axolotlFate is axolotl's fate of a row of f.Tokens tokens at
// sequence_len limit, and of a row it gives the template with messages
// under roles the template does not render (UnmappedRoles; "unmapped"
// when that is all that happens to it): over it, dropped (excess_length_strategy drop, the
// default), cut at the end (truncate) or the run stops (raise)
// (src/axolotl/utils/data/utils.py, handle_long_seq_in_dataset, line 314,
// at commit 067b021c); then, under sample_packing, a row with no trained
// token left is dropped (src/axolotl/utils/trainer.py,
// process_datasets_for_packing, drop_no_trainable_tokens, lines 260–299,
// run after the length handling, src/axolotl/utils/data/sft.py, lines
// 347–354). Which tokens are trained is axolotl's labelling
// (trainview.AxolotlLabeler), computed only where the fate depends on it
// (sample_packing, but for a row over the limit it drops or raises on)
// or, with report, to say how many trained tokens a row over the limit
// loses.
func axolotlFate(s *trainercfg.Spec, rc trainview.RecordCounter, f Fate, limit int, view func() (trainview.View, error), report bool) Fate {
	f = axolotlLength(s, rc, f, limit, view, report)
	v, err := view()
	if err != nil || v.Record == nil {
		return f
	}
	r := AxolotlRules(s)
	roles := UnmappedRoles(r, v.Record)
	if roles == nil {
		return f
	}
	why := fmt.Sprintf("axolotl gives the template roles it does not render: %s (its roles mapping passes them as they are, chat_template.py:934; Qwen3's template leaves such messages out, others raise)", describeRoles(roles))
	if _, done := AxolotlRepair(r)(v.Record); len(done) > 0 {
		why += "; compress repairs it (" + strings.Join(done, ", ") + ") unless --no-repair"
		f.Repairable = true
	}
	if f.Action == "" {
		if f.Why != "" { // its trained tokens could not be counted
			why += "; " + f.Why
		}
		f.Action, f.Why = ActionUnmapped, why
	} else {
		f.Why += "; " + why
	}
	return f
}

// ActionUnmapped is the fate of a row axolotl trains on with some of its
// messages under roles the template does not render.
const ActionUnmapped = "unmapped"

// axolotlLength is axolotlFate's rules of length and trained tokens; a
// row whose trained tokens could not be counted says why.
func axolotlLength(s *trainercfg.Spec, rc trainview.RecordCounter, f Fate, limit int, view func() (trainview.View, error), report bool) Fate {
	f = axolotlLengthRules(s, rc, f, limit, view, report)
	if f.TrainedErr == nil {
		return f
	}
	unknown := fmt.Sprintf("its trained tokens could not be counted (%v)", f.TrainedErr)
	if s.SamplePacking && f.Action != trainercfg.OverDrop && f.Action != trainercfg.OverRaise {
		unknown += ", so whether sample_packing drops it (a row with no trained token) is not known"
	}
	if f.Why == "" {
		f.Why = "axolotl: " + unknown
	} else {
		f.Why += "; " + unknown
	}
	return f
}

// axolotlLengthRules is axolotlLength without the words on a labelling
// error.
func axolotlLengthRules(s *trainercfg.Spec, rc trainview.RecordCounter, f Fate, limit int, view func() (trainview.View, error), report bool) Fate {
	n := f.Tokens
	over := limit > 0 && n > limit
	var tr trainview.Trained
	have := false
	// The labels decide the fate under sample_packing, but for a row over
	// the limit dropped or raised on whatever they are; with report they
	// say what a row over the limit loses.
	if s.SamplePacking && (!over || s.Over == trainercfg.OverTruncate) || over && report {
		tr, f.TrainedErr = axolotlTrained(s, rc, view)
		have = f.TrainedErr == nil
	}
	f.Trained = -1
	if have {
		f.Trained = tr.Count()
	}
	noTrained := func(left int, how string) {
		f.Action, f.Lost, f.TrainedLost = trainercfg.OverDrop, n, f.Trained
		f.Why = fmt.Sprintf("axolotl drops it (sample_packing drops a row with no trained token): %d tokens, %d trained%s", n, left, how)
	}
	if !over {
		if s.SamplePacking && have && tr.Count() == 0 {
			noTrained(0, "")
		}
		return f
	}
	trained := ""
	if have {
		trained = fmt.Sprintf(", %d trained", tr.Count())
	}
	switch s.Over {
	case trainercfg.OverTruncate:
		f.Action, f.Lost = trainercfg.OverTruncate, n-limit
		f.Why = fmt.Sprintf("axolotl truncates it to sequence_len %d: the last %d of %d tokens lost", limit, n-limit, n)
		if have {
			kept := tr.Within(0, limit)
			f.TrainedLost = tr.Count() - kept
			f.Why += fmt.Sprintf(", %d of its %d trained", f.TrainedLost, tr.Count())
			if s.SamplePacking && kept == 0 {
				noTrained(0, fmt.Sprintf(" once truncated to sequence_len %d", limit))
			}
		}
	case trainercfg.OverRaise:
		f.Action, f.Lost = trainercfg.OverRaise, n
		f.Why = fmt.Sprintf("axolotl raises (excess_length_strategy raise): %d tokens%s, over sequence_len %d by %d", n, trained, limit, n-limit)
	default:
		f.Action, f.Lost, f.TrainedLost = trainercfg.OverDrop, n, max(f.Trained, 0)
		f.Why = fmt.Sprintf("axolotl drops it: %d tokens%s, over sequence_len %d by %d", n, trained, limit, n-limit)
	}
	return f
}

// trlPacked is TRL's fate of a row under packing (trl/trainer/sft_trainer.py,
// _prepare_dataset, lines 1571–1615, and trl/data_utils.py, pack_dataset,
// at commit f2cd5771): no truncation by truncation_mode and no drop of a
// row left with no trained token (both are skipped under packing); bfd
// cuts a row over max_length at the end (_pack_bfd, on_seq_length_overflow
// truncate: the overflow is discarded), bfd_split splits it into pieces of
// max_length trained as separate sequences (no token lost), wrapped
// concatenates all rows and cuts every max_length tokens (no token lost;
// a row over max_length is always split, a shorter one may be).
func trlPacked(s *trainercfg.Spec, f Fate, limit int) Fate {
	n := f.Tokens
	if n <= limit {
		return f
	}
	switch s.PackingStrategy {
	case "bfd_split", "wrapped":
		f.Action = trainercfg.OverSplit
		f.Why = fmt.Sprintf("TRL packing (%s) splits it: %d tokens, over max_length %d, trained as %d sequences without the context before each cut", s.PackingStrategy, n, limit, (n+limit-1)/limit)
	default:
		f.Action, f.Lost = trainercfg.OverTruncate, n-limit
		f.Why = fmt.Sprintf("TRL packing (bfd) cuts it to max_length %d: the last %d of %d tokens lost", limit, n-limit, n)
	}
	return f
}

// trlDrop makes f, a row TRL cuts under assistant_only_loss, a drop when
// no trained token is left after the cut (sft_trainer.py, lines 1591–1597):
// under keep_start, when its first assistant turn starts at or after
// limit; under keep_end, when its last assistant turn ends at or before
// the first token kept. The training templates mark the assistant turns
// ({% generation %}) and are prefix-preserving, so the rendering of the
// messages before an assistant turn (through it) is where its trained
// tokens start (end).
func trlDrop(s *trainercfg.Spec, rc trainview.RecordCounter, f *Fate, limit int, view func() (trainview.View, error)) {
	v, err := view()
	if err != nil {
		return
	}
	n := f.Tokens
	if s.Over == trainercfg.OverTruncateStart {
		if e, ok := assistantBound(rc, v, true); ok && e <= n-limit {
			f.Action, f.Lost = trainercfg.OverDrop, n
			f.Why = fmt.Sprintf("TRL drops it: cut to its last max_length %d tokens, no trained token is left (the last assistant turn ends at token %d of %d)", limit, e, n)
		}
		return
	}
	if p, ok := assistantBound(rc, v, false); ok && p >= limit {
		f.Action, f.Lost = trainercfg.OverDrop, n
		f.Why = fmt.Sprintf("TRL drops it: cut to max_length %d, no trained token is left (the first assistant turn starts after token %d)", limit, p)
	}
}

// trlNoAssistant is TRL's message when a row's assistant mask holds no
// trained token under assistant_only_loss (trl/trainer/sft_trainer.py,
// tokenize_fn, lines 1522–1527, at commit f2cd5771: a RuntimeError raised
// while the dataset is tokenized, before any cut or packing, whatever the
// row's length).
const trlNoAssistant = "You're using `assistant_only_loss=True`, but at least one example has no assistant tokens."

// hasAssistant says whether v has a message with the assistant role: the
// templates TRL trains with under assistant_only_loss mark each assistant
// message's output, never empty (its closing <|im_end|> is inside
// {% generation %}), and nothing else, so a row's assistant mask holds a
// trained token exactly when it has one (a template of the user's whose
// marked output can be empty is not told apart: its {% generation %} is
// rendered as a plain block).
func hasAssistant(v trainview.View) bool {
	m := v.Messages
	for _, e := range jsonx.Elements(m, jsonx.SkipSpace(m, 0)) {
		if role, ok := jsonx.Lookup(m[e[0]:e[1]], "role"); ok && string(role) == `"assistant"` {
			return true
		}
	}
	return false
}

// assistantBound counts the messages of v before its first assistant
// message (last false), or through its last one (last true): under TRL's
// assistant_only_loss no token before the first count, or after the
// second, is trained (its training templates are prefix-preserving, so
// the rendering of the first messages is the start of the whole's).
func assistantBound(rc trainview.RecordCounter, v trainview.View, last bool) (int, bool) {
	m := v.Messages
	var cut []byte
	for _, e := range jsonx.Elements(m, jsonx.SkipSpace(m, 0)) {
		role, ok := jsonx.Lookup(m[e[0]:e[1]], "role")
		if !ok || string(role) != `"assistant"` {
			continue
		}
		if !last {
			cut = append(append([]byte(nil), m[:e[0]]...), ']')
			// m[:e[0]] ends with "[" or a comma after the previous message.
			for i := len(cut) - 2; i >= 0 && (cut[i] == ',' || jsonx.IsSpace(cut[i])); i-- {
				if cut[i] == ',' {
					cut = append(cut[:i], ']')
					break
				}
			}
			break
		}
		cut = append(append([]byte(nil), m[:e[1]]...), ']')
	}
	if cut == nil {
		return 0, false
	}
	n, err := rc.CountCached(trainview.View{Messages: cut, Tools: v.Tools}, nil)
	return n, err == nil
}

// axolotlTrained is axolotl's labelling of the row view gives
// (trainview.AxolotlLabeler), or why it cannot be had.
func axolotlTrained(s *trainercfg.Spec, rc trainview.RecordCounter, view func() (trainview.View, error)) (trainview.Trained, error) {
	tc, ok := rc.(*trainview.Counter)
	if !ok {
		return trainview.Trained{}, fmt.Errorf("axolotl's labels need its chat template counter, not %s", rc.Name())
	}
	l, ok := AxolotlLabeler(s, tc)
	if !ok {
		return trainview.Trained{}, fmt.Errorf("axolotl's labels need the token ids, which tokenizer %s does not give", tc.Name())
	}
	v, err := view()
	if err != nil {
		return trainview.Trained{}, err
	}
	return l.Trained(context.Background(), v)
}

// TrainerRule is what trainer s, counting with rc, does to a row of n
// tokens at limit, for the run's metrics (the rules of [FateOf]; view is
// the row's, asked for only when the fate depends on which tokens are
// trained: TRL's drop of a row left with no trained token). Over the
// limit, LLaMA-Factory cuts (infer_seqlen loses at least the tokens over
// it: Lost counts those; the exact pairs are validate's).
func TrainerRule(s *trainercfg.Spec, rc trainview.RecordCounter, limit int) func(n int, view func() (trainview.View, error)) metrics.TrainerFate {
	return func(n int, view func() (trainview.View, error)) metrics.TrainerFate {
		if s.Kind == trainercfg.LlamaFactory {
			if limit <= 0 || n <= limit {
				return metrics.TrainerFate{}
			}
			return metrics.TrainerFate{Action: trainercfg.OverCut, Lost: n - limit}
		}
		f := fateAt(s, rc, n, limit, view, false)
		m := metrics.TrainerFate{Action: f.Action, Lost: f.Lost}
		if f.TrainedErr != nil {
			m.TrainedUnknown = f.TrainedErr.Error()
		}
		return m
	}
}
