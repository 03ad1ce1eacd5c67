package pipeline

import (
	"slices"

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
func (c *Compressor) prepass(r *record) bool {
	p := r.plan
	if c.opts.Prepass == nil || p.Outcome == outcome.SkippedUnderTarget || p.HeadEnd >= p.TailStart {
		return false
	}
	r.obs.Prepass.Ran = true
	n, _ := c.notice(r, p.HeadEnd)
	limit := c.opts.Budget.Target - r.m.ext - r.m.adj - n
	fits := func(saved int) bool { return p.Total-saved <= limit }
	cfg := *c.opts.Prepass
	if cfg.DropOldImages || cfg.ImagesOnly {
		cfg.Finder = c.finder(r)
	}
	turns, rep := prepass.Apply(r.rec, r.m.turns, p.HeadEnd, p.TailStart, fits, cfg)
	if !rep.Changed() {
		return false
	}
	r.obs.Prepass.Saved = rep.Saved
	r.obs.ImagesRemoved, r.obs.ImageTokensSaved = rep.ImagesRemoved, rep.ImageTokensSaved
	m := r.m // the turns and counts as the prepass made them
	m.turns, m.dropped, m.tok = turns, rep.ImagesDropped, slices.Clone(r.m.tok)
	for i := p.HeadEnd; i < p.TailStart; i++ {
		if turns[i].Made() {
			turns[i].Extra = c.madeImageTokens(r, i, turns[i])
			m.tok[i] = c.count(turns[i]) + m.framing
		}
	}
	r.m = m
	if rep.Fits {
		r.obs.Prepass.Fit = true
		return true
	}
	c.planRegion(r, refits{})
	return false
}

// prepassOnly is the try of a record that the prepass changed and in
// which no region is summarised, assembled and counted: it fits, or no
// region can be summarised (it is then compressed_over_limit). The notice
// is added as for any compressed record.
func (c *Compressor) prepassOnly(r *record) try {
	h := r.plan.HeadEnd
	p := planned{Plan: snap.Plan{Outcome: outcome.Compressed, Start: h, End: h, HeadEnd: h, TailStart: r.plan.TailStart}}
	_, p.notice = c.notice(r, h)
	t := try{a: c.assemble(r, p, "")}
	t.counted = c.account(r, p, t.a, 0)
	return t
}

// prepassSaved is the tokens the prepass saved, all steps.
func (r *record) prepassSaved() int {
	n := r.obs.ImageTokensSaved
	for _, s := range r.obs.Prepass.Saved {
		n += s
	}
	return n
}
