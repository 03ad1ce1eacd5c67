package jinja

// trajcompress patch: a for loop pulls a generator or iterator (List.iter)
// lazily, as Python's for does: item by item, so that a loop left by
// break leaves the rest to a later loop or filter. jinja2's loop object
// pulls further only when the body reads loop.last or loop.nextitem (one
// item more, past the loop's `if`) or loop.length, loop.revindex or
// loop.revindex0 (all of it). The engine computes the loop's items first;
// genPull takes them out of the generator as Python would have.

import "fmt"

// genPull is how far a for loop has pulled the generator it iterates.
type genPull struct {
	l      *List // the generator
	n      int   // its items when the loop began
	src    []int // the generator's index of each loop item (after the loop's if); nil: the same
	pulled int   // how many of the n the loop has taken
	err    error
}

// newGenPull follows v when it is a generator or iterator, else it is nil
// (and its methods do nothing).
func newGenPull(v Value, n int) *genPull {
	if !lazyIter(v.IterType()) {
		return nil
	}
	return &genPull{l: v.AsList(), n: n}
}

// srcOf is the generator's index of loop item i.
func (g *genPull) srcOf(i int) int {
	if g.src == nil {
		return i
	}
	return g.src[i]
}

// pull takes the generator's items up to index to (exclusive). A body
// that iterated the same generator took items the loop had not: the
// engine's loop, whose items were computed first, would go on where
// Python's stops, so that is refused by name.
func (g *genPull) pull(to int) {
	if g == nil || g.err != nil || to <= g.pulled {
		return
	}
	if len(g.l.Items) != g.n-g.pulled {
		g.err = fmt.Errorf("unsupported construct: a for loop over a %s that its body also iterates", g.l.iter)
		return
	}
	g.l.Items = g.l.Items[to-g.pulled:]
	g.pulled = to
}

// item is the loop's taking its item i, before the body runs.
func (g *genPull) item(i int) error {
	if g == nil {
		return nil
	}
	g.pull(g.srcOf(i) + 1)
	return g.err
}

// read is the body's reading loop attribute key during item i of total.
func (g *genPull) read(key string, i, total int) {
	switch key {
	case "last", "nextitem":
		if i+1 < total {
			g.pull(g.srcOf(i+1) + 1)
		} else {
			g.pull(g.n)
		}
	case "length", "revindex", "revindex0":
		g.pull(g.n)
	}
}

// done is the loop's end: without a break the generator is used up.
func (g *genPull) done(broke bool) error {
	if g == nil {
		return nil
	}
	if !broke {
		g.pull(g.n)
	}
	return g.err
}

// containsLazy is `in` of a generator or iterator: Python pulls it up to
// the item found, all of it when none is (trajcompress patch).
func containsLazy(container, item Value) bool {
	items := container.AsList().Items
	for i, it := range items {
		if valuesEqual(it, item) {
			consumeIter(container, i+1)
			return true
		}
	}
	consumeIter(container, len(items))
	return false
}
