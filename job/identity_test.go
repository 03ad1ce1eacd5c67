package job

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/task"
)

// replaceSameSize puts another file of the same size and modification
// time at path by a rename (mv): the lines of the original in reverse
// order, so that tasks of the two files put together would duplicate some
// records and lose others.
func replaceSameSize(t testing.TB, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	slices.Reverse(lines)
	fi, _ := os.Stat(path)
	tmp := path + ".new"
	if err := os.WriteFile(tmp, bytes.Join(lines, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(tmp, fi.ModTime(), fi.ModTime())
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// multiTaskRun is a JSONL input of several tasks under a temporary base,
// and the spec of a run of it whose outputs go under root.
func multiTaskRun(t *testing.T) (base, in, root string, spec Spec) {
	base = t.TempDir()
	in = resumeInput(t, resumeLayouts[0], filepath.Join(base, "in"))
	root = filepath.Join(base, "run")
	os.MkdirAll(root, 0o755)
	return base, in, root, resumeSpec(in, root, false, 1)
}

// withTaskHook sets taskHook for the test: f is called once, at the first
// call with task index i and at.
func withTaskHook(t *testing.T, i int, at string, f func()) {
	done := false
	taskHook = func(tk task.Task, when string) {
		if !done && tk.Index == i && when == at {
			done = true
			f()
		}
	}
	t.Cleanup(func() { taskHook = nil })
}

// TestInputReplacedBetweenTasks: an input replaced by another
// of the same size (and modification time) between two tasks of a run gave
// exit 0 and an output of tasks of both files. The next task finds its
// input is not the file the run planned with and fails, naming it;
// nothing is put in place; a resume finds the tasks done were read from
// another file and is refused, naming it; --overwrite starts afresh.
func TestInputReplacedBetweenTasks(t *testing.T) {
	base, in, root, spec := multiTaskRun(t)
	withTaskHook(t, 0, "committed", func() { replaceSameSize(t, in) })
	res, err := Run(context.Background(), spec)
	var kept KeptError
	if err == nil || !strings.Contains(err.Error(), "input "+in+" changed during the run (when task 1 started): it is another file") || !errors.As(err, &kept) || kept.Done != 1 {
		t.Fatalf("input replaced after task 0: %v (result %v)", err, res != nil)
	}
	if _, err := os.Stat(spec.Output); err == nil {
		t.Fatal("an output was put in place")
	}
	taskHook = nil
	_, err = Run(context.Background(), spec)
	if err == nil || !strings.Contains(err.Error(), "input "+in+" changed since task 0 of the unfinished run") || !strings.Contains(err.Error(), "--overwrite") {
		t.Fatalf("resume: %v", err)
	}
	if _, err := os.Stat(spec.Output); err == nil {
		t.Fatal("the resume put an output in place")
	}
	spec.Overwrite = true
	if _, err := Run(context.Background(), spec); err != nil {
		t.Fatalf("--overwrite: %v", err)
	}
	ref := filepath.Join(base, "ref")
	os.MkdirAll(ref, 0o755)
	if _, err := Run(context.Background(), resumeSpec(in, ref, false, 1)); err != nil {
		t.Fatal(err)
	}
	if d := diffSnapshots(snapshot(t, ref), snapshot(t, root)); d != "" {
		t.Fatalf("--overwrite after the replacement: not one file's output: %s", d)
	}
}

// TestInputReplacedDuringTask: an input replaced while a task reads it
// fails that task before it commits (the end check), naming the file.
func TestInputReplacedDuringTask(t *testing.T) {
	_, in, root, spec := multiTaskRun(t)
	withTaskHook(t, 1, "read", func() { replaceSameSize(t, in) })
	_, err := Run(context.Background(), spec)
	if err == nil || !strings.Contains(err.Error(), "input "+in+" changed during the run (when task 1 ended): it is another file") {
		t.Fatalf("input replaced during task 1: %v", err)
	}
	if n := countMarkers(root); n != 1 {
		t.Fatalf("%d tasks committed, want 1 (task 1 must not commit)", n)
	}
	if _, err := os.Stat(spec.Output); err == nil {
		t.Fatal("an output was put in place")
	}
}
