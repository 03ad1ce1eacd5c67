package snap

import (
	"github.com/trajcompress/trajcompress/outcome"
	"github.com/trajcompress/trajcompress/traj"
)

// Alternation mode, for consumers that require strict user/assistant
// alternation (LLaMA-Factory's sharegpt converter, Mistral chat templates,
// torchtune; docs/formats.md, "Trainers with strict role order"). Tool results count as user-side turns, as
// LLaMA-Factory's observation does.
//
// A summary is a user-side turn. Between two assistant-side turns it is
// inserted as its own turn. Next to a user-side turn it is merged into that
// turn instead: prepended to the turn after the region, or appended to the
// turn before it. When both neighbours are user-side, no placement keeps the
// order, so the region's end moves by one turn (forward if the protected
// tail allows, else back) to make one neighbour assistant-side.

// Placement says how the summary joins the kept turns.
type Placement int

const (
	// Insert means the summary is a turn of its own, at Start.
	Insert Placement = iota
	// MergeNext means the summary is prepended to the first turn after
	// the region (turn End of the input).
	MergeNext
	// MergePrev means the summary is appended to the last turn before the
	// region (turn Start−1 of the input).
	MergePrev
)

func (p Placement) String() string {
	switch p {
	case Insert:
		return "insert"
	case MergeNext:
		return "merge_next"
	case MergePrev:
		return "merge_prev"
	}
	return "placement(?)"
}

// PlaceAlternating adapts a Compressed plan p of [Compute] (same roles, tok
// and b) to alternation mode: it sets p.Placement so that the summary keeps
// the user/assistant order around the region, moving p.End by one turn
// (within the middle, onto a clean boundary) when neither placement works
// at the original end, and recounting p.RegionTokens when it moved.
//
// The result is Uncompressible with reason [outcome.Alternation] when no
// placement keeps the order, and with [outcome.RegionTooSmall] when the
// moved region no longer holds more than b.SummaryTokens (docs/planning.md
// rule 10 again). A plan that is not Compressed is returned as it is.
// PlaceAlternating panics if len(roles) != len(tok) or the plan's region
// does not fit them; it does not retain its arguments.
func PlaceAlternating(p Plan, roles []traj.Role, tok []int, b Budget) Plan {
	if p.Outcome != outcome.Compressed {
		return p
	}
	if len(roles) != len(tok) {
		panic("snap.PlaceAlternating: roles and token counts differ in length")
	}
	end, how, ok := placeAlternating(roles, p.Start, p.End, p.TailStart)
	if !ok {
		// Better unchanged than in a form the trainer would reject.
		return p.uncompressible(outcome.Alternation)
	}
	if end != p.End {
		p.End, p.RegionTokens = end, sum(tok, p.Start, end)
	}
	if p.RegionTokens <= b.SummaryTokens {
		return p.uncompressible(outcome.RegionTooSmall)
	}
	p.Placement = how
	return p
}

// uncompressible returns p turned Uncompressible for reason r, with the
// region fields cleared as the [Plan] contract says.
func (p Plan) uncompressible(r outcome.Reason) Plan {
	p.Outcome, p.Reason = outcome.Uncompressible, r
	p.Start, p.End, p.RegionTokens, p.Placement = 0, 0, 0, Insert
	return p
}

func userSide(r traj.Role) bool { return r == traj.RoleUser || r == traj.RoleTool }

// placeAlternating returns the region end to use (end, or one turn off) and
// how to place the summary. ok is false when no placement keeps the order
// around the summary.
func placeAlternating(roles []traj.Role, start, end, tailStart int) (int, Placement, bool) {
	if how, ok := placementAt(roles, start, end); ok {
		return end, how, true
	}
	for _, e := range [2]int{end + 1, end - 1} {
		if e > start && e <= tailStart && clean(roles, e) {
			if how, ok := placementAt(roles, start, e); ok {
				return e, how, true
			}
		}
	}
	return end, Insert, false
}

// placementAt says how a summary of [start, e) joins turns start−1 and e
// (either may be absent) keeping the order; ok is false when both are
// user-side.
func placementAt(roles []traj.Role, start, e int) (Placement, bool) {
	prevUser := start > 0 && userSide(roles[start-1])
	nextUser := e < len(roles) && userSide(roles[e])
	switch {
	case prevUser && nextUser:
		return Insert, false
	case nextUser:
		return MergeNext, true
	case prevUser:
		return MergePrev, true
	}
	return Insert, true
}
