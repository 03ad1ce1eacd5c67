package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/internal/crash"
)

// A panic (a bug of ours) exits 1 with one line saying so and where the
// stack went, never 2, which the help documents as a usage mistake.
func TestPanicExitsOneWithStackFile(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	testHookDispatch = func([]string) { panic("hook") }
	t.Cleanup(func() { testHookDispatch = nil })
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"version"}, nil, io.Discard, &stderr)
	if code != exitError {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitError, &stderr)
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "trajcompress: internal error: hook (a bug in trajcompress: please report it") {
		t.Fatalf("stderr:\n%s", &stderr)
	}
	path, ok := strings.CutPrefix(lines[1], "trajcompress: stack trace written to ")
	if !ok || filepath.Dir(path) != tmp {
		t.Fatalf("stack line %q, want a file in %s", lines[1], tmp)
	}
	b, err := os.ReadFile(path)
	if err != nil || !bytes.Contains(b, []byte("panic: hook")) || !bytes.Contains(b, []byte("TestPanicExitsOneWithStackFile")) {
		t.Fatalf("stack file %s: %v\n%s", path, err, b)
	}
}

// A bad flag value prints its one-line error and where the help is, not
// the ~200 lines of help around it.
func TestBadFlagValueIsOneLine(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"compress", "--input", "x.jsonl", "--workers", "many"},
		{"compress", "--no-such-flag"},
		{"validate", "--max-length", "x", "f.jsonl"},
		{"fixtures", "--count", "-"},
	} {
		var stderr bytes.Buffer
		code := run(context.Background(), args, nil, io.Discard, &stderr)
		if code != exitUsage {
			t.Errorf("%q: exit %d, want %d", args, code, exitUsage)
		}
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		want := "run 'trajcompress " + args[0] + " -h' for help"
		if len(lines) != 2 || lines[1] != want || strings.Contains(stderr.String(), "Usage:") {
			t.Errorf("%q: stderr\n%s\nwant the flag's error, then %q", args, &stderr, want)
		}
	}
	// -h still prints the whole help, on stderr as before, and exits 0.
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"compress", "-h"}, nil, io.Discard, &stderr); code != exitOK || !strings.HasPrefix(stderr.String(), "Usage: trajcompress compress") || strings.Count(stderr.String(), "\n") < 50 {
		t.Fatalf("-h: exit %d, stderr %d lines", code, strings.Count(stderr.String(), "\n"))
	}
}

// A panic in a run's first task aborts the run, which removes its run
// directory (no task finished): the stack goes to the temporary directory
// instead of being lost.
func TestCrashStackFallsBackToTempDir(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	var stderr bytes.Buffer
	reportCrash(&crash.Error{Value: "boom", Stack: []byte("goroutine 1 [running]:"), Dir: filepath.Join(tmp, "removed-run-dir")}, &stderr)
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	path, ok := strings.CutPrefix(lines[len(lines)-1], "trajcompress: stack trace written to ")
	if !ok || filepath.Dir(path) != tmp {
		t.Fatalf("stderr:\n%s\nwant the stack written to %s", &stderr, tmp)
	}
	if b, err := os.ReadFile(path); err != nil || !bytes.Contains(b, []byte("panic: boom")) {
		t.Fatalf("%s: %q, %v", path, b, err)
	}
}
