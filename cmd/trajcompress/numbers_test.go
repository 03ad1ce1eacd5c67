package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadNumbersAreUsageErrors: a price that is NaN, infinite or negative
// and a shard count below 1 or a negative shard index are usage errors
// (exit 2) that write nothing, not even a run directory. A NaN price was
// written into the run manifest, whose JSON then failed (a 1-byte file)
// and broke every later run on the same output.
func TestBadNumbersAreUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--price-in", "NaN"}, "--price-in"},
		{[]string{"--price-out", "NaN"}, "--price-out"},
		{[]string{"--price-in", "Inf"}, "--price-in"},
		{[]string{"--price-out", "+Inf"}, "--price-out"},
		{[]string{"--price-in", "-1"}, "--price-in"},
		{[]string{"--num-shards", "0"}, "--num-shards"},
		{[]string{"--num-shards", "-2"}, "--num-shards"},
		{[]string{"--shard", "-1", "--num-shards", "2"}, "--shard"},
		{[]string{"--shard", "-3"}, "--shard"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			dir, in := smallInput(t)
			var stderr bytes.Buffer
			args := append([]string{"compress", "--quiet", "--input", in}, c.args...)
			if code := run(context.Background(), args, nil, io.Discard, &stderr); code != exitUsage || !strings.Contains(stderr.String(), c.msg) {
				t.Fatalf("exit %d, want %d; stderr %q, want %q", code, exitUsage, stderr.String(), c.msg)
			}
			ents, _ := os.ReadDir(dir)
			if len(ents) != 1 {
				var names []string
				for _, e := range ents {
					names = append(names, e.Name())
				}
				t.Errorf("written: %v", names)
			}
		})
	}
	// The prices that are fine still are.
	_, in := smallInput(t)
	if code := run(context.Background(), []string{"compress", "--quiet", "--input", in, "--price-in", "0.15", "--price-out", "0"}, nil, io.Discard, io.Discard); code != exitOK {
		t.Fatalf("good prices: exit %d", code)
	}
}

// TestWholeFilesAreSizeChecked: a file read whole (config, tokenizer,
// metrics, baseline) that is /dev/zero is a usage error naming it and the
// limit; before, it was read until memory ran out (a crash with a
// goroutine dump).
func TestWholeFilesAreSizeChecked(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	dir, in := smallInput(t)
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"compress", "--quiet", "--input", in, "--config", "/dev/zero"}, "/dev/zero: more than 16 MiB, over the limit of 16 MiB for a config file"},
		{[]string{"compress", "--quiet", "--input", in, "--tokenizer", "/dev/zero"}, "/dev/zero: more than 256 MiB, over the limit of 256 MiB for a tokenizer file"},
		{[]string{"check", "--baseline", "/dev/zero", "/dev/zero"}, "over the limit of 256 MiB for a metrics file"},
		{[]string{"report", "--output", filepath.Join(dir, "r.html"), "/dev/zero"}, "/dev/zero: more than 256 MiB, over the limit of 256 MiB for a metrics file"},
	} {
		var stderr bytes.Buffer
		if code := run(context.Background(), c.args, nil, io.Discard, &stderr); code != exitUsage || !strings.Contains(stderr.String(), c.msg) {
			t.Errorf("%v: exit %d, want %d; stderr %q, want %q", c.args, code, exitUsage, stderr.String(), c.msg)
		}
	}
}

// TestMaxRecordBytes: a record longer than --max-record-bytes is rejected
// (record_too_large) with its line and size, the others are compressed,
// and the run is partial (exit 3). Before, every line was read whole,
// whatever its size (a 300 MB line took 1.95 GB).
func TestMaxRecordBytes(t *testing.T) {
	dir, in := smallInput(t)
	long := `{"conversations":[{"from":"human","value":"` + strings.Repeat("y", 5000) + `"}]}`
	b, _ := os.ReadFile(in)
	lines := strings.SplitAfter(string(b), "\n")
	os.WriteFile(in, []byte(lines[0]+long+"\n"+lines[1]), 0o644)
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"compress", "--quiet", "--input", in, "--max-record-bytes", "1KiB"}, nil, io.Discard, &stderr)
	if code != exitPartial {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	rej, _ := os.ReadFile(filepath.Join(dir, "in_compressed_rejects.jsonl"))
	want := fmt.Sprintf(`"line":2,"reason":"record_too_large","detail":"the record is %d bytes, over the limit of 1024 (--max-record-bytes)`, len(long))
	if !strings.Contains(string(rej), want) || strings.Contains(string(rej), "yyyy") {
		t.Errorf("rejects: %s\nwant %s", rej, want)
	}
	out, _ := os.ReadFile(filepath.Join(dir, "in_compressed.jsonl"))
	if string(out) != lines[0]+lines[1] {
		t.Errorf("output: %s", out)
	}
	// The default takes it; a bad size is a usage error.
	if code := run(context.Background(), []string{"compress", "--quiet", "--input", in, "--overwrite"}, nil, io.Discard, io.Discard); code != exitOK {
		t.Errorf("default limit: exit %d", code)
	}
	if code := run(context.Background(), []string{"compress", "--quiet", "--input", in, "--max-record-bytes", "-5"}, nil, io.Discard, io.Discard); code != exitUsage {
		t.Errorf("--max-record-bytes -5: exit %d", code)
	}
}

// TestLongInputNames: an input whose name has 250 bytes (NAME_MAX is 255)
// runs to completion, as a file and inside a directory, with outcomes and
// a report, twice (the second run over the first's outputs), and leaves
// nothing of ours behind. The hidden names made of it (lock, journal, run
// directory, staged and temporary files) are cut with a hash, and so are
// the default output names that would pass 255 bytes; before, the run
// failed with "file name too long" from the lock file.
func TestLongInputNames(t *testing.T) {
	dir, in := smallInput(t)
	body, _ := os.ReadFile(in)
	os.Remove(in)
	name := strings.Repeat("n", 244) + ".jsonl"
	long := filepath.Join(dir, name)
	os.WriteFile(long, body, 0o644)
	sub := filepath.Join(dir, "runs")
	os.Mkdir(sub, 0o755)
	os.WriteFile(filepath.Join(sub, name), body, 0o644)
	for _, input := range []string{long, sub} {
		for i := range 2 {
			var stderr bytes.Buffer
			args := []string{"compress", "--quiet", "--input", input, "--outcomes", filepath.Join(dir, "o.jsonl"), "--report", filepath.Join(dir, "r.html")}
			if code := run(context.Background(), args, nil, io.Discard, &stderr); code != exitOK {
				t.Fatalf("%s, run %d: exit %d: %s", filepath.Base(input), i+1, code, stderr.String())
			}
		}
	}
	var names []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && p != dir {
			names = append(names, strings.TrimPrefix(p, dir+"/"))
		}
		return nil
	})
	for _, n := range names {
		if strings.Contains(n, ".tc-") || strings.Contains(n, ".tmp") {
			t.Errorf("left behind: %s", n)
		}
	}
	out := filepath.Join(dir, "runs_compressed", name)
	if b, err := os.ReadFile(out); err != nil || !bytes.Equal(b, body) {
		t.Errorf("directory output %v: %q", err, b)
	}
	if len(names) != 12 { // input, output, metrics, rejects, o.jsonl, r.html; runs/ and its file; runs_compressed/, its file and metrics; its rejects
		t.Errorf("%d files: %v", len(names), names)
	}
}
