package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/trajcompress/trajcompress/internal/readfile"
)

// TestBadNumbersAreUsageErrors: a price that is NaN, infinite or negative
// and a shard count below 1 or a negative shard index are usage errors
// (exit 2) that write nothing, not even a run directory. A NaN price was
// written into the run manifest, whose JSON then failed (a 1-byte file)
// and broke every later run on the same output.
func TestBadNumbersAreUsageErrors(t *testing.T) {
	t.Parallel()
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
			if names := dirNames(dir); names != "in.jsonl" {
				t.Errorf("written: %s", names)
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
// goroutine dump). The limits are lowered to kilobytes for the test (the
// real ones would read 784 MB of zeros); readfile's tests pin their values.
// Not parallel: the limits are process-wide, and a test running beside it
// would read its files under them (a tokenizer.json over 64 KiB refused).
func TestWholeFilesAreSizeChecked(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	small, metricsLimit, tok := readfile.SmallLimit, readfile.MetricsLimit, readfile.TokenizerLimit
	readfile.SmallLimit, readfile.MetricsLimit, readfile.TokenizerLimit = 16<<10, 32<<10, 64<<10
	t.Cleanup(func() { readfile.SmallLimit, readfile.MetricsLimit, readfile.TokenizerLimit = small, metricsLimit, tok })
	dir, in := smallInput(t)
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"compress", "--quiet", "--input", in, "--config", "/dev/zero"}, "/dev/zero: more than 16 KiB, over the limit of 16 KiB for a config file"},
		{[]string{"compress", "--quiet", "--input", in, "--tokenizer", "/dev/zero"}, "/dev/zero: more than 64 KiB, over the limit of 64 KiB for a tokenizer file"},
		{[]string{"check", "--baseline", "/dev/zero", "/dev/zero"}, "over the limit of 32 KiB for a metrics file"},
		{[]string{"report", "--output", filepath.Join(dir, "r.html"), "/dev/zero"}, "/dev/zero: more than 32 KiB, over the limit of 32 KiB for a metrics file"},
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
	t.Parallel()
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
	t.Parallel()
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

// TestUnwritableSideFilesFailFirst: an --outcomes, --report, --metrics or
// --output path that cannot be written (under a file, in /proc) is a
// usage error naming it before any work: nothing is written, no run
// directory is left. Before, the run did all its work and failed at the
// end (exit 1), keeping its tasks.
func TestUnwritableSideFilesFailFirst(t *testing.T) {
	t.Parallel()
	bad := []struct{ flag, path string }{
		{"--outcomes", "in.jsonl/o.jsonl"},
		{"--report", "in.jsonl/sub/r.html"},
		{"--metrics", "in.jsonl/m.json"},
		{"--rejects", "in.jsonl/r.jsonl"},
		{"--output", "in.jsonl/out.jsonl"},
	}
	if _, err := os.Stat("/proc/version"); err == nil {
		bad = append(bad, struct{ flag, path string }{"--outcomes", "/proc/version"}, struct{ flag, path string }{"--report", "/proc/r.html"})
	}
	for _, c := range bad {
		t.Run(c.flag+" "+c.path, func(t *testing.T) {
			dir, in := smallInput(t)
			path := c.path
			if !filepath.IsAbs(path) {
				path = filepath.Join(dir, path)
			}
			var stderr bytes.Buffer
			code := run(context.Background(), []string{"compress", "--quiet", "--input", in, c.flag, path}, nil, io.Discard, &stderr)
			if code != exitUsage || !strings.Contains(stderr.String(), c.flag+" "+path) {
				t.Fatalf("exit %d, want %d; stderr %q", code, exitUsage, stderr.String())
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 1 {
				t.Errorf("%d entries written before the refusal", len(ents)-1)
			}
		})
	}
}

// TestUnreadableInputIsUsage: an input file that cannot be opened is exit
// 2 (as -h says), before any work, and so is a directory input with an
// unreadable subdirectory; before, the run failed (exit 1) when the
// file's task came. Root reads any file, so as root the check runs in a
// child process of this test binary as user nobody.
func TestUnreadableInputIsUsage(t *testing.T) {
	t.Parallel()
	if os.Getenv("TC_UNREADABLE_CHILD") != "" {
		t.Skip("child process")
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o777)
	os.Chmod(filepath.Dir(dir), 0o755)
	in := filepath.Join(dir, "in.jsonl")
	os.WriteFile(in, []byte(`{"conversations":[{"from":"human","value":"hi"}]}`+"\n"), 0o000)
	sub := filepath.Join(dir, "runs", "locked")
	os.MkdirAll(sub, 0o755)
	os.WriteFile(filepath.Join(dir, "runs", "a.jsonl"), []byte(`{"conversations":[{"from":"human","value":"hi"}]}`+"\n"), 0o644)
	os.Chmod(sub, 0o000)
	os.Chmod(filepath.Join(dir, "runs"), 0o777)
	if os.Geteuid() != 0 {
		checkUnreadable(t, dir)
		return
	}
	// As root: the same, in a copy of this binary run as nobody.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	child := filepath.Join(dir, "child.test")
	if err := os.WriteFile(child, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(child, "-test.run=^TestUnreadableInputChild$", "-test.v")
	cmd.Env = append(os.Environ(), "TC_UNREADABLE_CHILD="+dir, "HOME="+dir, "XDG_CACHE_HOME="+dir)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestUnreadableInputChild") {
		t.Fatalf("child as nobody: %v\n%s", err, out)
	}
}

// TestUnreadableInputChild is TestUnreadableInputIsUsage's check, run as
// nobody when the test runs as root.
func TestUnreadableInputChild(t *testing.T) {
	t.Parallel()
	dir := os.Getenv("TC_UNREADABLE_CHILD")
	if dir == "" {
		t.Skip("run by TestUnreadableInputIsUsage")
	}
	checkUnreadable(t, dir)
}

func checkUnreadable(t *testing.T, dir string) {
	for _, input := range []string{filepath.Join(dir, "in.jsonl"), filepath.Join(dir, "runs")} {
		var stderr bytes.Buffer
		code := run(context.Background(), []string{"compress", "--quiet", "--input", input}, nil, io.Discard, &stderr)
		if code != exitUsage || !strings.Contains(stderr.String(), "permission denied") {
			t.Errorf("%s: exit %d, want %d; stderr %q", input, code, exitUsage, stderr.String())
		}
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), "compressed") || strings.Contains(e.Name(), ".tc-") {
			t.Errorf("written: %s", e.Name())
		}
	}
}

// TestValidateDirectory: validate takes a directory, walked as compress
// walks it (subdirectories too, hidden files left out); before, a
// directory was "is a directory" (exit 2).
func TestValidateDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := `{"conversations":[{"from":"human","value":"hi"},{"from":"gpt","value":"yo"}]}` + "\n"
	bad := `{"conversations":[{"from":"gpt","value":"yo"},{"from":"human","value":"hi"}]}` + "\n"
	os.MkdirAll(filepath.Join(dir, "data", "train"), 0o755)
	os.MkdirAll(filepath.Join(dir, ".cache"), 0o755)
	os.WriteFile(filepath.Join(dir, "a.jsonl"), []byte(good+good), 0o644)
	os.WriteFile(filepath.Join(dir, "data", "train", "b.jsonl"), []byte(good+bad), 0o644)
	os.WriteFile(filepath.Join(dir, ".cache", "c.jsonl"), []byte(bad), 0o644)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"validate", "--dialect", "llamafactory", dir}, nil, &stdout, &stderr)
	if code != exitError || !strings.Contains(stderr.String(), "4 records: 3 accepted, 1 would be rejected") ||
		!strings.Contains(stdout.String(), filepath.Join(dir, "data", "train", "b.jsonl")+":2:") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout.String(), stderr.String())
	}
	stderr.Reset()
	if code := run(context.Background(), []string{"validate", "--dialect", "llamafactory", "--no-recursive", dir}, nil, io.Discard, &stderr); code != exitOK || !strings.Contains(stderr.String(), "2 records: 2 accepted") {
		t.Fatalf("--no-recursive: exit %d: %s", code, stderr.String())
	}
}
