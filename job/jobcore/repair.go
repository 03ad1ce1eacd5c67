package jobcore

import (
	"fmt"

	"github.com/trajcompress/trajcompress/traj"
)

// Repair makes a row LLaMA-Factory would skip for its shape
// one it trains on, where that loses nothing it trains on: consecutive
// turns under the same role (two user turns of an SWE-agent run, a
// hermes-agent pipeline note after a gpt turn; see mergeable) are merged
// into one, their texts joined by a blank line (tool calls written in a
// gpt turn's text stay with it, before the results that follow); then a
// trailing user-side turn, which has no answer to train on, is dropped.
// In a ShareGPT record, "tool" turns (hermes-agent's) are renamed to the
// role LLaMA-Factory reads tool results under (observation_tag) first.
// The repair is kept only when LLaMA-Factory's converter accepts the
// result (Renderer.Skip); a row it accepts as read, or one the repair
// cannot make acceptable, is left as it is (nil). function_call turns and
// tool messages are never merged (their values are JSON calls, or results
// paired with calls by id). done names each repair made.
func (c *LlamaFactoryCounter) Repair(rec *traj.Record) (turns []traj.Turn, done []string) {
	if c.R.Skip(rec, rec.Turns, rec.System) == nil {
		return nil, nil
	}
	in := rec.Turns
	if obs := c.observationTag(); rec.Dialect.Form() == traj.FormShareGPT && obs != "tool" {
		renamed := 0
		in = make([]traj.Turn, len(rec.Turns))
		for i, t := range rec.Turns {
			if t.Name == "tool" {
				t = rec.NewTurn(traj.Role(obs), t.Text)
				renamed++
			}
			in[i] = t
		}
		if renamed > 0 {
			done = append(done, fmt.Sprintf("renamed %d tool turns %s", renamed, obs))
		}
	}
	merged, n := 0, 0
	for _, t := range in {
		if k := len(turns) - 1; k >= 0 && t.Name == turns[k].Name && mergeable(rec.Dialect, turns[k]) && mergeable(rec.Dialect, t) {
			turns[k] = rec.AppendText(turns[k], "\n\n"+t.Text)
			n++
			continue
		}
		turns = append(turns, t)
	}
	if n > 0 {
		merged = n
		done = append(done, fmt.Sprintf("merged %d consecutive turns of the same role", merged))
	}
	if k := len(turns) - 1; k >= 0 && userSide(turns[k].Name) {
		turns = turns[:k]
		done = append(done, "dropped the trailing "+rec.Turns[len(rec.Turns)-1].Name+" turn (no answer to train on)")
	}
	if len(done) == 0 || c.R.Skip(rec, turns, rec.System) != nil {
		return nil, nil
	}
	return turns, done
}

// observationTag is the ShareGPT role LLaMA-Factory reads tool results
// under: the dataset's observation_tag, else "observation".
func (c *LlamaFactoryCounter) observationTag() string {
	if a := c.Spec.Attr; a != nil && a.Observation != "" {
		return a.Observation
	}
	return "observation"
}

// mergeable says whether t is merged with a turn of the same role before
// it: in ShareGPT a human, gpt, observation or tool turn (their values are
// text); in OpenAI a user message, or an assistant message without tool
// calls, whose content is a string (tool messages are paired with their
// calls by id, and stay apart).
func mergeable(d traj.Dialect, t traj.Turn) bool {
	if d.Form() == traj.FormShareGPT {
		return t.Name == "human" || t.Name == "gpt" || t.Name == "observation" || t.Name == "tool"
	}
	c := t.Content()
	if len(c) == 0 || c[0] != '"' {
		return false
	}
	return t.Name == "user" || (t.Name == "assistant" && len(t.Calls()) == 0)
}

// userSide says whether a turn under role name is one a trainer does not
// train on, which a row may not end with.
func userSide(name string) bool {
	return name == "human" || name == "observation" || name == "tool" || name == "user"
}
