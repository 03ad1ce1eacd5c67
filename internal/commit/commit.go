// Package commit puts the outputs of one run in place together: after a
// failure or a kill at any point, the output names hold entirely the
// previous run's files or entirely the new run's, once the commit has been
// recovered — and every trajcompress command that opens an output set
// recovers it first. It is SQLite's rollback journal turned around: a roll-
// forward journal.
//
// A run calls [Begin] with its anchor (the main output path), which takes
// an exclusive lock on the output set (flock on ".<anchor>.tc-lock",
// removed when the run ends; a second run fails at once with [ErrLocked],
// or waits) — and on its side files named apart from it ([Options].Also),
// each locked the same way — and finishes any commit a killed run left
// behind. It then stages each output with [Tx.File] or [Tx.Dir]: a
// temporary name beside the target (".<name>.tc-<run>.tmp"), so the final
// rename never crosses file systems. [Tx.Commit] then
//
//  1. syncs every staged file (and staged directory),
//  2. writes the journal — the list of (target, staged) pairs and a
//     checksum — to a temporary name, syncs it and renames it to
//     ".<anchor>.tc-journal": this rename is the commit point,
//  3. for each target: renames the old target (if any) aside to
//     ".<name>.tc-<run>.old" and renames the staged file onto the target;
//     then syncs each directory these renames touched, once,
//  4. removes the journal, then the set-aside old files.
//
// A failure before the commit point removes the staged files: the previous
// outputs were never touched. A failure during step 3 in a live process is
// rolled back at once (new files out, old files back), and reported. A
// kill at any point leaves either no journal (nothing happened: the next
// run removes the staged files by their name pattern) or a complete
// journal, which [Begin] and [Recover] roll forward: each step is
// idempotent, so a kill during recovery is recovered the same way. A
// reader that must not see a half-applied set calls [Recover] first (check
// does); one that just opens the files sees a mixed set only between a
// kill in step 3 and the next run on the same output.
//
// Outputs that are not regular files are never replaced: a character
// device, a FIFO or "-" (standard output) is written directly, with no
// staging and no atomicity ([Tx.File] says so by returning Direct); a
// symbolic link is followed, and the file it points to is replaced (in its
// own directory), never the link — at a path the user named; at a name the
// program chose, [Tx.FileNoFollow] refuses it.
//
// A new output has the mode of a new file, 0666 &^ umask; one written over
// keeps the mode of the file it replaces (the staged file is given it
// before the commit point, whatever its writer made of it).
//
// Only files whose names match this package's patterns, beside a target
// this run stages, while it holds the lock, are ever removed.
package commit

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/trajcompress/trajcompress/internal/atomicfile"
)

// ErrLocked is returned by [Begin] when another process holds the lock on
// the output set.
var ErrLocked = errors.New("another trajcompress run is writing these outputs")

// Options configure [Begin].
type Options struct {
	// Wait makes Begin wait for the lock instead of failing with ErrLocked.
	Wait bool
	// Fault, when set, is called after every write, sync and rename step of
	// the commit with the step's name; a non-nil error is injected as that
	// step's failure. Tests use it to fail (or kill the process) at every
	// step.
	Fault func(step string) error
	// Also are the other outputs of the set named apart from the anchor
	// (side files: metrics, rejects, outcomes, a report, wherever the
	// user put them): each is locked as an anchor is (".<name>.tc-lock"
	// beside it), so that two runs sharing one fail or wait as two runs
	// sharing an output do (in one order: see lockAll).
	Also []string
}

// Kind says how an output is written.
type Kind int

// The kinds of output.
const (
	Staged Kind = iota // a regular file (or a new name): staged, renamed into place by Commit
	Direct             // a device, FIFO or "-": written directly, no atomicity
)

type entry struct {
	target string // final path (a symlink already resolved)
	staged string // temporary path beside it
	dir    bool
	mode   fs.FileMode // a new file's mode (0666 &^ umask), for a target that does not exist
}

// Tx is one run's output set.
type Tx struct {
	anchor  string
	lock    *os.File
	also    []*os.File // the side files' locks (Options.Also)
	id      string
	entries []entry
	remove  []string // directories the commit removes once its outputs are in place
	fault   func(string) error
	done    bool
	stale   map[string]map[string][]string // dir → output name → our leftovers there (cleanStale)
}

const (
	tag         = ".tc-"
	journalName = ".tc-journal"
	lockName    = ".tc-lock"
)

// hidden is the hidden name beside path with suffix: ".<name><suffix>",
// <name> the file's name bounded by atomicfile.ShortName.
func hidden(path, suffix string) string {
	return filepath.Join(filepath.Dir(path), "."+atomicfile.ShortName(filepath.Base(path))+suffix)
}

// JournalPath is where the journal of the output set anchored at anchor
// lives while a commit is under way.
func JournalPath(anchor string) string { return hidden(anchor, journalName) }

// LockPath is the lock file of the output set anchored at anchor, there
// while a run holds it.
func LockPath(anchor string) string { return hidden(anchor, lockName) }

// Begin takes the lock on the output set anchored at anchor (whose
// directory must exist), and those of o.Also, and recovers a commit a
// killed run left behind.
func Begin(anchor string, o Options) (*Tx, error) {
	anchor = atomicfile.Resolve(anchor)
	locks, err := lockAll(append([]string{anchor}, o.Also...), unix.LOCK_EX, o.Wait)
	if err != nil {
		return nil, err
	}
	t := &Tx{anchor: anchor, id: fmt.Sprintf("%016x", rand.Uint64()), fault: o.Fault}
	for _, l := range locks {
		// The holder's pid is for a person reading the lock file; the
		// lock is the flock, so failing to write it changes nothing.
		l.f.Truncate(0)                                        //nolint:errcheck // see above
		l.f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0) //nolint:errcheck // see above
		if l.path == LockPath(anchor) {
			t.lock = l.f
		} else {
			t.also = append(t.also, l.f)
		}
	}
	if err := recoverLocked(anchor); err != nil {
		t.release()
		return nil, err
	}
	return t, nil
}

// File stages the regular file target and returns the temporary path to
// write it to, with Staged; for a direct output (see [IsDirect]) it returns
// target itself and Direct, and Commit leaves it alone. Temporary files a
// killed run left beside target are removed.
func (t *Tx) File(target string) (string, Kind, error) { return t.file(target, true) }

// FileNoFollow is [Tx.File] for a name the program chose rather than one
// the user gave: a symbolic link there is refused, naming it, not
// followed (someone else may have planted it to make the run write
// elsewhere).
func (t *Tx) FileNoFollow(target string) (string, Kind, error) { return t.file(target, false) }

func (t *Tx) file(target string, follow bool) (string, Kind, error) {
	if !follow {
		if err := NotLink(target); err != nil {
			return "", 0, err
		}
	}
	if IsDirect(target) {
		return target, Direct, nil
	}
	target = atomicfile.Resolve(target)
	if fi, err := os.Stat(target); err == nil && !fi.Mode().IsRegular() {
		return "", 0, fmt.Errorf("output %s exists and is not a regular file: refusing to replace it", target)
	}
	return t.stage(target, false)
}

// Dir stages the directory target and returns the temporary directory to
// fill (created, empty).
func (t *Tx) Dir(target string) (string, error) {
	target = atomicfile.Resolve(target)
	if fi, err := os.Stat(target); err == nil && !fi.IsDir() {
		return "", fmt.Errorf("output directory %s exists and is not a directory", target)
	}
	p, _, err := t.stage(target, true)
	return p, err
}

func (t *Tx) stage(target string, dir bool) (string, Kind, error) {
	for _, e := range t.entries {
		if e.target == target {
			return "", 0, fmt.Errorf("output %s is staged twice", target)
		}
	}
	t.cleanStale(target)
	p := hidden(target, tag+t.id+".tmp")
	var err error
	var mode fs.FileMode
	if dir {
		err = os.Mkdir(p, 0o755)
	} else {
		var f *os.File
		if f, err = os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666); err == nil {
			var fi fs.FileInfo
			if fi, err = f.Stat(); err == nil {
				mode = fi.Mode().Perm() // 0666 &^ umask, whatever the writer does to the file
			}
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
	}
	if err != nil {
		return "", 0, err
	}
	t.entries = append(t.entries, entry{target: target, staged: p, dir: dir, mode: mode})
	return p, Staged, nil
}

// cleanStale removes what a killed run left beside target: staged and
// set-aside files of this package's name pattern (".<name>.tc-<16 hex>.tmp"
// or ".old"), atomicfile's temporary files (".<name>.tmp-<digits>", also
// beside a staged file) and the ".<name>.partial" of earlier versions. The
// caller holds the lock, and no journal names them (Begin recovered it).
// Each directory is listed once per transaction, before this run stages
// anything in it (a directory output of thousands of files is cleaned in
// linear time).
func (t *Tx) cleanStale(target string) {
	dir, base := filepath.Dir(target), filepath.Base(target)
	byBase, ok := t.stale[dir]
	if !ok {
		byBase = map[string][]string{}
		if ents, err := os.ReadDir(dir); err == nil {
			for _, e := range ents {
				if b, ok := ourBase(e.Name()); ok {
					byBase[b] = append(byBase[b], e.Name())
				}
			}
		}
		if t.stale == nil {
			t.stale = map[string]map[string][]string{}
		}
		t.stale[dir] = byBase
	}
	for _, key := range keysOf(base) {
		for _, name := range byBase[key] {
			os.RemoveAll(filepath.Join(dir, name))
		}
		delete(byBase, key)
	}
}

// keysOf are the names the hidden files of the output named base are made
// of: base, and its atomicfile.ShortName when that differs (a long name).
func keysOf(base string) []string {
	if s := atomicfile.ShortName(base); s != base {
		return []string{base, s}
	}
	return []string{base}
}

// ourBase parses a file name of this package's patterns (see cleanStale)
// and returns the name of the output it belongs to.
func ourBase(name string) (string, bool) {
	inner, ok := strings.CutPrefix(name, ".")
	if !ok {
		return "", false
	}
	// What a run before the commit protocol left: ".<name>.partial".
	if b, ok := strings.CutSuffix(inner, ".partial"); ok && b != "" {
		return b, true
	}
	// atomicfile's temporary file: ".<name>.tmp-<digits>", where <name> is
	// the target or a staged file of it.
	if i := strings.LastIndex(inner, ".tmp-"); i > 0 && inner[i+5:] != "" && strings.Trim(inner[i+5:], "0123456789") == "" {
		b := inner[:i]
		if sb, ok := ourBase(b); ok && strings.HasSuffix(b, ".tmp") {
			return sb, true
		}
		return b, true
	}
	// A staged or set-aside file: ".<name>.tc-<16 hex>.tmp" or ".old".
	i := strings.LastIndex(inner, tag)
	if i <= 0 {
		return "", false
	}
	rest := inner[i+len(tag):]
	if len(rest) != 16+4 || (rest[16:] != ".tmp" && rest[16:] != ".old") {
		return "", false
	}
	if _, err := hex.DecodeString(rest[:16]); err != nil {
		return "", false
	}
	return inner[:i], true
}

func (t *Tx) step(name string) error {
	if t.fault != nil {
		return t.fault(name)
	}
	return nil
}

// RemoveAfter makes the commit remove the directory at path once every
// output is in place — and makes a recovery of a killed commit do so too:
// the directory goes exactly when the new outputs are in place. A run
// removes the scratch space its outputs were assembled from this way (a
// resumable run's task directory), so that no run that finished leaves it,
// and none that did not loses it.
func (t *Tx) RemoveAfter(path string) { t.remove = append(t.remove, path) }

// Commit puts every staged output in place together (see the package doc)
// and releases the lock. The caller has closed the staged files. On error
// the previous outputs are in place, or (after a failure while applying
// that could not be undone) the journal is left for the next run to roll
// forward, and the error says so.
func (t *Tx) Commit() (err error) {
	if t.done {
		return errors.New("commit: transaction already ended")
	}
	t.done = true
	defer t.release()
	// 1. Make the new files durable before anything points at them.
	for _, e := range t.entries {
		var err error
		if e.dir {
			err = syncTree(e.staged, true)
		} else {
			err = syncFile(e.staged, e.modeFor())
		}
		if err != nil {
			t.removeStaged()
			return fmt.Errorf("output %s: %w", e.target, err)
		}
		if err := t.step("sync " + filepath.Base(e.target)); err != nil {
			t.removeStaged()
			return err
		}
	}
	// 2. The journal: its rename is the commit point.
	if err := t.writeJournal(); err != nil {
		t.removeStaged()
		return err
	}
	// 3. Apply: the renames, then one sync of each directory they touched
	// (not one per output: a directory output of thousands of files would
	// pay thousands of syncs; the journal makes the renames recoverable
	// until the syncs are done).
	undo := func(i int, target string, err error) error {
		if rerr := t.rollback(i); rerr != nil {
			return fmt.Errorf("output %s: %w; undoing the commit failed too (%v): the next run on %s finishes it", target, err, rerr, t.anchor)
		}
		return fmt.Errorf("output %s: %w (the previous outputs are back in place)", target, err)
	}
	var dirs []entry // the first entry in each directory
	synced := map[string]bool{}
	for i, e := range t.entries {
		if err := t.apply(e); err != nil {
			return undo(i, e.target, err)
		}
		if d := filepath.Dir(e.target); !synced[d] {
			synced[d] = true
			dirs = append(dirs, e)
		}
	}
	for _, e := range dirs {
		err := syncDir(filepath.Dir(e.target))
		if err == nil {
			err = t.step("sync dir of " + filepath.Base(e.target))
		}
		if err != nil {
			return undo(len(t.entries)-1, filepath.Dir(e.target), err)
		}
	}
	// 4. Done: every new output is in place. The directories to remove go,
	// then the journal, then the old files; a failure here changes nothing
	// a reader sees (a journal left behind is rolled forward as a no-op by
	// the next run, and its old files and directories removed then), so it
	// is not the run's failure.
	for _, d := range t.remove {
		os.RemoveAll(d)
		t.step("remove " + filepath.Base(d)) //nolint:errcheck // past the commit point: a fault here is a crash point for tests, not a failure
	}
	os.Remove(JournalPath(t.anchor))
	t.step("remove journal")        //nolint:errcheck // as above
	syncDir(filepath.Dir(t.anchor)) //nolint:errcheck // as above: a journal left behind is rolled forward as a no-op
	for _, e := range t.entries {
		os.RemoveAll(hidden(e.target, tag+t.id+".old"))
	}
	return nil
}

// Abort removes the staged outputs and releases the lock; the previous
// outputs are untouched. Abort after Commit is a no-op.
func (t *Tx) Abort() {
	if t.done {
		return
	}
	t.done = true
	t.removeStaged()
	t.release()
}

func (t *Tx) removeStaged() {
	for _, e := range t.entries {
		os.RemoveAll(e.staged)
	}
	os.Remove(JournalPath(t.anchor) + ".tmp")
}

func (t *Tx) apply(e entry) error {
	old := hidden(e.target, tag+t.id+".old")
	if _, err := os.Lstat(e.target); err == nil {
		if err := os.Rename(e.target, old); err != nil {
			return err
		}
		if err := t.step("set aside " + filepath.Base(e.target)); err != nil {
			return err
		}
	}
	if err := os.Rename(e.staged, e.target); err != nil {
		return err
	}
	return t.step("rename " + filepath.Base(e.target))
}

// rollback undoes the first n+1 entries' apply steps (entry n may be half
// done) and removes the journal.
func (t *Tx) rollback(n int) error {
	var errs []error
	for i := n; i >= 0; i-- {
		e := t.entries[i]
		old := hidden(e.target, tag+t.id+".old")
		if _, err := os.Lstat(e.staged); err != nil { // the new file is at target
			if err := os.Rename(e.target, e.staged); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
				continue
			}
		}
		if _, err := os.Lstat(old); err == nil {
			if err := os.Rename(old, e.target); err != nil {
				errs = append(errs, err)
			}
		}
		syncDir(filepath.Dir(e.target)) //nolint:errcheck // rollback: the renames' errors are what it reports; the sync is best effort
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	t.removeStaged()
	os.Remove(JournalPath(t.anchor))
	syncDir(filepath.Dir(t.anchor)) //nolint:errcheck // as above
	return nil
}
