package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/trajcompress/trajcompress/bench/mockllm/mock"
	"github.com/trajcompress/trajcompress/internal/commit"
)

func smallInput(t *testing.T) (dir, in string) {
	t.Helper()
	dir = t.TempDir()
	in = filepath.Join(dir, "in.jsonl")
	os.WriteFile(in, []byte(`{"conversations":[{"from":"human","value":"hi"}]}`+"\n"+`{"conversations":[{"from":"human","value":"yo"}]}`+"\n"), 0o644)
	return dir, in
}

// TestSecondRunLocked: while one run holds the output set, a second one
// fails at once with exit 2 and says why.
func TestSecondRunLocked(t *testing.T) {
	t.Parallel()
	dir, in := smallInput(t)
	out := filepath.Join(dir, "out.jsonl")
	tx, err := commit.Begin(out, commit.Options{}) // another run, in the middle of it
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"compress", "--quiet", "--input", in, "--output", out}, nil, io.Discard, &stderr)
	if code != exitUsage || !strings.Contains(stderr.String(), "another trajcompress run is writing these outputs") {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	tx.Abort()
	if code := run(context.Background(), []string{"compress", "--quiet", "--input", in, "--output", out}, nil, io.Discard, io.Discard); code != exitOK {
		t.Fatalf("after the other run ended: exit %d", code)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tc-") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// TestOutcomesToFIFO: a FIFO output is written in place, never replaced by
// a file.
func TestOutcomesToFIFO(t *testing.T) {
	t.Parallel()
	dir, in := smallInput(t)
	fifo := filepath.Join(dir, "outcomes.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	got := make(chan []byte)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- nil
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		got <- b
	}()
	code := run(context.Background(), []string{"compress", "--quiet", "--input", in, "--outcomes", fifo}, nil, io.Discard, io.Discard)
	// If the run never opened the FIFO, the reader still waits in open:
	// open it for writing once, so that the reader sees EOF, not a hang.
	if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		w.Close()
	}
	lines := <-got
	if code != exitOK || bytes.Count(lines, []byte("\n")) != 2 {
		t.Fatalf("exit %d, read %q", code, lines)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO was replaced: %v %v", fi.Mode(), err)
	}
}

// TestSymlinkOutputWritesThrough: an output that is a symlink replaces the
// file it points to; the link stays a link.
func TestSymlinkOutputWritesThrough(t *testing.T) {
	t.Parallel()
	dir, in := smallInput(t)
	elsewhere := filepath.Join(dir, "elsewhere")
	os.Mkdir(elsewhere, 0o755)
	target := filepath.Join(elsewhere, "real.jsonl")
	os.WriteFile(target, []byte("old\n"), 0o644)
	link := filepath.Join(dir, "out.jsonl")
	os.Symlink(target, link)
	if code := run(context.Background(), []string{"compress", "--quiet", "--input", in, "--output", link}, nil, io.Discard, io.Discard); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the symlink was replaced by a file")
	}
	if b, _ := os.ReadFile(target); !bytes.Contains(b, []byte(`"hi"`)) {
		t.Fatalf("target holds %q", b)
	}
}

// TestRecordsToDeviceRefused: record outputs must be files; the device is
// left alone.
func TestRecordsToDeviceRefused(t *testing.T) {
	t.Parallel()
	_, in := smallInput(t)
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"compress", "--quiet", "--input", in, "--output", "/dev/null", "--metrics", filepath.Join(t.TempDir(), "m.json")}, nil, io.Discard, &stderr)
	if code != exitUsage || !strings.Contains(stderr.String(), "not a regular file") {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if fi, err := os.Stat("/dev/null"); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("/dev/null is no longer a device: %v", err)
	}
}

// TestCheckRefusesOutputsThatDoNotMatch: the metrics vouch for the files
// of their run; check refuses them once an output was changed (or is
// missing), and --no-verify-outputs compares the figures alone.
func TestCheckRefusesOutputsThatDoNotMatch(t *testing.T) {
	t.Parallel()
	dir, in := smallInput(t)
	out := filepath.Join(dir, "out.jsonl")
	if code := run(context.Background(), []string{"compress", "--quiet", "--input", in, "--output", out}, nil, io.Discard, io.Discard); code != exitOK {
		t.Fatalf("compress: exit %d", code)
	}
	m := filepath.Join(dir, "out_metrics.json")
	check := func(extra ...string) (int, string) {
		var stderr bytes.Buffer
		args := append([]string{"check", "--baseline", m}, extra...)
		code := run(context.Background(), append(args, m), nil, io.Discard, &stderr)
		return code, stderr.String()
	}
	if code, msg := check(); code != exitOK {
		t.Fatalf("check of an untouched run: exit %d: %s", code, msg)
	}
	os.WriteFile(out, []byte(`{"conversations":[{"from":"human","value":"other"}]}`+"\n"), 0o644)
	if code, msg := check(); code != exitUsage || !strings.Contains(msg, "not the outputs of that run") {
		t.Fatalf("check after the output changed: exit %d: %s", code, msg)
	}
	if code, msg := check("--no-verify-outputs"); code != exitOK {
		t.Fatalf("--no-verify-outputs: exit %d: %s", code, msg)
	}
	os.Remove(out)
	if code, msg := check(); code != exitUsage || !strings.Contains(msg, "cannot be read") {
		t.Fatalf("check after the output was removed: exit %d: %s", code, msg)
	}
}

// TestInputFromStdin: --input - reads JSONL (here gzip) from standard
// input and writes the same records as the file would; it needs --output.
func TestInputFromStdin(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ex := filepath.Join(repoRoot(t), "fixtures", "example")
	gz, err := os.ReadFile(filepath.Join(ex, "agent_runs.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(ex, "trajectory_compression.yaml")
	fromStdin, fromFile := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	c1 := run(context.Background(), []string{"compress", "--quiet", "--input", "-", "--output", fromStdin, "--config", cfg}, bytes.NewReader(gz), io.Discard, io.Discard)
	c2 := run(context.Background(), []string{"compress", "--quiet", "--input", filepath.Join(ex, "agent_runs.jsonl.gz"), "--output", fromFile, "--config", cfg}, nil, io.Discard, io.Discard)
	a, _ := os.ReadFile(fromStdin)
	b, _ := os.ReadFile(fromFile)
	if c1 != c2 || len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatalf("stdin exit %d, %d bytes; file exit %d, %d bytes", c1, len(a), c2, len(b))
	}
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"compress", "--quiet", "--input", "-"}, bytes.NewReader(gz), io.Discard, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "--output") {
		t.Fatalf("without --output: exit %d: %s", code, stderr.String())
	}
}

// TestCheckRefusesDryRunAgainstRealRun: a dry run's metrics say so, and
// check does not compare them with a real run's.
func TestCheckRefusesDryRunAgainstRealRun(t *testing.T) {
	t.Parallel()
	dir, in := smallInput(t)
	real, dry := filepath.Join(dir, "real.json"), filepath.Join(dir, "dry.json")
	if code := run(context.Background(), []string{"compress", "--quiet", "--input", in, "--output", filepath.Join(dir, "o.jsonl"), "--metrics", real}, nil, io.Discard, io.Discard); code != exitOK {
		t.Fatalf("real run: exit %d", code)
	}
	if code := run(context.Background(), []string{"compress", "--quiet", "--dry-run", "--input", in, "--metrics", dry}, nil, io.Discard, io.Discard); code != exitOK {
		t.Fatalf("dry run: exit %d", code)
	}
	if b, _ := os.ReadFile(dry); !bytes.Contains(b, []byte(`"dry_run": true`)) {
		t.Fatalf("dry-run metrics do not say so")
	}
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"check", "--baseline", real, dry}, nil, io.Discard, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "run.dry_run") {
		t.Fatalf("check real vs dry: exit %d: %s", code, stderr.String())
	}
}

// TestMostlyRejectedIsExit4: a run whose records were all rejected (here
// OpenAI records read with --format sharegpt) exits 4, not 3 like one bad
// line among many, and says where the rejects are.
func TestMostlyRejectedIsExit4(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	os.WriteFile(in, []byte(strings.Repeat(`{"messages":[{"role":"user","content":"hi"}]}`+"\n", 4)), 0o644)
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"compress", "--quiet", "--input", in, "--format", "sharegpt"}, nil, io.Discard, &stderr)
	if code != exitRejected || !strings.Contains(stderr.String(), "4 of 4 records") || !strings.Contains(stderr.String(), "_rejects.jsonl") {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	os.WriteFile(in, []byte(strings.Repeat(`{"messages":[{"role":"user","content":"hi"}]}`+"\n", 4)+"not json\n"), 0o644)
	if code := run(context.Background(), []string{"compress", "--quiet", "--input", in}, nil, io.Discard, io.Discard); code != exitPartial {
		t.Fatalf("one bad line in five: exit %d, want %d", code, exitPartial)
	}
}

// TestExitCodesMatchHelp: the exit codes each command's --help promises,
// for the inputs that broke them: validate on a truncated gzip and check
// on an empty metrics file are "unreadable file" (2), and a role-less turn
// is rejected as that.
func TestExitCodesMatchHelp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gz, err := os.ReadFile(filepath.Join("..", "..", "fixtures", "example", "agent_runs.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	trunc := filepath.Join(dir, "trunc.jsonl.gz")
	os.WriteFile(trunc, gz[:3000], 0o644)
	empty := filepath.Join(dir, "empty.json")
	os.WriteFile(empty, nil, 0o644)
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"validate", "--dialect", "openai", trunc}, exitUsage, "trunc.jsonl.gz:2: unexpected EOF"},
		{[]string{"check", "--baseline", empty, empty}, exitUsage, "the file is empty"},
	} {
		var stderr bytes.Buffer
		if code := run(context.Background(), c.args, nil, io.Discard, &stderr); code != c.code || !strings.Contains(stderr.String(), c.msg) {
			t.Errorf("%v: exit %d, want %d; stderr %q, want %q", c.args, code, c.code, stderr.String(), c.msg)
		}
	}
	in := filepath.Join(dir, "norole.jsonl")
	os.WriteFile(in, []byte(`{"conversations":[{"value":"hi"},{"from":"gpt","value":"x"}]}`+"\n"), 0o644)
	if code := run(context.Background(), []string{"compress", "--quiet", "--input", in}, nil, io.Discard, io.Discard); code != exitRejected {
		t.Errorf("role-less turn: exit %d", code)
	}
	rej, _ := os.ReadFile(filepath.Join(dir, "norole_compressed_rejects.jsonl"))
	if !strings.Contains(string(rej), `"reason":"no_role"`) || !strings.Contains(string(rej), `conversations[0] has no \"from\"`) {
		t.Errorf("rejects: %s", rej)
	}
}

// TestStdoutNamesAreWrittenThrough: /dev/stdout (and /dev/fd/1,
// /proc/self/fd/1) given as a side file is written through the process's
// standard output — appended to the log the shell redirected it to — not
// replaced by a renamed file; as the record output it is refused, the log
// untouched.
func TestStdoutNamesAreWrittenThrough(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	mustRun(t, "fixtures", "--output", in, "--count", "5", "--seed", "1")
	for _, name := range []string{"/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"} {
		if _, err := os.Stat(name); err != nil {
			t.Logf("%s: %v: not on this system", name, err)
			continue
		}
		log := filepath.Join(dir, "log")
		os.WriteFile(log, []byte("PREVIOUS\n"), 0o644)
		f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		cmd := cliCmd(t, nil, "compress", "--quiet", "--input", in, "--output", filepath.Join(dir, "out.jsonl"), "--metrics", name)
		cmd.Stdout = f
		err = cmd.Run()
		f.Close()
		if code := cmd.ProcessState.ExitCode(); code != exitOK && code != exitPartial {
			t.Fatalf("--metrics %s: %v", name, err)
		}
		b, _ := os.ReadFile(log)
		if !bytes.HasPrefix(b, []byte("PREVIOUS\n{\n")) || !json.Valid(b[len("PREVIOUS\n"):]) {
			t.Errorf("--metrics %s: the log holds %.80q…; want PREVIOUS, then the metrics", name, b)
		}
		if fi, _ := os.Lstat(name); name == "/dev/stdout" && fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("/dev/stdout is no longer a link")
		}

		os.WriteFile(log, []byte("PREVIOUS\n"), 0o644)
		f, _ = os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0)
		cmd = cliCmd(t, nil, "compress", "--quiet", "--input", in, "--output", name, "--metrics", filepath.Join(dir, "m.json"))
		cmd.Stdout = f
		cmd.Run()
		f.Close()
		if code := cmd.ProcessState.ExitCode(); code != exitUsage {
			t.Errorf("--output %s: exit %d, want %d", name, code, exitUsage)
		}
		if b, _ := os.ReadFile(log); string(b) != "PREVIOUS\n" {
			t.Errorf("--output %s: the log holds %.80q", name, b)
		}
	}
}

// TestSharedSideFileLocked: two runs with outputs of their own
// but one --metrics (or --rejects) path both exited 0, and one run's
// metrics were lost. A side file is locked as an output is: while one run
// is under way (held in its first LLM request by a loopback server), a
// second that shares a side file with it fails at once with exit 2,
// naming the file; the first one's metrics are there when it ends.
func TestSharedSideFileLocked(t *testing.T) {
	root := repoRoot(t)
	dir, small := smallInput(t)
	started, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	srv := mock.New(mock.Config{})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(started); <-release })
		srv.ServeHTTP(w, r)
	}))
	defer hs.Close()
	cfgPath := filepath.Join(dir, "c.yaml")
	os.WriteFile(cfgPath, []byte("summarization:\n  method: llm\n  api_key_env: TRAJ_TEST_KEY\n  model: mock-model\n"), 0o644)
	t.Setenv("TRAJ_TEST_KEY", testKey)
	metrics, rejects := filepath.Join(dir, "shared_metrics.json"), filepath.Join(dir, "shared_rejects.jsonl")
	first := make(chan int)
	go func() {
		first <- run(context.Background(), []string{"compress", "--quiet", "--config", cfgPath,
			"--input", filepath.Join(root, "fixtures/cases/sharegpt_mixed/input.jsonl"), "--output", filepath.Join(dir, "a.jsonl"),
			"--metrics", metrics, "--rejects", rejects, "--cache-dir", t.TempDir(), "--base-url", hs.URL + "/v1",
			"--target-max-tokens", "1200", "--summary-target-tokens", "120"}, nil, io.Discard, io.Discard)
	}()
	select {
	case <-started:
	case code := <-first:
		t.Fatalf("the first run ended (exit %d) before sending a request", code)
	}
	for _, c := range []struct{ flag, path string }{{"--metrics", metrics}, {"--rejects", rejects}} {
		var stderr bytes.Buffer
		code := run(context.Background(), []string{"compress", "--quiet", "--input", small, "--output", filepath.Join(dir, "b.jsonl"), c.flag, c.path}, nil, io.Discard, &stderr)
		if code != exitUsage || !strings.Contains(stderr.String(), c.path+": another trajcompress run is writing these outputs") {
			close(release)
			<-first
			t.Fatalf("a second run sharing %s %s: exit %d: %s", c.flag, c.path, code, stderr.String())
		}
	}
	close(release)
	if code := <-first; code != exitOK && code != exitPartial {
		t.Fatalf("the first run: exit %d", code)
	}
	var m struct {
		Summarization struct {
			Model string `json:"model"`
		} `json:"summarization"`
	}
	if b, err := os.ReadFile(metrics); err != nil || json.Unmarshal(b, &m) != nil || m.Summarization.Model != "mock-model" {
		t.Fatalf("the first run's metrics: %v %+v", err, m)
	}
	if _, err := os.Stat(filepath.Join(dir, "b.jsonl")); err == nil {
		t.Error("a refused run wrote its output")
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tc-") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}
