package pipeline

import (
	"github.com/trajcompress/trajcompress/tokenize"
	"github.com/trajcompress/trajcompress/trainview"
	"github.com/trajcompress/trajcompress/traj"
)

// findParts has the record's first rendering count its turn texts on their
// own where it can (trainview.Stretches.FindParts): a record over target
// then has most of its per-turn counts (measure) without tokenizing its
// turns a second time. Only when the template counts with the turns'
// counter, and for a record whose JSON is longer in bytes than the target
// in tokens (a shorter one fits, but for its framing: nothing to gain).
func (c *Compressor) findParts(r *record) {
	tc, ok := c.opts.Counting.Template.(*trainview.Counter)
	if !ok || !sameCounter(tc.Tokens, c.opts.Counting.Counter) || len(r.in.raw) <= c.opts.Budget.Target {
		return
	}
	texts := make([]string, len(r.m.turns))
	for i, t := range r.m.turns {
		texts[i] = t.Text
	}
	if r.tmpl.stretches == nil {
		r.tmpl.stretches = &trainview.Stretches{}
	}
	r.tmpl.stretches.FindParts(texts)
}

// countTurn is c.count of turn i of r's record, its text's count taken
// from the first rendering when that gave it.
func (c *Compressor) countTurn(r *record, i int, t traj.Turn) int {
	if n, ok := r.tmpl.stretches.Part(i); ok {
		return n + t.Extra + c.opts.Counting.TurnOverhead
	}
	return c.count(t)
}

// sameCounter reports whether a and b are the same counter (compared as
// the pointers the run builds, never as values).
func sameCounter(a, b tokenize.Counter) bool {
	switch a := a.(type) {
	case *tokenize.MemoCounter:
		b, ok := b.(*tokenize.MemoCounter)
		return ok && a == b
	case *tokenize.HFTokenizer:
		b, ok := b.(*tokenize.HFTokenizer)
		return ok && a == b
	}
	return false
}
