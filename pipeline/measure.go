package pipeline

import (
	"github.com/trajcompress/trajcompress/snap"
	"github.com/trajcompress/trajcompress/traj"
)

// measured is the record's turns and what each counts, as the planner
// sees them: written by measure, and replaced whole by the prepass when it
// rewrites turns of the middle (the record as read is r.rec).
type measured struct {
	turns []traj.Turn // the record's turns (the prepass's once it ran)
	// dropped are the images list entries whose "<image>" markers the
	// prepass removed (ascending); the list is written without them.
	dropped []int
	roles   []traj.Role // per turn
	tok     []int       // per turn, as counted by c.count (plus framing)
	ext     int         // tokens of a system prompt outside the turns
	// adj is what a whole record costs besides its turns and system
	// prompt as counted one by one: without a template, its tool schemas
	// (as JSON) and the images list entries no marker claims; with one,
	// the templated count of the record less those counts. The planner
	// budgets the turns with it (raised by the refits: planned.adj); only
	// a template's final count settles a record.
	adj     int
	framing int // the template's framing per turn, estimated (added to tok)
}

// measure counts every turn, and a system prompt kept outside the turn
// list, and reports the input's tool-pairing problems. fits says the
// record as the template renders it is at or under target (its turns are
// then not counted); tmplErr is the template's refusal of the record.
func (c *Compressor) measure(r *record) (fits bool, tmplErr error) {
	r.m.turns = r.rec.Turns
	n := len(r.m.turns)
	defer func() {
		if r.rec.Dialect.Pairing() == traj.PairByID {
			// Reported for every record: a record written unchanged carries the
			// problems of its input; a compressed one is rechecked in account.
			r.obs.PairingProblems = len(snap.CheckPairing(r.rec.Turns))
			r.obs.PairingProblemsBefore = r.obs.PairingProblems
		}
	}()
	templated := -1
	if c.opts.Counting.Template != nil {
		c.findParts(r)
		t, err := c.templated(r, r.m.turns, r.rec.System, nil)
		if err != nil {
			tmplErr = err
		} else if templated = t; t <= c.opts.Budget.Target {
			// It fits as the trainer sees it: its turns need no count.
			r.obs.Measure(t, n)
			return true, nil
		}
	}
	r.m.roles, r.m.tok = make([]traj.Role, n), make([]int, n)
	total := 0
	for i, t := range r.m.turns {
		r.m.roles[i], r.m.tok[i] = t.Role, c.countTurn(r, i, t)
		total += r.m.tok[i]
	}
	if r.rec.SystemKey != "" {
		r.m.ext = c.opts.Counting.Counter.Count(r.rec.System) + c.opts.Counting.TurnOverhead
	}
	r.m.adj = 0
	switch {
	case templated >= 0:
		// What the template adds beyond the texts is mostly framing per
		// turn: spread it over the turns, so that the planner credits a
		// region with the framing it removes too (the rendered result
		// decides anyway: Compressor.refit).
		// The tool schemas are rendered once, whatever the turns: a fixed
		// cost of the record (in adj), estimated by the tokens of their
		// JSON, not framing any turn is credited with.
		tools := 0
		if v, err := c.mapper.Tools(r.rec); err == nil && v != nil {
			tools = min(c.opts.Counting.Counter.Count(string(v)), max(templated-total-r.m.ext, 0))
		}
		if extra := templated - total - r.m.ext - tools; extra > 0 && n > 0 {
			// All of it, the remainder too (one more for the first
			// extra % n turns): a region is credited with its share.
			r.m.framing = extra / n
			rem := extra % n
			for i := range r.m.tok {
				r.m.tok[i] += r.m.framing
				if i < rem {
					r.m.tok[i]++
				}
			}
			total += extra
		}
		r.m.adj = templated - total - r.m.ext
	case c.opts.Counting.Template == nil:
		// Without a template the tool schemas are still part of what the
		// trainer sees: the tokens of their JSON, once per record.
		if tools, err := c.mapper.Tools(r.rec); err == nil && tools != nil {
			r.m.adj = c.opts.Counting.Counter.Count(string(tools))
		}
		r.m.adj += r.img.listed
	}
	r.obs.Measure(total+r.m.ext+r.m.adj, n)
	return false, tmplErr
}
