package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/trajcompress/trajcompress/fixtures/gen"
)

// TestMain lets the tests run this test binary as the trajcompress
// command (TRAJCOMPRESS_TEST_CLI=1), for tests that need several
// processes at once. TRAJCOMPRESS_TEST_UMASK (octal) sets its umask,
// which is process-wide.
func TestMain(m *testing.M) {
	if os.Getenv("TRAJCOMPRESS_TEST_CLI") == "1" {
		if u, err := strconv.ParseUint(os.Getenv("TRAJCOMPRESS_TEST_UMASK"), 8, 32); err == nil {
			syscall.Umask(int(u))
		}
		main()
	}
	code := m.Run()
	if shardInputDir != "" {
		os.RemoveAll(shardInputDir)
	}
	os.Exit(code)
}

// cliCmd is the command line args run by this binary as trajcompress,
// with env added to the environment.
func cliCmd(t *testing.T, env []string, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(append(os.Environ(), "TRAJCOMPRESS_TEST_CLI=1"), env...)
	return cmd
}

// shardInput writes a directory of inputs that make many tasks at 1 MiB:
// a JSONL file of several MiB (split by byte range), a gzip one (whole)
// and a Parquet one in a subdirectory. The files are generated once per
// test binary (shardInputFiles) and copied into dir.
func shardInput(t *testing.T, dir string) {
	t.Helper()
	src, err := shardInputFiles()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
}

// shardInputFiles generates shardInput's files into a temporary directory
// the first time it is called, and returns that directory; TestMain
// removes it.
var shardInputFiles = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "trajcompress-shards-")
	if err != nil {
		return "", err
	}
	shardInputDir = dir
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		return "", err
	}
	var jl, gzb bytes.Buffer
	emit := func(w io.Writer) func([]byte) error {
		return func(line []byte) error { w.Write(line); _, err := w.Write([]byte("\n")); return err }
	}
	if err := gen.Generate(gen.Options{Count: 160, Seed: 21, MedianTokens: 3000, P99Tokens: 20000}, emit(&jl)); err != nil {
		return "", err
	}
	zw := gzip.NewWriter(&gzb)
	if err := gen.Generate(gen.Options{Count: 30, Seed: 22}, emit(zw)); err != nil {
		return "", err
	}
	if err := zw.Close(); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "a.jsonl"), jl.Bytes(), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "c.jsonl.gz"), gzb.Bytes(), 0o644); err != nil {
		return "", err
	}
	pq := filepath.Join(dir, "sub", "b.parquet")
	if code := run(context.Background(), []string{"fixtures", "--output", pq, "--format", "parquet", "--count", "40", "--seed", "23"}, nil, io.Discard, io.Discard); code != exitOK {
		return "", fmt.Errorf("fixtures: exit %d", code)
	}
	return dir, nil
})

// shardInputDir is the directory shardInputFiles made, if it did.
var shardInputDir string

// outputsOf reads what a run wrote for the output directory out: every
// file under it (the metrics without their processing times), and the
// rejects file beside it.
func outputsOf(t *testing.T, out string) map[string]string {
	t.Helper()
	got := map[string]string{}
	filepath.Walk(out, func(path string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(out, path)
		b, _ := os.ReadFile(path)
		if strings.HasSuffix(path, "compression_metrics.json") {
			// The rejects file is named after the output directory.
			b = bytes.ReplaceAll(withoutProcessing(t, b), []byte(`"../`+filepath.Base(out)+`_rejects.jsonl"`), []byte(`"../OUT_rejects.jsonl"`))
		}
		got[rel] = string(b)
		return nil
	})
	b, err := os.ReadFile(out + "_rejects.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	got["(rejects)"] = string(b)
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(out), "."+filepath.Base(out)+"*")); len(left) > 0 {
		got["(left over)"] = strings.Join(left, " ")
	}
	return got
}

func sameOutputs(t *testing.T, what string, want, got map[string]string) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s differs from the single process's (%d bytes, want %d)", what, k, len(got[k]), len(v))
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: %s is extra: %.200s", what, k, v)
		}
	}
}

// recipesDoc is the page that holds the Slurm and Kubernetes recipes.
const recipesDoc = "docs/shards.md"

// recipeBlocks returns the fenced code blocks of recipesDoc of the given
// language, in order.
func recipeBlocks(t *testing.T, lang string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), filepath.FromSlash(recipesDoc)))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	var cur *strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case cur == nil && line == "```"+lang:
			cur = &strings.Builder{}
		case cur != nil && line == "```":
			blocks = append(blocks, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(line + "\n")
		}
	}
	return blocks
}

// shardProc is one process of a sharded run: its environment and args.
type shardProc struct {
	env  []string
	args []string
}

// runShards starts every process at once, waits for all, then merges
// with mergeArgs (in this process).
func runShards(t *testing.T, procs []shardProc, mergeArgs []string) {
	t.Helper()
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for _, p := range procs {
		c := cliCmd(t, p.env, p.args...)
		var o bytes.Buffer
		c.Stdout, c.Stderr = &o, &o
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, c), append(outs, &o)
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitPartial {
				t.Fatalf("shard %d (%v): %v\n%s", i, procs[i].env, err, outs[i])
			}
		}
		if !strings.Contains(outs[i].String(), "When every shard is done: trajcompress merge --output") {
			t.Errorf("shard %d did not say how to merge:\n%s", i, outs[i])
		}
	}
	var stderr bytes.Buffer
	if code := run(context.Background(), mergeArgs, nil, io.Discard, &stderr); code != exitOK && code != exitPartial {
		t.Fatalf("merge: exit %d: %s", code, stderr.String())
	}
	// Idempotent: a second merge finds nothing to do.
	stderr.Reset()
	if code := run(context.Background(), mergeArgs, nil, io.Discard, &stderr); code != exitOK || !strings.Contains(stderr.String(), "nothing to merge") {
		t.Fatalf("second merge: exit %d: %s", code, stderr.String())
	}
}

// TestShardsUnderSchedulers runs the Slurm script and Kubernetes manifest
// of docs/shards.md as far as a machine without a cluster allows: every
// shard process at once, with exactly the environment the scheduler sets
// (and the task size made small, so that the small input makes many
// tasks), then the merge they name; AWS Batch and plain --shard too. The
// merged outputs and metrics must equal one process's. The schedulers
// run side by side, each into an output of its own.
//
// Under the race detector, Slurm's alone: the schedulers differ only in
// how a shard finds its index and count (start-up code, one goroutine),
// and what the detector can see — the pipeline each shard process runs,
// the merge — is the same for all four, at a quarter of the CPU; the
// plain run (no -race) runs all four.
func TestShardsUnderSchedulers(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	runs := filepath.Join(tmp, "runs")
	shardInput(t, runs)
	cfg := filepath.Join(tmp, "trajectory_compression.yaml")
	os.WriteFile(cfg, []byte("compression:\n  target_max_tokens: 4000\n"), 0o644)
	small := []string{"--target-task-size", "1MiB"}
	ref := filepath.Join(tmp, "ref")
	if code := run(context.Background(), append([]string{"compress", "--quiet", "--input", runs, "--output", ref, "--config", cfg}, small...), nil, io.Discard, io.Discard); code != exitOK && code != exitPartial {
		t.Fatalf("single process: exit %d", code)
	}
	want := outputsOf(t, ref)
	if len(want) < 4 {
		t.Fatalf("single process wrote %d files", len(want))
	}
	// What the recipes' commands name, here.
	paths := strings.NewReplacer("/shared/runs_compressed", "OUT", "/data/runs_compressed", "OUT",
		"/shared/trajectory_compression.yaml", cfg, "/data/trajectory_compression.yaml", cfg, "/shared/runs", runs, "/data/runs", runs)
	args := func(line, out string) []string {
		f := strings.Fields(paths.Replace(line))
		for i := range f {
			f[i] = strings.ReplaceAll(f[i], "OUT", out)
		}
		return f
	}

	// onlyPlain skips, under the race detector, a scheduler whose shards
	// run what Slurm's ran there.
	onlyPlain := func(t *testing.T) {
		if raceEnabled {
			t.Skip("race detector: the same pipeline and merge as slurm's shards; this scheduler runs in the plain run (no -race)")
		}
	}
	t.Run("slurm", func(t *testing.T) {
		t.Parallel()
		blocks := recipeBlocks(t, "sh")
		var script, merge string
		for _, b := range blocks {
			if strings.Contains(b, "#SBATCH --array=") {
				script = b
			} else if strings.Contains(b, "trajcompress merge") && script != "" && merge == "" {
				merge = b
			}
		}
		m := regexp.MustCompile(`#SBATCH --array=(\d+)-(\d+)`).FindStringSubmatch(script)
		if m == nil || merge == "" {
			t.Fatalf("%s: no sbatch --array script followed by a merge", recipesDoc)
		}
		var compressLine, mergeLine string
		for _, l := range strings.Split(script, "\n") {
			if strings.HasPrefix(l, "trajcompress compress ") {
				compressLine = strings.TrimPrefix(l, "trajcompress ")
			}
		}
		for _, l := range strings.Split(merge, "\n") {
			if strings.HasPrefix(l, "trajcompress merge ") {
				mergeLine = strings.TrimPrefix(l, "trajcompress ")
			}
		}
		lo, _ := strconv.Atoi(m[1])
		hi, _ := strconv.Atoi(m[2])
		// As written (0-7), and as an array from 1 (1-8: SLURM_ARRAY_TASK_MIN=1;
		// without -short only: the same shards again, a third of the test's CPU).
		firsts := []int{lo, lo + 1}
		if testing.Short() {
			firsts = firsts[:1]
		}
		for _, first := range firsts {
			out := filepath.Join(tmp, fmt.Sprintf("slurm%d", first))
			var procs []shardProc
			for id := first; id <= hi+first-lo; id++ {
				procs = append(procs, shardProc{
					env: []string{"SLURM_JOB_ID=" + strconv.Itoa(4300+id), "SLURM_ARRAY_JOB_ID=4242", "SLURM_ARRAY_TASK_ID=" + strconv.Itoa(id),
						"SLURM_ARRAY_TASK_COUNT=" + strconv.Itoa(hi-lo+1), "SLURM_ARRAY_TASK_MIN=" + strconv.Itoa(first),
						"SLURM_ARRAY_TASK_MAX=" + strconv.Itoa(hi+first-lo), "SLURM_ARRAY_TASK_STEP=1", "SLURM_CPUS_PER_TASK=2"},
					args: append(args(compressLine, out), small...),
				})
			}
			runShards(t, procs, args(mergeLine, out))
			sameOutputs(t, fmt.Sprintf("slurm --array=%d-%d", first, hi+first-lo), want, outputsOf(t, out))
		}
	})

	t.Run("kubernetes", func(t *testing.T) {
		t.Parallel()
		onlyPlain(t)
		blocks := recipeBlocks(t, "yaml")
		if len(blocks) == 0 {
			t.Fatalf("%s: no Kubernetes manifest", recipesDoc)
		}
		type job struct {
			Spec struct {
				CompletionMode string `yaml:"completionMode"`
				Completions    int    `yaml:"completions"`
				Template       struct {
					Spec struct {
						Containers []struct {
							Args []string `yaml:"args"`
						} `yaml:"containers"`
					} `yaml:"spec"`
				} `yaml:"template"`
			} `yaml:"spec"`
		}
		dec := yaml.NewDecoder(strings.NewReader(blocks[0]))
		var jobs []job
		for {
			var j job
			if err := dec.Decode(&j); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("%s manifest: %v", recipesDoc, err)
			}
			jobs = append(jobs, j)
		}
		if len(jobs) != 2 || jobs[0].Spec.CompletionMode != "Indexed" || jobs[0].Spec.Completions < 2 {
			t.Fatalf("%s manifest: want an Indexed Job and a merge Job, got %+v", recipesDoc, jobs)
		}
		out := filepath.Join(tmp, "k8s")
		line := func(a []string) string { return strings.Join(a, " ") }
		var procs []shardProc
		for i := range jobs[0].Spec.Completions {
			procs = append(procs, shardProc{env: []string{"JOB_COMPLETION_INDEX=" + strconv.Itoa(i)},
				args: append(args(line(jobs[0].Spec.Template.Spec.Containers[0].Args), out), small...)})
		}
		runShards(t, procs, args(line(jobs[1].Spec.Template.Spec.Containers[0].Args), out))
		sameOutputs(t, "kubernetes", want, outputsOf(t, out))
	})

	for _, tc := range []struct {
		name string
		env  func(i int) []string
		flag func(i int) []string
	}{
		{"aws-batch", func(i int) []string { return []string{"AWS_BATCH_JOB_ARRAY_INDEX=" + strconv.Itoa(i)} }, func(int) []string { return []string{"--num-shards", "3"} }},
		{"plain", func(int) []string { return nil }, func(i int) []string { return []string{"--shard", strconv.Itoa(i), "--num-shards", "3"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			onlyPlain(t)
			out := filepath.Join(tmp, tc.name)
			var procs []shardProc
			for i := range 3 {
				procs = append(procs, shardProc{env: tc.env(i),
					args: append(append([]string{"compress", "--quiet", "--input", runs, "--output", out, "--config", cfg}, small...), tc.flag(i)...)})
			}
			runShards(t, procs, []string{"merge", "--quiet", "--output", out})
			sameOutputs(t, tc.name, want, outputsOf(t, out))
		})
	}
}

// TestMergeRefusesWhileTasksAreMissing: a merge before every shard is
// done names the missing tasks and changes nothing; before any shard
// started, it says there is no run.
func TestMergeRefusesWhileTasksAreMissing(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	runs := filepath.Join(tmp, "runs")
	shardInput(t, runs)
	out := filepath.Join(tmp, "out")
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"merge", "--output", out}, nil, io.Discard, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "no run of this output to merge") {
		t.Fatalf("merge before the shards: exit %d: %s", code, stderr.String())
	}
	stderr.Reset()
	code := run(context.Background(), []string{"compress", "--quiet", "--input", runs, "--output", out, "--target-task-size", "1MiB", "--shard", "0", "--num-shards", "2"}, nil, io.Discard, &stderr)
	if code != exitOK && code != exitPartial {
		t.Fatalf("shard 0: exit %d: %s", code, stderr.String())
	}
	stderr.Reset()
	if code := run(context.Background(), []string{"merge", "--output", out}, nil, io.Discard, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "tasks are not done") || !strings.Contains(stderr.String(), "a.jsonl") {
		t.Fatalf("merge with shard 1 missing: exit %d: %s", code, stderr.String())
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("a merge with tasks missing put outputs in place")
	}
	code = run(context.Background(), []string{"compress", "--quiet", "--input", runs, "--output", out, "--target-task-size", "1MiB", "--shard", "1", "--num-shards", "2"}, nil, io.Discard, io.Discard)
	if code != exitOK && code != exitPartial {
		t.Fatalf("shard 1: exit %d", code)
	}
	stderr.Reset()
	if code := run(context.Background(), []string{"merge", "--quiet", "--output", out}, nil, io.Discard, &stderr); code != exitOK && code != exitPartial {
		t.Fatalf("merge: exit %d: %s", code, stderr.String())
	}
	var m map[string]any
	b, _ := os.ReadFile(filepath.Join(out, "compression_metrics.json"))
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("merged metrics: %v", err)
	}
}

// TestSignalsEndCleanly: SIGINT, SIGTERM and SIGHUP
// (an SSH session dropped, a terminal closed) end a run the same way:
// exit 130, nothing put in place, the finished tasks kept and said so; the
// next run on the output goes on from them and leaves nothing of ours.
func TestSignalsEndCleanly(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	runs := filepath.Join(tmp, "runs")
	shardInput(t, runs)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel() // each signal has its own output: the three runs wait on each other for nothing
			out := filepath.Join(tmp, "out-"+sig.String())
			cmd := cliCmd(t, nil, "compress", "--input", runs, "--output", out, "--target-task-size", "1MiB", "--workers", "1")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Signal it once its first task is done.
			tasks := filepath.Join(filepath.Dir(out), "."+filepath.Base(out)+".tc-run", "tasks")
			for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
				if ents, _ := os.ReadDir(tasks); len(ents) > 0 {
					break
				}
			}
			cmd.Process.Signal(sig)
			err := cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
				t.Fatalf("%s: %v, want exit %d\n%s", sig, err, exitInterrupted, stderr.String())
			}
			if _, err := os.Stat(out); err == nil {
				t.Fatalf("%s: output put in place by an interrupted run", sig)
			}
			if !strings.Contains(stderr.String(), "interrupted") || !strings.Contains(stderr.String(), "tasks are done and kept") {
				t.Fatalf("%s: stderr: %s", sig, stderr.String())
			}
			var again bytes.Buffer
			if code := run(context.Background(), []string{"compress", "--input", runs, "--output", out, "--target-task-size", "1MiB"}, nil, io.Discard, &again); code != exitOK && code != exitPartial {
				t.Fatalf("%s: the next run: exit %d: %s", sig, code, again.String())
			}
			if !strings.Contains(again.String(), "resuming") {
				t.Errorf("%s: the next run did not go on from the kept tasks: %s", sig, again.String())
			}
			if left, _ := filepath.Glob(filepath.Join(tmp, ".out-"+sig.String()+"*")); len(left) > 0 {
				t.Fatalf("%s: left behind: %v", sig, left)
			}
			t.Logf("%s: exit 130, nothing in place, tasks kept; the next run resumed and left nothing", sig)
		})
	}
}

// TestOtherBuildRefused: shards, or a resume, of two builds
// merged silently into mixed output. The run directory records the build
// that started the run; a shard joining it, a merge of it and a resume of
// it by another build are refused, naming both builds (a resume saying
// --overwrite starts afresh), and nothing is put in place.
func TestOtherBuildRefused(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	runs := filepath.Join(tmp, "runs")
	shardInput(t, runs)
	out := filepath.Join(tmp, "out")
	shard := func(i string) []string {
		return []string{"compress", "--quiet", "--input", runs, "--output", out, "--target-task-size", "1MiB", "--shard", i, "--num-shards", "2"}
	}
	var stderr bytes.Buffer
	if code := run(context.Background(), shard("0"), nil, io.Discard, &stderr); code != exitOK && code != exitPartial {
		t.Fatalf("shard 0: exit %d: %s", code, stderr.String())
	}
	manifest := filepath.Join(tmp, ".out.tc-run", "run.json")
	b, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	this, _ := m["build"].(string)
	if this == "" {
		t.Fatalf("run.json records no build: %s", b)
	}
	const other = "github.com/trajcompress/trajcompress v0.0.1 vcs 0123abcd"
	m["build"] = other
	b, _ = json.Marshal(m)
	os.WriteFile(manifest, b, 0o644)
	for _, c := range []struct {
		name string
		args []string
		also string
	}{
		{"shard", shard("1"), "a shard does not discard it"},
		{"merge", []string{"merge", "--output", out}, "merge with the build that ran the shards"},
		{"resume", []string{"compress", "--quiet", "--input", runs, "--output", out, "--target-task-size", "1MiB"}, "pass --overwrite to discard it"},
	} {
		stderr.Reset()
		code := run(context.Background(), c.args, nil, io.Discard, &stderr)
		if code != exitUsage || !strings.Contains(stderr.String(), other) || !strings.Contains(stderr.String(), this) || !strings.Contains(stderr.String(), c.also) {
			t.Errorf("%s by another build: exit %d: %s", c.name, code, stderr.String())
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%s by another build put outputs in place", c.name)
		}
	}
	// --overwrite starts afresh under this build.
	stderr.Reset()
	if code := run(context.Background(), []string{"compress", "--quiet", "--input", runs, "--output", out, "--target-task-size", "1MiB", "--overwrite"}, nil, io.Discard, &stderr); code != exitOK && code != exitPartial {
		t.Fatalf("--overwrite: exit %d: %s", code, stderr.String())
	}
}
