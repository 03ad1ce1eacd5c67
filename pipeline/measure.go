package pipeline

import (
	"github.com/trajcompress/trajcompress/snap"
	"github.com/trajcompress/trajcompress/traj"
)

// measure counts every turn, and a system prompt kept outside the turn
// list, and reports the input's tool-pairing problems.
func (c *Compressor) measure(j *job) {
	j.turns = j.rec.Turns
	n := len(j.turns)
	defer func() {
		if j.rec.Dialect == traj.DialectOpenAI {
			// Reported for every record: a record written unchanged carries the
			// problems of its input; a compressed one is rechecked in account.
			j.obs.PairingProblems = len(snap.CheckPairing(j.rec.Turns))
			j.obs.PairingProblemsBefore = j.obs.PairingProblems
		}
	}()
	templated := -1
	if c.opts.Template != nil {
		t, err := c.templated(j, j.turns, j.rec.System, nil)
		if err != nil {
			j.tmplErr = err
		} else if templated = t; t <= c.opts.Budget.Target {
			// It fits as the trainer sees it: its turns need no count.
			j.fits = true
			j.obs.Measure(t, n)
			return
		}
	}
	j.roles, j.tok = make([]traj.Role, n), make([]int, n)
	total := 0
	for i, t := range j.turns {
		j.roles[i], j.tok[i] = t.Role, c.count(t)
		total += j.tok[i]
	}
	if j.rec.SystemKey != "" {
		j.ext = c.opts.Counter.Count(j.rec.System) + c.opts.TurnOverhead
	}
	j.adj = 0
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
		if v, err := c.mapper.Tools(j.rec); err == nil && v != nil {
			tools = min(c.opts.Counter.Count(string(v)), max(templated-total-j.ext, 0))
		}
		if extra := templated - total - j.ext - tools; extra > 0 && n > 0 {
			// All of it, the remainder too (one more for the first
			// extra % n turns): a region is credited with its share.
			j.framing = extra / n
			rem := extra % n
			for i := range j.tok {
				j.tok[i] += j.framing
				if i < rem {
					j.tok[i]++
				}
			}
			total += extra
		}
		j.adj = templated - total - j.ext
	case c.opts.Template == nil:
		// Without a template the tool schemas are still part of what the
		// trainer sees: the tokens of their JSON, once per record.
		if tools, err := c.mapper.Tools(j.rec); err == nil && tools != nil {
			j.adj = c.opts.Counter.Count(string(tools))
		}
		j.adj += j.listed
	}
	j.obs.Measure(total+j.ext+j.adj, n)
}
