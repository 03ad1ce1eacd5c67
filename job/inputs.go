package job

import (
	"fmt"

	"github.com/trajcompress/trajcompress/format"
	"github.com/trajcompress/trajcompress/task"
)

// inputs are a run's input files as planned: their layouts, the tasks
// they split into, and the identity of each when the run planned.
type inputs struct {
	plan    Plan
	layouts []format.Layout
	tasks   []task.Task
	stamps  []*stamp // per file: its identity when the run planned (nil: standard input)
}

// newInputs stamps the files of p and splits them into tasks (of about
// target bytes; a sampled file is one task).
func newInputs(p Plan, sampled bool, target int64) (*inputs, error) {
	in := &inputs{plan: p}
	if err := in.stampInputs(); err != nil {
		return nil, err
	}
	var err error
	if in.layouts, in.tasks, err = listing(p, sampled, target); err != nil {
		return nil, err
	}
	return in, nil
}

// firstLine is the number of lines (rows) of t's file before t, and
// whether it is known: from the layout for row groups and batches, from
// the markers of the file's earlier tasks for byte ranges (a shard may run
// a task before them: its numbers are then relative, fixed when merged).
func (in *inputs) firstLine(t task.Task, markers []*marker) (int64, bool) {
	l := in.layouts[t.File]
	switch {
	case t.Part == 0:
		return 0, true
	case l.Kind == task.Units:
		var n int64
		for _, rows := range l.Rows[:t.Start] {
			n += rows
		}
		return n, true
	}
	var n int64
	for i := t.Index - t.Part; i < t.Index; i++ {
		m := markers[i]
		if m == nil {
			return 0, false
		}
		n += m.Lines
	}
	return n, true
}

// listing reads the layout of every input file and splits them into the
// run's tasks (package task): a sampled file, read whole to pick its
// sample, is one task.
func listing(p Plan, sampled bool, target int64) ([]format.Layout, []task.Task, error) {
	layouts := make([]format.Layout, len(p.Files))
	inputs := make([]task.Input, len(p.Files))
	for i, f := range p.Files {
		l, err := format.LayoutOf(f.In)
		if err != nil {
			return nil, nil, err
		}
		if sampled {
			l.Input = task.Input{Kind: task.Whole, Size: l.Size}
		}
		layouts[i], inputs[i] = l, l.Input
	}
	return layouts, task.Split(inputs, target), nil
}

// checkInput fails task (index t) when its input is no longer the file
// the run planned with (at: "started", "ended").
func (in *inputs) checkInput(t int, file int, at string) error {
	path := in.plan.Files[file].In
	was := in.stamps[file]
	if was == nil {
		return nil
	}
	now, err := stampOf(path)
	if err != nil {
		return fmt.Errorf("input %s: task %d %s: %w", path, t, at, err)
	}
	if d := was.diff(now); d != "" {
		return fmt.Errorf("input %s changed during the run (when task %d %s): %s; what was read of it is not put together with the rest: run again once it stays unchanged (with --overwrite if tasks were done from the file it was)", path, t, at, d)
	}
	return nil
}

// stampInputs stamps every input file, when the run plans.
func (in *inputs) stampInputs() error {
	in.stamps = make([]*stamp, len(in.plan.Files))
	for i, f := range in.plan.Files {
		s, err := stampOf(f.In)
		if err != nil {
			return fmt.Errorf("input %s: %w", f.In, err)
		}
		in.stamps[i] = s
	}
	return nil
}

// checkMarkers refuses the tasks an earlier process did (a resumed run,
// a shard, a merge) from an input that is no longer the file they read.
func (in *inputs) checkMarkers(dir *runDir) error {
	for _, m := range dir.markers {
		if m == nil || m.Input == nil {
			continue
		}
		if d := m.Input.diff(in.stamps[m.File]); d != "" {
			return usagef("input %s changed since task %d of the unfinished run in %s read it: %s; its tasks cannot be put together with the rest: pass --overwrite to start over (a sharded run: remove that directory and run the shards again)", in.plan.Files[m.File].In, m.Task, dir.path, d)
		}
	}
	return nil
}

// lineBases is, for each task, the number of lines of its file before it
// (the sum of the lines its file's earlier tasks read).
func (in *inputs) lineBases(markers []*marker) []int64 {
	bases := make([]int64, len(in.tasks))
	for i, t := range in.tasks {
		if t.Part > 0 {
			bases[i] = bases[i-1] + markers[i-1].Lines
		}
	}
	return bases
}
