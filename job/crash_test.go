package job

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/trajcompress/trajcompress/internal/crash"
)

// A panic in the run's goroutine (a bug of ours) is returned as a crash
// error naming the run directory, for the CLI to write the stack there;
// the run is aborted as any failed run is (its lock released, its finished
// tasks kept), so the next run goes on and writes what an uninterrupted
// run writes.
func TestPanicInRunIsCrashErrorWithRunDir(t *testing.T) {
	base, in, root, spec := multiTaskRun(t)
	withTaskHook(t, 1, "committed", func() { panic("hook") })
	_, err := Run(context.Background(), spec)
	ce := crash.As(err)
	if ce == nil || ce.Value != "hook" {
		t.Fatalf("err = %v, want a crash error", err)
	}
	if fi, statErr := os.Stat(ce.Dir); ce.Dir == "" || statErr != nil || !fi.IsDir() {
		t.Fatalf("crash error names run directory %q (%v)", ce.Dir, statErr)
	}
	if _, err := os.Stat(spec.Output); err == nil {
		t.Fatal("an output was put in place")
	}
	taskHook = nil
	if _, err := Run(context.Background(), spec); err != nil {
		t.Fatalf("resume after the crash: %v", err)
	}
	ref := filepath.Join(base, "ref")
	os.MkdirAll(ref, 0o755)
	if _, err := Run(context.Background(), resumeSpec(in, ref, false, 1)); err != nil {
		t.Fatal(err)
	}
	if d := diffSnapshots(snapshot(t, ref), snapshot(t, root)); d != "" {
		t.Fatalf("resumed after a crash: %s", d)
	}
}
