package snap

import (
	"fmt"

	"github.com/trajcompress/trajcompress/outcome"
	"github.com/trajcompress/trajcompress/traj"
)

// Plan is the result of [Compute].
type Plan struct {
	// Outcome is SkippedUnderTarget, Uncompressible or Compressed (package
	// outcome). Compressed means "a region was chosen: summarise
	// [Start, End)"; the final outcome after the recount comes from
	// [Settle].
	Outcome outcome.Outcome
	// Reason is set iff Outcome is Uncompressible.
	Reason outcome.Reason
	// Start and End delimit the region, half-open, in original turn indices.
	// They are meaningful iff Outcome is Compressed and zero otherwise.
	Start, End int
	// Total is Σ tok; Need is Total − Target + SummaryTokens + Reserve, the
	// tokens the region must hold to reach the target (rule 7, with what
	// the assembly adds besides the summary counted too). Both are always
	// set.
	Total, Need int
	// HeadEnd is the end of the protected head [0, HeadEnd) (rule 2) and
	// TailStart the start of the protected tail [TailStart, n) (rule 3). Both
	// are always set.
	HeadEnd, TailStart int
	// RegionTokens is Σ tok[Start:End]; zero unless Outcome is Compressed.
	RegionTokens int
	// Placement says how the summary joins the kept turns: [Insert] unless
	// [PlaceAlternating] chose a merge.
	Placement Placement
}

// TurnsAfter returns the number of turns a trajectory of n turns has after
// p is applied with the summary as a turn of its own: n when p is not
// Compressed, else Start + 1 + (n − End). It does not look at
// [Plan.Placement]: for a merged summary it is one more than the result.
func (p Plan) TurnsAfter(n int) int {
	if p.Outcome != outcome.Compressed {
		return n
	}
	return p.Start + 1 + (n - p.End)
}

// Compute plans the compression of one trajectory whose turn i has role
// roles[i] and tok[i] tokens, following docs/planning.md rules 1–11 exactly.
//
// The returned plan is SkippedUnderTarget (total <= target), Uncompressible
// with a reason, or Compressed with the region to replace and [Insert] as
// its placement.
// Compute panics if len(roles) != len(tok). A negative LastN is treated as 0
// (Budget.Validate rejects it). Compute does not retain its arguments.
func Compute(roles []traj.Role, tok []int, b Budget) Plan {
	if len(roles) != len(tok) {
		panic(fmt.Sprintf("snap.Compute: %d roles but %d token counts", len(roles), len(tok)))
	}
	n := len(roles)
	p := Plan{Total: sum(tok, 0, n)}
	p.Need = p.Total - b.Target + b.SummaryTokens + b.Reserve
	p.HeadEnd = headEnd(roles, b)
	p.TailStart = tailStart(n, b.LastN)

	// Rule 1: equality is under.
	if p.Total <= b.Target {
		p.Outcome = outcome.SkippedUnderTarget
		return p
	}
	// Rule 4: the middle [head_end, tail_start).
	if p.HeadEnd >= p.TailStart {
		return p.uncompressible(outcome.NoMiddle)
	}
	// Rule 6: snap the start forward; tool results right after the head stay
	// in the head beside their call.
	start := p.HeadEnd
	for start < p.TailStart && !clean(roles, start) {
		start++
	}
	if start >= p.TailStart {
		return p.uncompressible(outcome.NoMiddle)
	}
	// Rules 7, 8: accumulate until the region holds need tokens.
	until := accumulate(tok, start, p.TailStart, p.Need)
	// Rule 9: snap the end.
	until = snapEnd(roles, until, start, p.TailStart)
	// Rule 10: refuse useless work.
	if until <= start {
		return p.uncompressible(outcome.Collapsed)
	}
	region := sum(tok, start, until)
	if region <= b.SummaryTokens {
		return p.uncompressible(outcome.RegionTooSmall)
	}
	// Rule 11.
	p.Outcome = outcome.Compressed
	p.Start, p.End, p.RegionTokens = start, until, region
	return p
}

// Settle returns the outcome of a compressed trajectory after the assembled
// result was recounted to tokensAfter tokens: [outcome.CompressedOverLimit]
// when tokensAfter > b.Target (strict, as in docs/planning.md, "Assembly"),
// else [outcome.Compressed].
func Settle(tokensAfter int, b Budget) outcome.Outcome {
	if tokensAfter > b.Target {
		return outcome.CompressedOverLimit
	}
	return outcome.Compressed
}

// headEnd is rule 2: 1 + the largest index among the first turn of each
// enabled role that occurs, 0 if none.
func headEnd(roles []traj.Role, b Budget) int {
	sys, user, asst, tool := b.ProtectFirstSystem, b.ProtectFirstUser, b.ProtectFirstAssistant, b.ProtectFirstTool
	end := 0
	for i, r := range roles {
		var first *bool // the pending flag of r's role; cleared once seen
		switch r {
		case traj.RoleSystem:
			first = &sys
		case traj.RoleUser:
			first = &user
		case traj.RoleAssistant:
			first = &asst
		case traj.RoleTool:
			first = &tool
		default:
			continue // unknown roles are never first-of-role protected
		}
		if *first {
			*first = false
			end = i + 1
		}
	}
	return end
}

// tailStart is rule 3: max(0, n − last_n); a negative last_n protects
// nothing.
func tailStart(n, lastN int) int {
	if lastN <= 0 {
		return n
	}
	return max(0, n-lastN)
}

// clean is rule 5: a boundary at p is clean when p == n or turn p is not a
// tool turn.
func clean(roles []traj.Role, p int) bool {
	return p >= len(roles) || !roles[p].IsTool()
}

// accumulate is rule 8: the smallest until in (start, tailStart] with
// Σ tok[start:until] >= need, or tailStart when the middle never reaches it.
func accumulate(tok []int, start, tailStart, need int) int {
	s := 0
	for i := start; i < tailStart; i++ {
		s += tok[i]
		if s >= need {
			return i + 1
		}
	}
	return tailStart
}

// snapEnd is rule 9: walk forward while until < tailStart and not clean; if
// still not clean, walk backward while until > start and not clean.
func snapEnd(roles []traj.Role, until, start, tailStart int) int {
	for until < tailStart && !clean(roles, until) {
		until++
	}
	for until > start && !clean(roles, until) {
		until--
	}
	return until
}

func sum(tok []int, from, to int) int {
	s := 0
	for _, t := range tok[from:to] {
		s += t
	}
	return s
}
