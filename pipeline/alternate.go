package pipeline

import "github.com/trajcompress/trajcompress/traj"

// Alternation mode, for consumers that require strict user/assistant
// alternation (LLaMA-Factory's sharegpt converter, Mistral chat templates,
// torchtune; FORMATS.md B3/B4). Tool results count as user-side turns, as
// LLaMA-Factory's observation does.
//
// A summary is a user-side turn. Between two assistant-side turns it is
// inserted as its own turn. Next to a user-side turn it is merged into that
// turn instead: prepended to the turn after the region, or appended to the
// turn before it. When both neighbours are user-side, no placement keeps the
// order, so the region's end moves by one turn (forward if the protected
// tail allows, else back) to make one neighbour assistant-side.

// placement says how the summary joins the kept turns.
type placement int

const (
	insertTurn placement = iota // a turn of its own
	mergeNext                   // prepended to the first turn after the region
	mergePrev                   // appended to the last turn before the region
)

func userSide(r traj.Role) bool { return r == traj.RoleUser || r == traj.RoleTool }

// placeAlternating returns the region end to use (end, or one turn off) and
// how to place the summary. ok is false when no placement keeps the order
// around the summary; the caller then inserts the summary as a turn.
func placeAlternating(roles []traj.Role, start, end, tailStart int) (int, placement, bool) {
	n := len(roles)
	clean := func(p int) bool { return p == n || !roles[p].IsTool() }
	try := func(e int) (placement, bool) {
		prevUser := start > 0 && userSide(roles[start-1])
		nextUser := e < n && userSide(roles[e])
		switch {
		case !prevUser && !nextUser:
			return insertTurn, true
		case !prevUser && nextUser:
			return mergeNext, true
		case prevUser && !nextUser:
			return mergePrev, true
		}
		return 0, false
	}
	if how, ok := try(end); ok {
		return end, how, true
	}
	for _, e := range []int{end + 1, end - 1} {
		if e > start && e <= tailStart && clean(e) {
			if how, ok := try(e); ok {
				return e, how, true
			}
		}
	}
	return end, insertTurn, false
}
