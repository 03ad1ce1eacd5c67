package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// flipDigitIn changes the first digit 1-8 from the middle of the file at
// path on to the next digit: the same length, still JSON, another
// record. It returns the offset changed.
func flipDigitIn(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(b) / 2; i < len(b); i++ {
		if b[i] >= '1' && b[i] <= '8' {
			b[i]++
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			return i
		}
	}
	t.Fatalf("%s: no digit in its second half", path)
	return -1
}

// TestTamperedSegmentNeverReused: a byte of a finished task's segment
// changed without changing its length (a hostile user, or a network file
// system under shards) made the resumed run's output differ from an
// uninterrupted run's while check said ok: the marker's hash was never
// compared, and the output was vouched for as it was. Now the merge
// refuses (exit 1), naming the task, the shard and what differs, and
// puts nothing in place; a run of every task resumed on the same
// directory runs that task again, saying so, and writes an uninterrupted
// run's outputs, which check vouches for; and check refuses an output
// changed in one byte after the run.
func TestTamperedSegmentNeverReused(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	runs := filepath.Join(tmp, "runs")
	shardInput(t, runs)
	small := []string{"--target-task-size", "1MiB"}
	ref := filepath.Join(tmp, "ref")
	if code := run(context.Background(), append([]string{"compress", "--quiet", "--input", runs, "--output", ref}, small...), nil, io.Discard, io.Discard); code != exitOK && code != exitPartial {
		t.Fatalf("single process: exit %d", code)
	}
	want := outputsOf(t, ref)
	out := filepath.Join(tmp, "out")
	for _, i := range []string{"0", "1"} {
		var stderr bytes.Buffer
		if code := run(context.Background(), append([]string{"compress", "--quiet", "--input", runs, "--output", out, "--shard", i, "--num-shards", "2"}, small...), nil, io.Discard, &stderr); code != exitOK && code != exitPartial {
			t.Fatalf("shard %s: exit %d: %s", i, code, stderr.String())
		}
	}
	seg := filepath.Join(tmp, ".out.tc-run", "seg", "t000001.out.jsonl")
	flipDigitIn(t, seg)

	var stderr bytes.Buffer
	code := run(context.Background(), []string{"merge", "--output", out}, nil, io.Discard, &stderr)
	if code != exitError || !regexp.MustCompile(`task 1 \(a\.jsonl, part 2 of \d+\), done by shard 1 of 2 \(--shard 1 --num-shards 2\): segment t000001\.out\.jsonl bytes \[0, \d+\) have xxh3-128 [0-9a-f]{32}, its marker recorded [0-9a-f]{32}`).MatchString(stderr.String()) {
		t.Fatalf("merge of a changed segment: exit %d, want %d naming the task, its shard and the hashes:\n%s", code, exitError, stderr.String())
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("the refused merge put outputs in place")
	}
	t.Logf("merge: exit %d: %s", code, stderr.String())

	stderr.Reset()
	code = run(context.Background(), append([]string{"compress", "--input", runs, "--output", out}, small...), nil, io.Discard, &stderr)
	if code != exitOK && code != exitPartial {
		t.Fatalf("resume: exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "task 1 (a.jsonl, part 2 of") || !strings.Contains(stderr.String(), "is run again: segment t000001.out.jsonl") {
		t.Errorf("the resume did not say it ran task 1 again, and why:\n%s", stderr.String())
	}
	sameOutputs(t, "resumed over a changed segment", want, outputsOf(t, out))
	metrics := filepath.Join(out, "compression_metrics.json")
	check := func() (int, string) {
		var stderr bytes.Buffer
		code := run(context.Background(), []string{"check", "--baseline", metrics, metrics}, nil, io.Discard, &stderr)
		return code, stderr.String()
	}
	if code, msg := check(); code != exitOK {
		t.Fatalf("check of the resumed run: exit %d: %s", code, msg)
	}
	flipDigitIn(t, filepath.Join(out, "a.jsonl"))
	if code, msg := check(); code != exitUsage || !strings.Contains(msg, "not the outputs of that run") {
		t.Fatalf("check after one byte of an output changed (same length): exit %d: %s", code, msg)
	}
}
