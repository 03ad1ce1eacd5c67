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
	tx, err := commit.Begin(anchor, commit.Options{Wait: spec.Wait, Fault: faultAt(anchor), Also: sides})
	if err != nil {
		if errors.Is(err, commit.ErrLocked) {
			return nil, UsageError{Err: fmt.Errorf("%w (are shards still running?)", err)}
		}
		return nil, err
	}
	out := &outputSet{tx: tx, anchor: anchor}
	res, err := merge(spec, out, dir, start, sides)
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

// merge finishes the run in dir, its output set locked in out.
func merge(ms MergeSpec, out *outputSet, dir string, start time.Time, locked []string) (*Result, error) {
	spec, rd, err := openMerge(ms, dir)
	if err != nil {
		return nil, err
	}
	p, err := NewPlan(spec)
	if err != nil {
		return nil, err
	}
	if got := filepath.Clean(p.anchor(spec.DryRun)); got != out.anchor {
		return nil, usagef("%s: the run there writes %s, not %s", dir, got, out.anchor)
	}
	if sides := p.sideFiles(spec.DryRun, spec.DryRun && spec.Rejects == ""); !slices.Equal(sides, locked) {
		return nil, fmt.Errorf("%s: the run there changed while this merge was starting: merge again", dir)
	}
	if fp := listingFingerprint(p, spec.Input); fp != rd.man.Listing {
		return nil, usagef("the inputs of the run in %s changed since its shards read them (names, sizes or modification times): run it again with --overwrite", dir)
	}
	in, err := newInputs(p, spec.Sample != nil, spec.TaskSize)
	if err != nil {
		return nil, err
	}
	if len(in.tasks) != rd.man.Tasks {
		return nil, usagef("%s: the run had %d tasks, its inputs now make %d", dir, rd.man.Tasks, len(in.tasks))
	}
	if _, err := rd.readMarkers(in.tasks); err != nil {
		return nil, err
	}
	if err := in.checkMarkers(rd); err != nil {
		return nil, err
	}
	if err := in.checkDone(rd); err != nil {
		return nil, err
	}
	if err := in.checkVerified(rd); err != nil {
		return nil, err
	}
	out.nameFiles(p, spec)
	out.wantRejects = !spec.DryRun || spec.Rejects != ""
	a := &assembler{spec: spec, inputs: in, dir: rd, out: out}
	return a.assemble(start)
}

// openMerge reads the manifest of the run in dir: the spec it finishes
// the run with, and the run directory.
func openMerge(ms MergeSpec, dir string) (Spec, *runDir, error) {
	man, err := readManifest(filepath.Join(dir, manifestName))
	if errors.Is(err, fs.ErrNotExist) { // merged by another process meanwhile
		return Spec{}, nil, fmt.Errorf("%w: %s holds no unfinished run (merged already?)", ErrNothingToMerge, ms.Output)
	}
	if err != nil {
		return Spec{}, nil, err
	}
	if man.Build != Build() {
		return Spec{}, nil, usagef("%s: the run's tasks were done by another trajcompress build (%s), this merge is %s: merge with the build that ran the shards, or remove %s and run them again", dir, buildName(man.Build), Build(), dir)
	}
	spec, err := man.spec(ms.Notes)
	if err != nil {
		return Spec{}, nil, fmt.Errorf("%s: %w", dir, err)
	}
	return spec, &runDir{path: dir, man: man}, nil
}

// checkDone refuses, naming them, while tasks of the run are not done.
func (in *inputs) checkDone(rd *runDir) error {
	missing := rd.missingTasks()
	if len(missing) == 0 {
		return nil
	}
	var names []string
	for _, i := range missing[:min(len(missing), 20)] {
		names = append(names, fmt.Sprintf("%d (%s)", i, filepath.Base(in.plan.Files[in.tasks[i].File].In)))
	}
	more := ""
	if len(missing) > 20 {
		more = fmt.Sprintf(" and %d more", len(missing)-20)
	}
	return UsageError{Err: fmt.Errorf("%w: %d of %d tasks are not done: %s%s; run the shards that hold them (task i belongs to shard i mod --num-shards) and merge again",
		ErrTasksMissing, len(missing), len(in.tasks), strings.Join(names, ", "), more)}
}

// checkVerified refuses, naming each (its shard, the task, what differs),
// tasks whose marker or segments fail verification (verify.go): their
// parts are never put together with the rest.
func (in *inputs) checkVerified(rd *runDir) error {
	faults := rd.verifyMarkers(in.tasks, nil)
	if len(faults) == 0 {
		return nil
	}
	var lines []string
	for _, f := range faults[:min(len(faults), maxFaultNotes)] {
		lines = append(lines, fmt.Sprintf("  %s, done by %s: %s", in.describe(f.task), f.shard.name(), f.why))
	}
	if len(faults) > maxFaultNotes {
		lines = append(lines, fmt.Sprintf("  and %d more", len(faults)-maxFaultNotes))
	}
	return fmt.Errorf("%w: %d of %d tasks in %s fail verification, nothing was put in place:\n%s\nrun the shards named again (each verifies its tasks and runs again those that fail), then merge again",
		ErrUnverified, len(faults), len(in.tasks), rd.path, strings.Join(lines, "\n"))
}

// ErrUnverified is returned by [Merge] when tasks of the run fail
// verification: their marker or segments are not what the task wrote.
var ErrUnverified = errors.New("the run directory does not hold what its tasks wrote")

// ErrTasksMissing is returned by [Merge] while tasks of the run are not
// done.
var ErrTasksMissing = errors.New("the run is not finished")
