package pipeline

import (
	"github.com/trajcompress/trajcompress/outcome"
	"github.com/trajcompress/trajcompress/snap"
	"github.com/trajcompress/trajcompress/summary"
	"github.com/trajcompress/trajcompress/traj"
)

// planned is the region chosen for the record and what assembling it
// adds: written by planRegion (and by place, in alternation mode).
type planned struct {
	snap.Plan
	// adj is the record's measured.adj as planned with: raised by the
	// overshoot of each rendered result over target (refits).
	adj int
	// reserve is what assembly will add besides the summary text (snap's
	// Budget.Reserve), notice the noticed texts it measured for that,
	// reused by assemble and account.
	reserve int
	notice  notice
}

// notice is the notice as a record compressed from some turn on takes it:
// the head's system turns with the notice appended, or else the system
// prompt outside the turns with it (sys, "" if not noticed so), and their
// counts.
type notice struct {
	turns  []noticedTurn
	sys    string
	sysTok int
}

// turnBudget is the budget of the turns as p plans them: the system prompt
// outside them is a fixed, protected part of the record, so the turns get
// what is left.
func (c *Compressor) turnBudget(r *record, p planned) snap.Budget {
	b := c.opts.Budget
	b.Target -= r.m.ext + p.adj
	b.Reserve = p.reserve
	return b
}

// planRegion chooses the region to summarise (snap.Compute), with the
// planner's budget lowered by the refits so far. The region is sized for
// everything the output holds besides the summary text: a record that is
// to be compressed is planned again with that reserve. An earlier summary
// of ours in the middle is then taken into the region (snap.Absorb), and
// in the OpenAI dialect the region is kept off call/result pairs by id
// (snap.KeepPairs).
func (c *Compressor) planRegion(r *record, fit refits) {
	p := planned{adj: r.m.adj + fit.over}
	p.Plan = snap.Compute(r.m.roles, r.m.tok, c.turnBudget(r, p))
	if p.Outcome == outcome.Compressed {
		var n int
		n, p.notice = c.notice(r, p.Start)
		// (The region's start does not depend on the reserve, so the
		// noticed turns are the same after planning again.)
		if p.reserve = max(c.opts.Counting.TurnOverhead+r.m.framing+n, 0); p.reserve > 0 {
			p.Plan = snap.Compute(r.m.roles, r.m.tok, c.turnBudget(r, p))
		}
	}
	// A summary of ours in the middle is taken into the region: one
	// updated summary, never a second beside it.
	p.Plan = snap.Absorb(p.Plan, r.m.roles, r.m.tok, earlierSummaries(r.m.turns, p.Plan))
	if p.Outcome == outcome.Compressed && r.rec.Dialect.Pairing() == traj.PairByID {
		// Never separate a call from its result, even in broken input.
		p.Plan = snap.KeepPairs(p.Plan, r.m.roles, r.m.tok, snap.PairCuts(r.m.turns), c.turnBudget(r, p))
	}
	r.plan = p
}

// earlierSummaries marks the turns of a Compressed plan's middle that hold
// a summary trajcompress wrote (summary.IsSummary); nil when none does.
func earlierSummaries(turns []traj.Turn, p snap.Plan) []bool {
	if p.Outcome != outcome.Compressed {
		return nil
	}
	var marks []bool
	for i := p.HeadEnd; i < p.TailStart; i++ {
		if summary.IsSummary(turns[i].Text) {
			if marks == nil {
				marks = make([]bool, len(turns))
			}
			marks[i] = true
		}
	}
	return marks
}

// notice measures what the notice adds to a record compressed from turn
// start on (the reserve's part of it, n): it is appended to the system
// turns before start, or else to the system prompt outside the turns.
// The noticed texts and their counts are for assemble and account.
func (c *Compressor) notice(r *record, start int) (n int, nt notice) {
	if !c.opts.Placement.AddNotice {
		return 0, nt
	}
	for i, t := range r.m.turns[:start] {
		if t.Role == traj.RoleSystem {
			with := r.rec.AppendText(t, c.opts.Placement.NoticeText)
			k := c.count(with)
			nt.turns = append(nt.turns, noticedTurn{i: i, t: with, tok: k})
			n += k - r.m.tok[i]
		}
	}
	if len(nt.turns) == 0 && r.rec.SystemKey != "" {
		nt.sys = r.rec.System + c.opts.Placement.NoticeText
		nt.sysTok = c.opts.Counting.Counter.Count(nt.sys) + c.opts.Counting.TurnOverhead
		n += nt.sysTok - r.m.ext
	}
	return n, nt
}

// noticedTurn is head turn i with the notice appended, and its count.
type noticedTurn struct {
	i   int
	t   traj.Turn
	tok int
}

// noticedAt is the index in ns of head turn i, or -1 when planRegion did not
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
func (c *Compressor) place(r *record) {
	if c.opts.Placement.Alternate {
		r.plan.Plan = snap.PlaceAlternating(r.plan.Plan, r.m.roles, r.m.tok, c.turnBudget(r, r.plan))
	}
}
