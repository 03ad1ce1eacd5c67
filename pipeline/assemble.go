package pipeline

import (
	"fmt"

	"github.com/trajcompress/trajcompress/metrics"
	"github.com/trajcompress/trajcompress/outcome"
	"github.com/trajcompress/trajcompress/snap"
	"github.com/trajcompress/trajcompress/traj"
)

// assembly is a compressed record's new turn list and the top-level fields
// to set.
type assembly struct {
	turns  []traj.Turn
	fields []traj.Field
	// system is the system prompt outside the turns as written (with the
	// notice, or as read), sysTokens its count (r.m.ext when the notice
	// did not go into it).
	system    string
	sysTokens int
}

// counted is an assembled record's count and the outcome it settles
// (account).
type counted struct {
	tokens  int
	outcome outcome.Outcome
	pairing []snap.PairProblem // the output's tool-pairing problems (OpenAI dialect)
	tmplErr error              // the template rendered the record as read but refuses this one
}

// assemble splices the summary text into the record as the plan says: the
// head (with the notice on its system turns, or on the system prompt
// outside them), the summary as a turn of its own or merged into a
// neighbour, then the rest. An empty text (the prepass made the record
// fit) adds no summary.
func (c *Compressor) assemble(r *record, p planned, text string) assembly {
	rec := r.rec
	a := assembly{system: rec.System, sysTokens: r.m.ext}
	out := make([]traj.Turn, 0, p.TurnsAfter(len(r.m.roles)))
	noticed := false
	for i, t := range r.m.turns[:p.Start] {
		if c.opts.Placement.AddNotice && t.Role == traj.RoleSystem {
			if k := noticedAt(p.notice.turns, i); k >= 0 { // measured by planRegion
				t = p.notice.turns[k].t
			} else { // the placement moved the region's start
				t = rec.AppendText(t, c.opts.Placement.NoticeText)
			}
			noticed = true
		}
		out = append(out, t)
	}
	sys, sysTok := p.notice.sys, p.notice.sysTok
	if noticed {
		sys = "" // a system turn took the notice after all
	} else if c.opts.Placement.AddNotice && sys == "" && rec.SystemKey != "" {
		sys = rec.System + c.opts.Placement.NoticeText
		sysTok = c.opts.Counting.Counter.Count(sys) + c.opts.Counting.TurnOverhead
	}
	if sys != "" {
		a.fields = append(a.fields, rec.SystemField(sys))
		a.system, a.sysTokens = sys, sysTok
	}
	if f, ok := imagesField(r, p.Plan); ok {
		a.fields = append(a.fields, f)
	}
	rest := r.m.turns[p.End:]
	switch {
	case text == "":
	case p.Placement == snap.Insert:
		out = append(out, rec.NewTurn(c.opts.Placement.Role, text))
	case p.Placement == snap.MergeNext:
		out = append(out, rec.PrependText(rest[0], text+"\n\n"))
		rest = rest[1:]
	case p.Placement == snap.MergePrev:
		last := len(out) - 1
		out[last] = rec.AppendText(out[last], "\n\n"+text)
	}
	a.turns = append(out, rest...)
	return a
}

// account counts the assembled record and settles its outcome: a turn kept
// as read costs what measure counted, a made or changed one is counted
// again, except an inserted summary turn whose text the summarizer counted
// with our counter (sumTokens > 0); with the output's tool-pairing problems
// (OpenAI dialect).
func (c *Compressor) account(r *record, p planned, a assembly, sumTokens int) (n counted) {
	if c.opts.Counting.Template != nil {
		// The templated count replaces the per-turn sum: no turn is
		// counted on its own.
		t, err := c.templated(r, a.turns, a.system, a.fields)
		if err != nil {
			// Rendered the input, refuses the output (e.g. a summary turn
			// out of the order it wants): over target for certain.
			n.tmplErr = err
			t = c.opts.Budget.Target + 1
		}
		n.tokens = t
	} else {
		n.tokens = c.turnSum(r, p, a, sumTokens)
	}
	n.outcome = snap.Settle(n.tokens, c.opts.Budget)
	if r.rec.Dialect.Pairing() == traj.PairByID {
		n.pairing = snap.CheckPairing(a.turns)
	}
	return n
}

// turnSum is the assembled record's tokens as the sum of its turns' (plus
// the system prompt's and the record's adjustment).
func (c *Compressor) turnSum(r *record, p planned, a assembly, sumTokens int) int {
	n := len(r.m.roles)
	after := a.sysTokens
	for i, t := range a.turns {
		switch {
		case !t.Made():
			// The head keeps its indices; the rest is the input's suffix.
			k := i
			if i >= p.Start {
				k = n - len(a.turns) + i
			}
			after += r.m.tok[k]
		case i == p.Start && p.Placement == snap.Insert && sumTokens > 0:
			after += sumTokens + t.Extra + c.opts.Counting.TurnOverhead
		case i < p.Start && noticedAt(p.notice.turns, i) >= 0:
			after += p.notice.turns[noticedAt(p.notice.turns, i)].tok
		default:
			after += c.count(t)
		}
	}
	return after + r.m.adj + c.imageDrift(r, a.turns, a.fields)
}

// encode writes the record as try t made it, its results settling the
// record's observation, with its compression_metrics when per-record
// metrics are on; a dry run keeps the input bytes.
func (c *Compressor) encode(r *record, t try) (Result, error) {
	if r.tmpl.stopped != nil {
		return Result{}, r.tmpl.stopped
	}
	r.obs.Region, r.obs.Retention, r.obs.Fallback = t.region, t.retention, t.fallback
	r.obs.Settle(t.outcome, t.tokens, len(t.a.turns))
	r.obs.PairingProblems = len(t.pairing) // none but in the OpenAI dialect (account)
	a := t.a
	if t.tmplErr != nil {
		// The template rendered the record as read but refuses what
		// compression made of it (account): written unchanged, as a
		// record it refuses as read, with its message.
		r.obs.TemplateError = "once compressed: " + t.tmplErr.Error()
		r.obs.TokensAfter, r.obs.TurnsAfter = r.obs.TokensBefore, r.obs.TurnsBefore
		r.obs.PairingProblems = r.obs.PairingProblemsBefore
		r.leave(outcome.Uncompressible, string(outcome.ChatTemplate))
		return r.unchanged(), nil
	}
	res := Result{Out: r.in.raw, Pairing: t.pairing, Fallback: r.obs.Fallback, read: r.in.raw, unrepaired: r.in.unrepaired}
	if c.opts.DryRun {
		res.Obs = r.obs
		return res, nil
	}
	if c.opts.PerRecordMetrics {
		b, err := r.obs.TrajectoryJSON()
		if err != nil {
			return Result{}, fmt.Errorf("%s: %w", r.in.pos, err)
		}
		a.fields = append(a.fields, traj.Field{Key: metrics.TrajectoryKey, Value: b})
	}
	res.Out = r.rec.AppendJSON(nil, a.turns, a.fields...) // sized to the output, not the input
	res.Obs = r.obs
	return res, nil
}
