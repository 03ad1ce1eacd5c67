package job

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/trajcompress/trajcompress/config"
	"github.com/trajcompress/trajcompress/internal/commit"
	"github.com/trajcompress/trajcompress/task"
)

// MergeSpec is one merge invocation.
type MergeSpec struct {
	// Output is the output the shards were given (--output): the output
	// file or directory — or, for a dry run, its metrics file.
	Output string
	// Wait makes the merge wait for shards still holding the output.
	Wait bool
	// Notes receives notes; nil discards them.
	Notes io.Writer
}

// ErrNothingToMerge is returned by [Merge] when the output holds no
// unfinished run: nothing was sharded there, or it was merged already.
var ErrNothingToMerge = errors.New("nothing to merge")

// Merge finishes a sharded run once every shard is done: the outputs put
// together from the tasks' parts in input order, the metrics merged from
// their exact states (equal to one process's, but for times), all put in
// place by one commit that also removes the run directory. It refuses,
// naming them, while tasks are missing; run again, it finds nothing to do
// ([ErrNothingToMerge]). The run's settings come from its manifest, and
// its inputs must be as the shards listed them.
func Merge(spec MergeSpec) (*Result, error) {
	start := time.Now()
	anchor := filepath.Clean(spec.Output)
	dir := runDirOf(anchor)
	if _, err := os.Stat(filepath.Join(dir, manifestName)); errors.Is(err, fs.ErrNotExist) {
		if _, err := commit.Recover(anchor); err != nil { // a merge killed half-way
			return nil, err
		}
		if _, err := os.Stat(anchor); err != nil {
			return nil, usagef("%s: no run of this output to merge (looked for %s): have the shards started, and were they given this --output?", spec.Output, dir)
		}
		return nil, fmt.Errorf("%w: %s holds no unfinished run (looked for %s): merged already", ErrNothingToMerge, spec.Output, dir)
	}
	// The side files the run writes, locked with its output: read from
	// its manifest before the lock, read again under it (and must then be
	// the same).
	var sides []string
	if man, err := readManifest(filepath.Join(dir, manifestName)); err == nil {
		if sp, err := man.spec(spec.Notes); err == nil {
			if p, err := NewPlan(sp); err == nil {
				sides = p.sideFiles(sp.DryRun, sp.DryRun && sp.Rejects == "")
			}
		}
	}
	tx, err := commit.Begin(anchor, commit.Options{Wait: spec.Wait, Fault: commitFault, Also: sides})
	if err != nil {
		if errors.Is(err, commit.ErrLocked) {
			return nil, UsageError{Err: fmt.Errorf("%w (are shards still running?)", err)}
		}
		return nil, err
	}
	r := &runner{tx: tx, anchor: anchor, shard: task.Single, progress: noProgress{}}
	res, err := r.merge(spec, dir, start, sides)
	if err != nil {
		tx.Abort()
	}
	return res, err
}

// spec is the Spec of the run a manifest describes.
func (man manifest) spec(notes io.Writer) (Spec, error) {
	var cfg config.Config
	if err := json.Unmarshal(man.Spec.Config, &cfg); err != nil {
		return Spec{}, fmt.Errorf("the run's config: %w", err)
	}
	return Spec{Config: cfg, Settings: man.Spec.Settings, ToolVersion: man.Tool, Notes: notes}, nil
}

func (r *runner) merge(ms MergeSpec, dir string, start time.Time, locked []string) (*Result, error) {
	man, err := readManifest(filepath.Join(dir, manifestName))
	if errors.Is(err, fs.ErrNotExist) { // merged by another process meanwhile
		return nil, fmt.Errorf("%w: %s holds no unfinished run (merged already?)", ErrNothingToMerge, ms.Output)
	}
	if err != nil {
		return nil, err
	}
	if man.Build != Build() {
		return nil, usagef("%s: the run's tasks were done by another trajcompress build (%s), this merge is %s: merge with the build that ran the shards, or remove %s and run them again", dir, buildName(man.Build), Build(), dir)
	}
	if r.spec, err = man.spec(ms.Notes); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	s := man.Spec
	r.cfg = r.spec.Config
	if r.plan, err = NewPlan(r.spec); err != nil {
		return nil, err
	}
	if got := filepath.Clean(r.plan.anchor(s.DryRun)); got != r.anchor {
		return nil, usagef("%s: the run there writes %s, not %s", dir, got, r.anchor)
	}
	if sides := r.plan.sideFiles(s.DryRun, s.DryRun && s.Rejects == ""); !slices.Equal(sides, locked) {
		return nil, fmt.Errorf("%s: the run there changed while this merge was starting: merge again", dir)
	}
	if fp := listingFingerprint(r.plan, s.Input); fp != man.Listing {
		return nil, usagef("the inputs of the run in %s changed since its shards read them (names, sizes or modification times): run it again with --overwrite", dir)
	}
	if err := r.stampInputs(); err != nil {
		return nil, err
	}
	if r.layouts, r.tasks, err = listing(r.plan, s.Sample != nil, s.TaskSize); err != nil {
		return nil, err
	}
	if len(r.tasks) != man.Tasks {
		return nil, usagef("%s: the run had %d tasks, its inputs now make %d", dir, man.Tasks, len(r.tasks))
	}
	r.dir = &runDir{path: dir, man: man}
	r.markers = make([]*marker, len(r.tasks))
	for _, t := range r.tasks {
		if r.markers[t.Index], err = r.dir.marker(t.Index); err != nil {
			return nil, err
		}
	}
	if err := r.checkMarkers(); err != nil {
		return nil, err
	}
	if missing := r.missingTasks(); len(missing) > 0 {
		var names []string
		for _, i := range missing[:min(len(missing), 20)] {
			names = append(names, fmt.Sprintf("%d (%s)", i, filepath.Base(r.plan.Files[r.tasks[i].File].In)))
		}
		more := ""
		if len(missing) > 20 {
			more = fmt.Sprintf(" and %d more", len(missing)-20)
		}
		return nil, UsageError{Err: fmt.Errorf("%w: %d of %d tasks are not done: %s%s; run the shards that hold them (task i belongs to shard i mod --num-shards) and merge again",
			ErrTasksMissing, len(missing), len(r.tasks), strings.Join(names, ", "), more)}
	}
	r.wantRejects = !s.DryRun || s.Rejects != ""
	r.committed, r.segs = map[string]int64{}, map[string]*segFile{}
	return r.assemble(start)
}

// ErrTasksMissing is returned by [Merge] while tasks of the run are not
// done.
var ErrTasksMissing = errors.New("the run is not finished")
