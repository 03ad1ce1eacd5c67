package job

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/trajcompress/trajcompress/format/jsonl"
	"github.com/trajcompress/trajcompress/internal/atomicfile"
	"github.com/trajcompress/trajcompress/internal/commit"
)

// outputSet is the output set of a run: what it locks (the anchor, with
// the side files), its commit transaction (or, for a shard, its share of
// the lock), where each output is staged, the side files written in place
// (devices, FIFOs, -), the directories it made, and how all of it is
// committed — the commit point — or given up.
type outputSet struct {
	// named are the paths the user named (--metrics, --rejects, ...,
	// --output for one file): staged following a symbolic link there.
	named     []string
	anchor    string         // the output set's anchor (Plan.anchor, or in scratch), locked
	runAnchor string         // where the run directory is named after: anchor, or in scratch
	scratch   string         // a private directory to remove at the end, or ""
	tx        *commit.Tx     // the run's commit (one process for every task, merge)
	shared    *commit.Shared // a shard's share of the output set's lock

	wantRejects                   bool          // a rejects file is written
	directRejects, directOutcomes *jsonl.Writer // side files written in place (devices, FIFOs, -)
	madeDirs                      []string      // output directories this run made, parents first
}

// newOutputSet is the output set of plan under spec, not yet locked.
func newOutputSet(p Plan, spec Spec) *outputSet {
	o := &outputSet{}
	o.nameFiles(p, spec)
	return o
}

// nameFiles records the paths spec names, which are staged following a
// symbolic link there (see stageFile).
func (o *outputSet) nameFiles(p Plan, spec Spec) {
	o.named = nil
	for _, n := range []string{spec.Metrics, spec.Rejects, spec.Outcomes, spec.Report, spec.BatchExport} {
		if n != "" {
			o.named = append(o.named, n)
		}
	}
	if p.Dir == "" && spec.Output != "" {
		o.named = append(o.named, spec.Output)
	}
}

// commit puts everything staged in place together and removes the run
// directory dir with it: the commit point of a run. A kill after it is
// rolled forward by the next run on the output, removal included.
func (o *outputSet) commit(dir string) error {
	o.tx.RemoveAfter(dir)
	if err := o.tx.Commit(); err != nil {
		return err
	}
	o.dropScratch()
	return nil
}

// lock locks the output set, its side files with it (see sideFiles):
// exclusively for a run of every task (its commit puts the outputs in
// place), shared for a shard (shards run together; a whole run or a merge
// waits for them). It opens the side files written in place (devices,
// FIFOs, -).
func (o *outputSet) lock(p Plan, spec Spec, export, shared bool) (err error) {
	dry := spec.DryRun
	if err := o.placeAnchor(p.anchor(dry), spec.BatchExport, export); err != nil {
		return err
	}
	var sides []string
	if !export { // an export writes nothing but its requests
		sides = p.sideFiles(dry, dry && spec.Rejects == "")
	}
	for _, s := range sides {
		if err := o.mkdirs(filepath.Dir(s)); err != nil {
			return err
		}
	}
	if shared {
		o.shared, err = commit.Share(o.anchor, spec.Wait, sides...)
	} else {
		o.tx, err = commit.Begin(o.anchor, commit.Options{Wait: spec.Wait, Fault: faultAt(o.anchor), Also: sides})
	}
	if err != nil {
		if errors.Is(err, commit.ErrLocked) {
			return UsageError{Err: err}
		}
		return err
	}
	// A dry run writes only the metrics (and the files named explicitly).
	o.wantRejects = !dry || spec.Rejects != ""
	if err := o.openDirect(p); err != nil {
		o.abort()
		return err
	}
	return nil
}

// placeAnchor sets the anchor the output set is locked by and the run
// directory named after, and makes its directory.
func (o *outputSet) placeAnchor(anchor, batchExport string, export bool) error {
	if export {
		anchor = filepath.Clean(batchExport)
	}
	o.runAnchor = anchor
	if commit.IsDirect(anchor) || export {
		// A dry run whose metrics go to a device, a FIFO or -, and a batch
		// export (whose requests are gathered in memory): their tasks are
		// kept in a private directory for the time of the run, which
		// cannot be resumed. An export still locks its file.
		tmp, err := os.MkdirTemp("", "trajcompress-run-")
		if err != nil {
			return err
		}
		o.scratch, o.runAnchor = tmp, filepath.Join(tmp, "run")
		if commit.IsDirect(anchor) {
			anchor = o.runAnchor
		}
	}
	o.anchor = anchor
	return o.mkdirs(filepath.Dir(anchor))
}

// openDirect opens the side files written in place (devices, FIFOs, -).
func (o *outputSet) openDirect(p Plan) (err error) {
	if o.wantRejects && commit.IsDirect(p.Rejects) {
		if o.directRejects, err = directSide(p.Rejects); err != nil {
			return err
		}
	}
	if p.Outcomes != "" && commit.IsDirect(p.Outcomes) {
		if o.directOutcomes, err = directSide(p.Outcomes); err != nil {
			return err
		}
	}
	return nil
}

// mkdirs makes dir and its missing parents, remembering which it made.
func (o *outputSet) mkdirs(dir string) error {
	var missing []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || filepath.Dir(d) == d {
			break
		}
		missing = append(missing, d)
	}
	if err := os.MkdirAll(dir, 0o777); err != nil { // 0777 &^ umask, as mkdir(1)
		return err
	}
	for i := len(missing) - 1; i >= 0; i-- {
		o.madeDirs = append(o.madeDirs, missing[i])
	}
	return nil
}

// removeMadeDirs removes, deepest first, the directories mkdirs made, if
// they are still empty: a failed run leaves no trace of its own.
func (o *outputSet) removeMadeDirs() {
	for i := len(o.madeDirs) - 1; i >= 0; i-- {
		os.Remove(o.madeDirs[i])
	}
	o.madeDirs = nil
}

// abort discards everything lock started: the staged outputs, the lock,
// a scratch run directory. The run directory stays: its finished tasks
// are what a resumed run skips.
func (o *outputSet) abort() {
	if o.tx != nil {
		o.tx.Abort()
	}
	if o.shared != nil {
		o.shared.Release()
		o.shared = nil
	}
	o.dropScratch()
}

// dropScratch removes the private run directory of a dry run that writes
// no file.
func (o *outputSet) dropScratch() {
	if o.scratch != "" {
		os.RemoveAll(o.scratch)
		o.scratch = ""
	}
}

// stageFile stages path in the run's commit: following a symbolic link
// there when the user named the path, refusing one at a name the run
// chose (see [commit.NotLink]).
func (o *outputSet) stageFile(path string) (string, commit.Kind, error) {
	if slices.Contains(o.named, path) {
		return o.tx.File(path)
	}
	return o.tx.FileNoFollow(path)
}

// stage stages the regular-file output path in the run's commit and
// returns where to write it. A device, FIFO or "-" is refused here: only
// JSONL side files may be written directly (see createJSONL).
func (o *outputSet) stage(path string) (string, error) {
	sp, kind, err := o.stageFile(path)
	if err != nil {
		return "", UsageError{Err: err}
	}
	if kind == commit.Direct {
		return "", usagef("output %s is not a regular file: record outputs are written to files (rejects, outcomes and metrics may go to a device, a FIFO or -)", path)
	}
	return sp, nil
}

// writeSide writes the side file data (the metrics, the HTML report) to
// path: staged in the commit, or directly to a device, a FIFO or "-".
func (o *outputSet) writeSide(path, what string, data []byte) error {
	if err := o.mkdirs(filepath.Dir(path)); err != nil && path != "-" {
		return err
	}
	sp, kind, err := o.stageFile(path)
	if err != nil {
		return UsageError{Err: err}
	}
	if kind == commit.Direct {
		w, err := jsonl.OpenDirect(path)
		if err == nil {
			_, err = w.Write(data)
			if _, fd := commit.FD(path); !fd { // standard output and the like stay open
				if cerr := w.Close(); err == nil {
					err = cerr
				}
			}
		}
		if err != nil {
			return fmt.Errorf("%s %s: %w", what, path, err)
		}
		return nil
	}
	f, err := atomicfile.Create(sp)
	if err == nil {
		_, werr := f.Write(data)
		err = f.Finish(werr)
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", what, path, err)
	}
	return nil
}

// closeDirect ends the side files written directly to a device, a FIFO
// or "-".
func (o *outputSet) closeDirect() error {
	for _, w := range []struct {
		w    **jsonl.Writer
		what string
	}{{&o.directRejects, "rejects"}, {&o.directOutcomes, "outcomes"}} {
		if *w.w == nil {
			continue
		}
		err := (*w.w).Close()
		*w.w = nil
		if err != nil {
			return fmt.Errorf("%s: %w", w.what, err)
		}
	}
	return nil
}

// stageSide stages a JSON Lines side file in the commit.
func (o *outputSet) stageSide(path string) (string, error) {
	sp, err := o.stage(path)
	if err != nil && strings.Contains(err.Error(), "not a regular file") {
		return "", err
	}
	return sp, err
}
