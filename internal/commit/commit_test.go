package commit

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// layout is one output set as the CLI writes it: a file output (records,
// rejects, metrics) or a directory output (a folder of records, plus
// rejects and metrics beside it).
type layout struct {
	name string
	dir  bool
	long bool // names of 250 bytes and more: the hidden names made of them are cut
}

var layouts = []layout{{"file", false, false}, {"dir", true, false}, {"long", false, true}, {"longdir", true, true}}

func (l layout) targets(root string) (anchor string, files []string, dir string) {
	pre := ""
	if l.long {
		pre = strings.Repeat("n", 225) // a_compressed_rejects.jsonl: 251 bytes
	}
	if l.dir {
		dir = filepath.Join(root, pre+"runs_compressed")
		return dir, []string{filepath.Join(root, pre+"runs_compressed_rejects.jsonl"), filepath.Join(root, pre+"runs_metrics.json")}, dir
	}
	out := filepath.Join(root, pre+"a_compressed.jsonl")
	return out, []string{out, filepath.Join(root, pre+"a_compressed_rejects.jsonl"), filepath.Join(root, pre+"a_compressed_metrics.json")}, ""
}

// write runs one whole commit of generation gen (its content says which).
func write(t testing.TB, l layout, root, gen string, fault func(string) error) error {
	anchor, files, dir := l.targets(root)
	tx, err := Begin(anchor, Options{Fault: fault})
	if err != nil {
		return err
	}
	for _, f := range files {
		p, kind, err := tx.File(f)
		if err != nil || kind != Staged {
			tx.Abort()
			return fmt.Errorf("stage %s: %v %v", f, kind, err)
		}
		if err := os.WriteFile(p, []byte(gen+" "+filepath.Base(f)+"\n"), 0o644); err != nil {
			tx.Abort()
			return err
		}
	}
	if dir != "" {
		p, err := tx.Dir(dir)
		if err != nil {
			tx.Abort()
			return err
		}
		for _, n := range []string{"x.jsonl", "sub/y.jsonl"} {
			os.MkdirAll(filepath.Dir(filepath.Join(p, n)), 0o755)
			if err := os.WriteFile(filepath.Join(p, n), []byte(gen+" "+n+"\n"), 0o644); err != nil {
				tx.Abort()
				return err
			}
		}
	}
	return tx.Commit()
}

// state reads what a reader finds under the output names: "old", "new",
// "none" or "mixed(...)".
func state(t testing.TB, l layout, root string) string {
	anchor, files, dir := l.targets(root)
	_ = anchor
	var gens []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			gens = append(gens, "missing")
			continue
		}
		gens = append(gens, strings.Fields(string(b))[0])
	}
	if dir != "" {
		for _, n := range []string{"x.jsonl", "sub/y.jsonl"} {
			b, err := os.ReadFile(filepath.Join(dir, n))
			if err != nil {
				gens = append(gens, "missing")
				continue
			}
			gens = append(gens, strings.Fields(string(b))[0])
		}
	}
	first := gens[0]
	for _, g := range gens {
		if g != first {
			return "mixed(" + strings.Join(gens, ",") + ")"
		}
	}
	if first == "missing" {
		return "none"
	}
	return first
}

// leftovers lists the files of ours that are not outputs: temporaries,
// set-aside files, journals, lock files.
func leftovers(t testing.TB, root string) []string {
	var out []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), tag) {
			out = append(out, strings.TrimPrefix(p, root))
		}
		return nil
	})
	return out
}

func TestCommitReplacesTogether(t *testing.T) {
	for _, l := range layouts {
		t.Run(l.name, func(t *testing.T) {
			root := t.TempDir()
			if err := write(t, l, root, "old", nil); err != nil {
				t.Fatal(err)
			}
			if s := state(t, l, root); s != "old" {
				t.Fatalf("after the first run: %s", s)
			}
			if err := write(t, l, root, "new", nil); err != nil {
				t.Fatal(err)
			}
			if s := state(t, l, root); s != "new" {
				t.Fatalf("after the second run: %s", s)
			}
			if lo := leftovers(t, root); len(lo) > 0 {
				t.Fatalf("left behind: %v", lo)
			}
		})
	}
}

// steps lists the fault points of one commit, in order.
func steps(t *testing.T, l layout) []string {
	root := t.TempDir()
	write(t, l, root, "old", nil)
	var seen []string
	if err := write(t, l, root, "new", func(s string) error { seen = append(seen, s); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(seen) < 10 {
		t.Fatalf("only %d steps: %v", len(seen), seen)
	}
	return seen
}

// TestFailureAtEveryStep injects an error after each write, sync and rename
// step of the commit: the run fails, and a reader finds entirely the old
// outputs — or, for a step after the last new output is in place, the
// new ones with the commit reported done. Nothing of ours is left behind
// once the next run has staged the same outputs.
func TestFailureAtEveryStep(t *testing.T) {
	if testing.Short() {
		t.Skip("crash matrix: the full test run only (make test), not -short")
	}
	for _, l := range layouts {
		all := steps(t, l)
		for k, step := range all {
			t.Run(fmt.Sprintf("%s/%02d %s", l.name, k, step), func(t *testing.T) {
				root := t.TempDir()
				if err := write(t, l, root, "old", nil); err != nil {
					t.Fatal(err)
				}
				boom := errors.New("injected")
				err := write(t, l, root, "new", func(s string) error {
					if s == step {
						return boom
					}
					return nil
				})
				got := state(t, l, root)
				if step == "remove journal" {
					if err != nil || got != "new" {
						t.Fatalf("after the commit point's cleanup failed: err %v, state %s", err, got)
					}
				} else if !errors.Is(err, boom) || got != "old" {
					t.Fatalf("err %v, state %s: want the injected error and the old outputs", err, got)
				}
				t.Logf("%s: %s", step, got)
				if _, err := os.Stat(JournalPath(mustAnchor(l, root))); err == nil {
					t.Fatalf("a failed commit left its journal")
				}
				// The next run cleans up and succeeds.
				if err := write(t, l, root, "next", nil); err != nil {
					t.Fatal(err)
				}
				if s := state(t, l, root); s != "next" {
					t.Fatalf("next run: %s", s)
				}
				if lo := leftovers(t, root); len(lo) > 0 {
					t.Fatalf("left behind: %v", lo)
				}
			})
		}
	}
}

func mustAnchor(l layout, root string) string {
	a, _, _ := l.targets(root)
	return a
}

// TestKillAtEveryStep SIGKILLs a child process after each step of its
// commit. What a reader finds right after the kill is recorded (it can be
// mixed only during the apply steps); after Recover — which every run on
// the same output does first — it is entirely old or entirely new, and
// after the next run nothing of ours is left.
func TestKillAtEveryStep(t *testing.T) {
	if os.Getenv("COMMIT_CHILD_STEP") != "" {
		t.Skip("child process")
	}
	if testing.Short() {
		t.Skip("crash matrix: the full test run only (make test), not -short")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	matrix := map[string]int{}
	for _, l := range layouts {
		for k, step := range steps(t, l) {
			root := t.TempDir()
			if err := write(t, l, root, "old", nil); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(exe, "-test.run=^TestKillChild$", "-test.v")
			cmd.Env = append(os.Environ(), "COMMIT_CHILD_STEP="+step, "COMMIT_CHILD_ROOT="+root, "COMMIT_CHILD_LAYOUT="+l.name)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("%s/%s: child was not killed: %v\n%s", l.name, step, err, out)
			}
			raw := state(t, l, root)
			recovered, err := Recover(mustAnchor(l, root))
			if err != nil {
				t.Fatalf("%s/%s: recover: %v", l.name, step, err)
			}
			after := state(t, l, root)
			if after != "old" && after != "new" {
				t.Fatalf("%s/%02d %s: after recovery a reader finds %s", l.name, k, step, after)
			}
			key := fmt.Sprintf("%s | %-28s | raw %-7s | recovered %-5v | reader finds %s", l.name, step, short(raw), recovered, after)
			matrix[key]++
			if err := write(t, l, root, "next", nil); err != nil {
				t.Fatal(err)
			}
			if lo := leftovers(t, root); len(lo) > 0 {
				t.Fatalf("%s/%s: left behind after the next run: %v", l.name, step, lo)
			}
		}
	}
	keys := make([]string, 0, len(matrix))
	for k := range matrix {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Log(k)
	}
}

func short(s string) string {
	if strings.HasPrefix(s, "mixed") {
		return "mixed"
	}
	return s
}

// TestKillChild is the child of TestKillAtEveryStep: it commits "new" and
// kills itself at the step it is given.
func TestKillChild(t *testing.T) {
	step := os.Getenv("COMMIT_CHILD_STEP")
	if step == "" {
		t.Skip("run by TestKillAtEveryStep")
	}
	l := layouts[slices.IndexFunc(layouts, func(l layout) bool { return l.name == os.Getenv("COMMIT_CHILD_LAYOUT") })]
	write(t, l, os.Getenv("COMMIT_CHILD_ROOT"), "new", func(s string) error {
		if s == step {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			time.Sleep(time.Minute)
		}
		return nil
	})
	t.Fatal("the step never came")
}

func TestLock(t *testing.T) {
	root := t.TempDir()
	anchor := filepath.Join(root, "out.jsonl")
	tx, err := Begin(anchor, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Begin(anchor, Options{})
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("second Begin: %v, want ErrLocked naming pid %d", err, os.Getpid())
	}
	got := make(chan error)
	go func() {
		tx2, err := Begin(anchor, Options{Wait: true})
		if err == nil {
			tx2.Abort()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("--wait did not wait: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	tx.Abort()
	if err := <-got; err != nil {
		t.Fatalf("waiting Begin: %v", err)
	}
}

// TestSideFilesLocked: a side file named apart from the
// outputs (--metrics, --rejects, ...) is locked as an output is: a second
// run that shares one, whatever its own outputs, fails naming it or
// waits; the lock files go with the run. Two runs each taking the
// other's output as a side file, both waiting, take the locks in one
// order and both finish.
func TestSideFilesLocked(t *testing.T) {
	root := t.TempDir()
	a, b, m := filepath.Join(root, "a.jsonl"), filepath.Join(root, "b.jsonl"), filepath.Join(root, "m.json")
	tx, err := Begin(a, Options{Also: []string{m, a}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Begin(b, Options{Also: []string{m}})
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), m+": ") {
		t.Fatalf("a second run sharing %s: %v, want ErrLocked naming it", m, err)
	}
	if _, err := os.Stat(LockPath(b)); !os.IsNotExist(err) {
		t.Fatalf("the refused run kept its own lock: %v", err)
	}
	if _, err := Share(b, false, m); !errors.Is(err, ErrLocked) {
		t.Fatalf("a shard sharing %s: %v, want ErrLocked", m, err)
	}
	tx.Abort()
	for _, p := range []string{a, m} {
		if _, err := os.Stat(LockPath(p)); !os.IsNotExist(err) {
			t.Errorf("lock of %s left behind: %v", p, err)
		}
	}
	tx2, err := Begin(b, Options{Also: []string{m}})
	if err != nil {
		t.Fatal(err)
	}
	tx2.Abort()

	done := make(chan error, 2)
	for i := 0; i < 50; i++ {
		go func() {
			tx, err := Begin(a, Options{Wait: true, Also: []string{b}})
			if err == nil {
				tx.Abort()
			}
			done <- err
		}()
		go func() {
			tx, err := Begin(b, Options{Wait: true, Also: []string{a}})
			if err == nil {
				tx.Abort()
			}
			done <- err
		}()
		for range 2 {
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("two waiting runs, each with the other's output as a side file, wait for each other")
			}
		}
	}
}

// TestLockAcrossProcesses: the lock is a real file lock, seen by another
// process (flock from util-linux, when installed).
func TestLockAcrossProcesses(t *testing.T) {
	flock, err := exec.LookPath("flock")
	if err != nil {
		t.Skip("flock(1) not installed: the in-process TestLock covers the same lock")
	}
	root := t.TempDir()
	anchor := filepath.Join(root, "out.jsonl")
	tx, err := Begin(anchor, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := exec.Command(flock, "-n", LockPath(anchor), "true").Run(); err == nil {
		t.Fatal("another process took the lock while a run held it")
	}
	tx.Abort()
	if out, err := exec.Command(flock, "-n", LockPath(anchor), "true").CombinedOutput(); err != nil {
		t.Fatalf("lock not released: %v %s", err, out)
	}
}

func TestDirectOutputs(t *testing.T) {
	root := t.TempDir()
	fifo := filepath.Join(root, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	tx, err := Begin(filepath.Join(root, "out.jsonl"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Abort()
	for _, p := range []string{"-", "/dev/null", fifo} {
		got, kind, err := tx.File(p)
		if err != nil || kind != Direct || got != p {
			t.Errorf("%s: %s %v %v, want itself, Direct", p, got, kind, err)
		}
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", fi.Mode(), err)
	}
	dir := filepath.Join(root, "d")
	os.Mkdir(dir, 0o755)
	if _, _, err := tx.File(dir); err == nil {
		t.Errorf("a directory accepted as a file output")
	}
}

// TestSymlinkWritesThrough: a symlink output replaces the file it points
// to (in that file's directory); the link stays a link.
func TestSymlinkWritesThrough(t *testing.T) {
	root := t.TempDir()
	other := filepath.Join(root, "elsewhere")
	os.Mkdir(other, 0o755)
	real := filepath.Join(other, "real.jsonl")
	os.WriteFile(real, []byte("old\n"), 0o644)
	link := filepath.Join(root, "out.jsonl")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	tx, err := Begin(link, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, _, err := tx.File(link)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(p) != other {
		t.Errorf("staged in %s, want the target's directory %s", filepath.Dir(p), other)
	}
	os.WriteFile(p, []byte("new\n"), 0o644)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced by a file")
	}
	if b, _ := os.ReadFile(link); string(b) != "new\n" {
		t.Fatalf("through the link: %q", b)
	}
}

// TestCleansOnlyOurs: a killed run's staged files are removed by the next
// run on the same output, and nothing else is, even when it looks close.
func TestCleansOnlyOurs(t *testing.T) {
	root := t.TempDir()
	out := filepath.Join(root, "a.jsonl")
	ours := []string{".a.jsonl.tc-0123456789abcdef.tmp", ".a.jsonl.tc-fedcba9876543210.old", ".a.jsonl.tmp-123", ".a.jsonl.partial", "..a.jsonl.tc-0123456789abcdef.tmp.tmp-42"}
	notOurs := []string{".a.jsonl.tc-0123.tmp", ".b.jsonl.tc-0123456789abcdef.tmp", "a.jsonl.tc-0123456789abcdef.tmp", ".a.jsonl.tc-0123456789abcdeg.tmp", ".a.jsonl.tmp-12x", "a.jsonl.partial", ".a.jsonl.tmp-", "..a.jsonl.tmp-1", "..b.jsonl.tc-0123456789abcdef.tmp.tmp-42"}
	for _, n := range append(ours, notOurs...) {
		os.WriteFile(filepath.Join(root, n), nil, 0o644)
	}
	tx, err := Begin(out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := tx.File(out); err != nil {
		t.Fatal(err)
	}
	tx.Abort()
	for _, n := range ours {
		if _, err := os.Stat(filepath.Join(root, n)); err == nil {
			t.Errorf("%s was left", n)
		}
	}
	for _, n := range notOurs {
		if _, err := os.Stat(filepath.Join(root, n)); err != nil {
			t.Errorf("%s was removed", n)
		}
	}
}

func TestDamagedJournalRefused(t *testing.T) {
	root := t.TempDir()
	anchor := filepath.Join(root, "out.jsonl")
	os.WriteFile(JournalPath(anchor), []byte("F /x\t/y\nend 00\n"), 0o644)
	if _, err := Begin(anchor, Options{}); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("Begin with a damaged journal: %v", err)
	}
}

// TestSharedLock: shared holders coexist; an exclusive Begin fails while
// one holds it, and succeeds (removing the lock file) once all let go; a
// shared lock fails while the exclusive one is held.
func TestSharedLock(t *testing.T) {
	anchor := filepath.Join(t.TempDir(), "out")
	a, err := Share(anchor, false)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Share(anchor, false)
	if err != nil {
		t.Fatalf("second shared lock: %v", err)
	}
	if _, err := Begin(anchor, Options{}); !errors.Is(err, ErrLocked) {
		t.Fatalf("Begin while shared: %v", err)
	}
	a.Release()
	b.Release()
	tx, err := Begin(anchor, Options{})
	if err != nil {
		t.Fatalf("Begin after release: %v", err)
	}
	if _, err := Share(anchor, false); !errors.Is(err, ErrLocked) {
		t.Fatalf("Share while exclusive: %v", err)
	}
	tx.Abort()
	if _, err := os.Stat(LockPath(anchor)); !os.IsNotExist(err) {
		t.Fatalf("lock file left: %v", err)
	}
	c, err := Share(anchor, false)
	if err != nil {
		t.Fatal(err)
	}
	c.Release()
}

// TestRemoveAfter: a directory the commit removes goes when the outputs
// are in place — by the commit, or by the recovery of a commit killed
// after its commit point — and stays when the commit fails before it.
func TestRemoveAfter(t *testing.T) {
	for _, tc := range []struct {
		failAt string
		kept   bool
	}{{"", false}, {"sync journal", true}, {"rename journal", false}} {
		root := t.TempDir()
		anchor := filepath.Join(root, "out")
		scratch := filepath.Join(root, ".scratch")
		os.MkdirAll(filepath.Join(scratch, "x"), 0o755)
		tx, err := Begin(anchor, Options{Fault: func(s string) error {
			if s == tc.failAt {
				return errors.New("injected")
			}
			return nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		p, _, _ := tx.File(anchor)
		os.WriteFile(p, []byte("new"), 0o644)
		tx.RemoveAfter(scratch)
		err = tx.Commit()
		if tc.failAt == "rename journal" {
			// A failure right after the commit point is rolled back in a
			// live process; a kill there is rolled forward: write the
			// journal by hand as a killed run leaves it.
			tx2, _ := Begin(anchor, Options{})
			p2, _, _ := tx2.File(anchor)
			os.WriteFile(p2, []byte("new2"), 0o644)
			tx2.RemoveAfter(scratch)
			tx2.syncAndJournal(t)
			tx2.release()
			if _, err := Recover(anchor); err != nil {
				t.Fatal(err)
			}
		}
		_, serr := os.Stat(scratch)
		if kept := serr == nil; kept != tc.kept {
			t.Errorf("fail at %q (err %v): scratch kept %v, want %v", tc.failAt, err, kept, tc.kept)
		}
	}
}

// syncAndJournal does a commit's first two steps and stops there, as a
// process killed right after its commit point would.
func (t *Tx) syncAndJournal(tb testing.TB) {
	for _, e := range t.entries {
		if err := syncTree(e.staged, e.dir); err != nil {
			tb.Fatal(err)
		}
	}
	if err := t.writeJournal(); err != nil {
		tb.Fatal(err)
	}
}
