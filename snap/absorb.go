package snap

import (
	"github.com/trajcompress/trajcompress/outcome"
	"github.com/trajcompress/trajcompress/traj"
)

// Absorb widens the region of a Compressed plan over every earlier
// summary in the middle (summaries[i] set: turn i is a summary trajcompress
// wrote before, the record being our own output compressed again), so
// that the record gets one updated summary instead of a second one beside
// the first: the start moves back to the first such turn at or after
// HeadEnd, the end forward past the last one before TailStart, and then
// off tool results (rule 9, forward within the middle; a summary is never
// a tool turn, so the end stays after it; when the tail starts with a
// tool result the plan is returned unchanged). A summary in the protected
// head or tail is left alone. Other plans, and plans with no summary in
// the middle outside the region, are returned unchanged.
func Absorb(p Plan, roles []traj.Role, tok []int, summaries []bool) Plan {
	if p.Outcome != outcome.Compressed || summaries == nil {
		return p
	}
	start, end := p.Start, p.End
	for i := p.HeadEnd; i < p.TailStart; i++ {
		if summaries[i] {
			start, end = min(start, i), max(end, i+1)
		}
	}
	if start == p.Start && end == p.End {
		return p
	}
	for end < p.TailStart && !clean(roles, end) {
		end++
	}
	if !clean(roles, end) {
		return p // the tail starts with a result of a call in the region
	}
	p.Start, p.End, p.RegionTokens = start, end, sum(tok, start, end)
	return p
}
