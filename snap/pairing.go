package snap

import (
	"cmp"
	"slices"

	"github.com/trajcompress/trajcompress/traj"
)

// The kinds of [PairProblem].
const (
	// OrphanResult: a tool turn whose AnswersID is empty or names no tool
	// call made by an earlier assistant turn.
	OrphanResult = "orphan_result"
	// MissingResult: an assistant tool call whose id no later tool turn
	// answers.
	MissingResult = "missing_result"
)

// PairProblem is one broken tool pairing found by [CheckPairing].
type PairProblem struct {
	Kind  string // OrphanResult or MissingResult
	Index int    // the tool turn (OrphanResult) or the calling assistant turn (MissingResult)
	ID    string // the tool call id concerned ("" for a tool turn without one)
}

// CheckPairing checks the id-based tool pairing of an assembled OpenAI-style
// trajectory (docs/planning.md, "Assembly": pairing is checked by id): every tool
// turn must answer, by [traj.Turn.AnswersID], a [traj.Turn.CallIDs] id of an
// earlier assistant turn, and every such call id must be answered by a later
// tool turn. A call answered more than once is not a problem.
//
// It returns nil when the pairing is consistent, else the problems ordered by
// Index (then orphans before missing results at the same index, then by
// call order). It is meant for dialects that carry ids: on ShareGPT turns,
// which have none, every tool turn is an orphan. turns is only read.
func CheckPairing(turns []traj.Turn) []PairProblem {
	type call struct {
		index    int
		answered bool
	}
	calls := map[string]*call{}
	var order []string // call ids in the order they were made (first call wins)
	var probs []PairProblem
	for i, t := range turns {
		switch {
		case t.Role.IsTool():
			c, ok := calls[t.AnswersID]
			if !ok || t.AnswersID == "" {
				probs = append(probs, PairProblem{Kind: OrphanResult, Index: i, ID: t.AnswersID})
				continue
			}
			c.answered = true
		case t.Role == traj.RoleAssistant:
			for _, id := range t.CallIDs {
				if _, dup := calls[id]; dup {
					continue
				}
				calls[id] = &call{index: i}
				order = append(order, id)
			}
		}
	}
	for _, id := range order {
		if c := calls[id]; !c.answered {
			probs = append(probs, PairProblem{Kind: MissingResult, Index: c.index, ID: id})
		}
	}
	if len(probs) == 0 {
		return nil
	}
	slices.SortStableFunc(probs, func(a, b PairProblem) int { return cmp.Compare(a.Index, b.Index) })
	return probs
}
