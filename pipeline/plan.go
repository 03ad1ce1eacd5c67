package pipeline

import (
	"github.com/trajcompress/trajcompress/outcome"
	"github.com/trajcompress/trajcompress/snap"
	"github.com/trajcompress/trajcompress/summary"
	"github.com/trajcompress/trajcompress/traj"
)

// turnBudget is the budget of the turns: the system prompt outside them is
// a fixed, protected part of the record, so the turns get what is left.
func (c *Compressor) turnBudget(j *job) snap.Budget {
	b := c.opts.Budget
	b.Target -= j.ext + j.adj
	b.Reserve = j.reserve
	return b
}

// planRegion chooses the region to summarise (snap.Compute). The region
// is sized for everything the output holds besides the summary text: a
// record that is to be compressed is planned again with that reserve. An
// earlier summary of ours in the middle is then taken into the region
// (snap.Absorb), and in the OpenAI dialect the region is kept off
// call/result pairs by id (snap.KeepPairs).
func (c *Compressor) planRegion(j *job) {
	j.reserve = 0
	j.plan = snap.Compute(j.roles, j.tok, c.turnBudget(j))
	if j.plan.Outcome == outcome.Compressed {
		if j.reserve = c.reserve(j); j.reserve > 0 {
			j.plan = snap.Compute(j.roles, j.tok, c.turnBudget(j))
		}
	}
	// A summary of ours in the middle is taken into the region: one
	// updated summary, never a second beside it.
	j.plan = snap.Absorb(j.plan, j.roles, j.tok, earlierSummaries(j))
	if j.plan.Outcome == outcome.Compressed && j.rec.Dialect == traj.DialectOpenAI {
		// Never separate a call from its result, even in broken input.
		j.plan = snap.KeepPairs(j.plan, j.roles, j.tok, snap.PairCuts(j.turns), c.turnBudget(j))
	}
}

// earlierSummaries marks the turns of a Compressed plan's middle that hold
// a summary trajcompress wrote (summary.IsSummary); nil when none does.
func earlierSummaries(j *job) []bool {
	if j.plan.Outcome != outcome.Compressed {
		return nil
	}
	var marks []bool
	for i := j.plan.HeadEnd; i < j.plan.TailStart; i++ {
		if summary.IsSummary(j.turns[i].Text) {
			if marks == nil {
				marks = make([]bool, len(j.turns))
			}
			marks[i] = true
		}
	}
	return marks
}

// reserve measures what assembling j adds besides the summary text: the
// summary turn's framing (TurnOverhead) and the notice (see notice). (The
// region's start does not depend on the reserve, so the noticed turns are
// the same after planning again.)
func (c *Compressor) reserve(j *job) int {
	return max(c.opts.TurnOverhead+j.framing+c.notice(j, j.plan.Start), 0)
}

// notice measures what the notice adds to a record compressed from turn
// start on: it is appended to the system turns before start, or else to
// the system prompt outside the turns. It records the noticed texts and
// their counts in j for assemble and account.
func (c *Compressor) notice(j *job, start int) int {
	j.noticed, j.sys, j.sysTok = j.noticed[:0], "", 0
	if !c.opts.AddNotice {
		return 0
	}
	r := 0
	for i, t := range j.turns[:start] {
		if t.Role == traj.RoleSystem {
			nt := j.rec.AppendText(t, c.opts.NoticeText)
			k := c.count(nt)
			j.noticed = append(j.noticed, noticedTurn{i: i, t: nt, tok: k})
			r += k - j.tok[i]
		}
	}
	if len(j.noticed) == 0 && j.rec.SystemKey != "" {
		j.sys = j.rec.System + c.opts.NoticeText
		j.sysTok = c.opts.Counter.Count(j.sys) + c.opts.TurnOverhead
		r += j.sysTok - j.ext
	}
	return r
}

// noticedTurn is head turn i with the notice appended, and its count.
type noticedTurn struct {
	i   int
	t   traj.Turn
	tok int
}

// noticedAt is the index in ns of head turn i, or -1 when reserve did not
// notice it.
func noticedAt(ns []noticedTurn, i int) int {
	for k, n := range ns {
		if n.i == i {
			return k
		}
	}
	return -1
}

// place decides, in alternation mode, how the summary joins its neighbours
// (snap.PlaceAlternating); otherwise the summary is a turn of its own.
func (c *Compressor) place(j *job) {
	if c.opts.Alternate {
		j.plan = snap.PlaceAlternating(j.plan, j.roles, j.tok, c.turnBudget(j))
	}
}
