package pipeline

import (
	"github.com/trajcompress/trajcompress/outcome"
	"github.com/trajcompress/trajcompress/prepass"
	"github.com/trajcompress/trajcompress/snap"
)

// prepass makes a record over target smaller without removing a turn,
// before any region is summarised (Options.Prepass): within the middle
// between the protected head and tail, old images become short texts
// (when asked for), identical tool results back-references, large old
// ones one-line digests, oversized tool-call arguments are shrunk, in that
// order, until the record fits (package prepass). It reports whether the record now fits with no region
// summarised (notice included). When the prepass changed the record but
// it still does not fit, the region is planned again on the changed
// turns.
func (c *Compressor) prepass(j *job) bool {
	p := j.plan
	if c.opts.Prepass == nil || p.Outcome == outcome.SkippedUnderTarget || p.HeadEnd >= p.TailStart {
		return false
	}
	j.obs.Prepass.Ran = true
	limit := c.opts.Budget.Target - j.ext - j.adj - c.notice(j, p.HeadEnd)
	fits := func(saved int) bool { return p.Total-saved <= limit }
	cfg := *c.opts.Prepass
	if cfg.DropOldImages || cfg.ImagesOnly {
		cfg.Finder = c.finder(j)
	}
	turns, rep := prepass.Apply(j.rec, j.turns, p.HeadEnd, p.TailStart, fits, cfg)
	if !rep.Changed() {
		return false
	}
	j.obs.Prepass.Saved = rep.Saved
	j.obs.ImagesRemoved, j.obs.ImageTokensSaved = rep.ImagesRemoved, rep.ImageTokensSaved
	j.imgDropped = rep.ImagesDropped
	j.turns = turns
	for i := p.HeadEnd; i < p.TailStart; i++ {
		if turns[i].Made() {
			turns[i].Extra = c.madeImageTokens(j, i, turns[i])
			j.tok[i] = c.count(turns[i]) + j.framing
		}
	}
	if rep.Fits {
		j.obs.Prepass.Fit = true
		return true
	}
	c.planRegion(j)
	return false
}

// prepassOnly assembles a record that the prepass changed and in which no
// region is summarised, for account: it fits, or no region can be
// summarised (it is then compressed_over_limit). The notice is added as
// for any compressed record.
func (c *Compressor) prepassOnly(j *job) assembly {
	h := j.plan.HeadEnd
	j.plan = snap.Plan{Outcome: outcome.Compressed, Start: h, End: h, HeadEnd: h, TailStart: j.plan.TailStart}
	c.notice(j, h)
	return c.assemble(j, "")
}

// prepassSaved is the tokens the prepass saved, all steps.
func (j *job) prepassSaved() int {
	n := j.obs.ImageTokensSaved
	for _, s := range j.obs.Prepass.Saved {
		n += s
	}
	return n
}
