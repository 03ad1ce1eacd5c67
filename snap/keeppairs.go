package snap

import (
	"github.com/trajcompress/trajcompress/outcome"
	"github.com/trajcompress/trajcompress/traj"
)

// PairCuts reports, for turns that carry tool-call ids (the OpenAI
// dialect), where a region boundary may fall without separating a tool
// call from one of its results: cut[x] (0 <= x <= len(turns)) is false
// when some call is before x and its result at or after x. Orphans (a
// result whose call is not before it) and calls without a result link
// nothing. nil means every position is a cut (no call has a result:
// ShareGPT records, or no tool calls), and [KeepPairs] then changes
// nothing.
func PairCuts(turns []traj.Turn) []bool {
	var cross []int // cross[x] > 0: x is inside some call..result span
	callAt := map[string]int{}
	for i, t := range turns {
		switch {
		case t.Role == traj.RoleAssistant:
			for _, id := range t.CallIDs {
				if _, dup := callAt[id]; !dup {
					callAt[id] = i
				}
			}
		case t.Role.IsTool() && t.AnswersID != "":
			c, ok := callAt[t.AnswersID]
			if !ok {
				continue
			}
			if cross == nil {
				cross = make([]int, len(turns)+2)
			}
			cross[c+1]++ // positions c+1 … i separate call c from result i
			cross[i+1]--
		}
	}
	if cross == nil {
		return nil
	}
	cut := make([]bool, len(turns)+1)
	open := 0
	for x := range cut {
		open += cross[x]
		cut[x] = open == 0
	}
	return cut
}

// KeepPairs moves the region of a Compressed plan so that it never
// separates a tool call from one of its results (cuts from [PairCuts]):
// the start moves forward to the next position that is a cut and clean
// (rule 5), and the end forward to the next such position within the
// middle, or else back to the previous one. Role snapping (rules 6 and 9)
// already guarantees this for well-formed records; KeepPairs matters for
// input that is already broken — a user turn between a call and its
// result, results out of order — so that compressing never creates a
// pairing problem the input did not have. A region that collapses or no
// longer holds more than S tokens makes the plan Uncompressible
// (collapsed, region_too_small), as in rule 10. Other plans, and every
// plan when cuts is nil, are returned unchanged.
func KeepPairs(p Plan, roles []traj.Role, tok []int, cuts []bool, b Budget) Plan {
	if p.Outcome != outcome.Compressed || cuts == nil {
		return p
	}
	ok := func(x int) bool { return cuts[x] && clean(roles, x) }
	start := p.Start
	for start < p.TailStart && !ok(start) {
		start++
	}
	end := max(p.End, start)
	for end < p.TailStart && !ok(end) {
		end++
	}
	if !ok(end) {
		end = p.End
		for end > start && !ok(end) {
			end--
		}
	}
	if start == p.Start && end == p.End {
		return p
	}
	if end <= start {
		return p.uncompressible(outcome.Collapsed)
	}
	region := sum(tok, start, end)
	if region <= b.SummaryTokens {
		return p.uncompressible(outcome.RegionTooSmall)
	}
	p.Start, p.End, p.RegionTokens = start, end, region
	return p
}
