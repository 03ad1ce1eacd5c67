package jobcore

import (
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
	f := Fate{Tokens: n}
	if limit <= 0 || n <= limit {
		return f, nil
	}
	over := n - limit
	kind := trainercfg.HF
	if s != nil {
		kind = s.Kind
	}
	switch kind {
	case trainercfg.Axolotl:
		switch s.Over {
		case trainercfg.OverTruncate:
			f.Action, f.Lost = trainercfg.OverTruncate, over
			f.Why = fmt.Sprintf("axolotl truncates it to sequence_len %d: the last %d of %d tokens lost", limit, over, n)
		case trainercfg.OverRaise:
			f.Action, f.Lost = trainercfg.OverRaise, n
			f.Why = fmt.Sprintf("axolotl raises (excess_length_strategy raise): %d tokens, over sequence_len %d by %d", n, limit, over)
		default:
			f.Action, f.Lost = trainercfg.OverDrop, n
			f.Why = fmt.Sprintf("axolotl drops it: %d tokens, over sequence_len %d by %d", n, limit, over)
		}
	case trainercfg.TRL:
		f.Action, f.Lost = s.Over, over
		where := "the last"
		if s.Over == trainercfg.OverTruncateStart {
			where = "the first"
		}
		f.Why = fmt.Sprintf("TRL cuts it to max_length %d: %s %d of %d tokens lost", limit, where, over, n)
		if s.AssistantOnlyLoss && s.Over == trainercfg.OverTruncate {
			if p, ok := promptPrefix(rc, v); ok && p >= limit {
				f.Action, f.Lost = trainercfg.OverDrop, n
				f.Why = fmt.Sprintf("TRL drops it: cut to max_length %d, no trained token is left (the first assistant turn starts after token %d)", limit, p)
			}
		}
	default:
		f.Action, f.Lost = "over", over
		f.Why = fmt.Sprintf("%d tokens once templated, over --max-length %d by %d", n, limit, over)
	}
	return f, nil
}

// promptPrefix counts the messages of v before its first assistant
// message: no token before that count is trained under TRL's
// assistant_only_loss (its training templates are prefix-preserving, so
// the rendering of the first messages is the start of the whole's).
func promptPrefix(rc trainview.RecordCounter, v trainview.View) (int, bool) {
	m := v.Messages
	for _, e := range jsonx.Elements(m, jsonx.SkipSpace(m, 0)) {
		role, ok := jsonx.Lookup(m[e[0]:e[1]], "role")
		if !ok || string(role) != `"assistant"` {
			continue
		}
		prefix := append(append([]byte(nil), m[:e[0]]...), ']')
		// m[:e[0]] ends with "[" or a comma after the previous message.
		for i := len(prefix) - 2; i >= 0 && (prefix[i] == ',' || jsonx.IsSpace(prefix[i])); i-- {
			if prefix[i] == ',' {
				prefix = append(prefix[:i], ']')
				break
			}
		}
		n, err := rc.CountCached(trainview.View{Messages: prefix, Tools: v.Tools}, nil)
		return n, err == nil
	}
	return 0, false
}

// TrainerRule is what trainer s does to a row of n tokens, as its count
// says, at limit, for the run's metrics: over the limit, LLaMA-Factory
// cuts (infer_seqlen loses at least the tokens over it: Lost counts
// those), axolotl drops (the whole row lost) or truncates, TRL truncates
// (its drop of a row with no trained token left is validate's, which
// renders the prompt; not counted here).
func TrainerRule(s *trainercfg.Spec, limit int) func(n int) metrics.TrainerFate {
	return func(n int) metrics.TrainerFate {
		if limit <= 0 || n <= limit {
			return metrics.TrainerFate{}
		}
		switch s.Kind {
		case trainercfg.LlamaFactory:
			return metrics.TrainerFate{Action: trainercfg.OverCut, Lost: n - limit}
		case trainercfg.Axolotl:
			if s.Over == trainercfg.OverTruncate {
				return metrics.TrainerFate{Action: s.Over, Lost: n - limit}
			}
			return metrics.TrainerFate{Action: s.Over, Lost: n}
		case trainercfg.TRL:
			return metrics.TrainerFate{Action: s.Over, Lost: n - limit}
		}
		return metrics.TrainerFate{Action: "over", Lost: n - limit}
	}
}
