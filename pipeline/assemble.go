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
	// sysTokens is the count of the system prompt outside the turns, after
	// the notice went into it (j.ext when it did not).
	sysTokens int
}

// assemble splices the summary text into the record as the plan says: the
// head (with the notice on its system turns, or on the system prompt
// outside them), the summary as a turn of its own or merged into a
// neighbour, then the rest. An empty text (the prepass made the record
// fit) adds no summary.
func (c *Compressor) assemble(j *job, text string) assembly {
	rec, p := j.rec, j.plan
	a := assembly{sysTokens: j.ext}
	out := make([]traj.Turn, 0, p.TurnsAfter(len(j.roles)))
	noticed := false
	for i, t := range j.turns[:p.Start] {
		if c.opts.AddNotice && t.Role == traj.RoleSystem {
			if k := noticedAt(j.noticed, i); k >= 0 { // measured by reserve
				t = j.noticed[k].t
			} else { // the placement moved the region's start
				t = rec.AppendText(t, c.opts.NoticeText)
			}
			noticed = true
		}
		out = append(out, t)
	}
	if noticed {
		j.sys = "" // a system turn took the notice after all
	} else if c.opts.AddNotice && j.sys == "" && rec.SystemKey != "" {
		j.sys = rec.System + c.opts.NoticeText
		j.sysTok = c.opts.Counter.Count(j.sys) + c.opts.TurnOverhead
	}
	if j.sys != "" {
		a.fields = append(a.fields, rec.SystemField(j.sys))
		a.sysTokens = j.sysTok
	}
	if f, ok := imagesField(j); ok {
		a.fields = append(a.fields, f)
	}
	rest := j.turns[p.End:]
	switch {
	case text == "":
	case p.Placement == snap.Insert:
		out = append(out, rec.NewTurn(c.opts.SummaryRole, text))
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
// with our counter (sumTokens > 0). It returns the output's tool-pairing
// problems (OpenAI dialect).
func (c *Compressor) account(j *job, a assembly, sumTokens int) []snap.PairProblem {
	var after int
	if c.opts.Template != nil {
		// The templated count replaces the per-turn sum: no turn is
		// counted on its own.
		sys := j.rec.System
		if j.sys != "" {
			sys = j.sys
		}
		t, err := c.templated(j, a.turns, sys, a.fields)
		if err != nil {
			// Rendered the input, refuses the output (e.g. a summary turn
			// out of the order it wants): over target for certain.
			j.tmplErr = err
			t = c.opts.Budget.Target + 1
		}
		after = t
	} else {
		after = c.turnSum(j, a, sumTokens)
	}
	j.obs.Settle(snap.Settle(after, c.opts.Budget), after, len(a.turns))
	if j.rec.Dialect != traj.DialectOpenAI {
		return nil
	}
	pairing := snap.CheckPairing(a.turns)
	j.obs.PairingProblems = len(pairing)
	return pairing
}

// turnSum is the assembled record's tokens as the sum of its turns' (plus
// the system prompt's and the record's adjustment).
func (c *Compressor) turnSum(j *job, a assembly, sumTokens int) int {
	p, n := j.plan, len(j.roles)
	after := a.sysTokens
	for i, t := range a.turns {
		switch {
		case !t.Made():
			// The head keeps its indices; the rest is the input's suffix.
			k := i
			if i >= p.Start {
				k = n - len(a.turns) + i
			}
			after += j.tok[k]
		case i == p.Start && p.Placement == snap.Insert && sumTokens > 0:
			after += sumTokens + t.Extra + c.opts.TurnOverhead
		case i < p.Start && noticedAt(j.noticed, i) >= 0:
			after += j.noticed[noticedAt(j.noticed, i)].tok
		default:
			after += c.count(t)
		}
	}
	return after + j.adj + c.imageDrift(j, a.turns, a.fields)
}

// encode writes the compressed record, with its compression_metrics when
// per-record metrics are on; a dry run keeps the input bytes.
func (c *Compressor) encode(j *job, a assembly, pairing []snap.PairProblem) (Result, error) {
	if j.stopped != nil {
		return Result{}, j.stopped
	}
	if j.tmplErr != nil {
		// The template rendered the record as read but refuses what
		// compression made of it (account): written unchanged, as a
		// record it refuses as read, with its message.
		j.obs.TemplateError = "once compressed: " + j.tmplErr.Error()
		j.obs.TokensAfter, j.obs.TurnsAfter = j.obs.TokensBefore, j.obs.TurnsBefore
		j.obs.PairingProblems = j.obs.PairingProblemsBefore
		j.leave(outcome.Uncompressible, string(outcome.ChatTemplate))
		return j.unchanged(), nil
	}
	res := Result{Out: j.raw, Pairing: pairing, Fallback: j.obs.Fallback}
	if c.opts.DryRun {
		res.Obs = j.obs
		return res, nil
	}
	if c.opts.PerRecordMetrics {
		b, err := j.obs.TrajectoryJSON()
		if err != nil {
			return Result{}, fmt.Errorf("%s: %w", j.pos, err)
		}
		a.fields = append(a.fields, traj.Field{Key: metrics.TrajectoryKey, Value: b})
	}
	res.Out = j.rec.AppendJSON(nil, a.turns, a.fields...) // sized to the output, not the input
	res.Obs = j.obs
	return res, nil
}
