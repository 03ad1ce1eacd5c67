package job

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/config"
	"github.com/trajcompress/trajcompress/job/jobcore"
	"github.com/trajcompress/trajcompress/pipeline"
	"github.com/trajcompress/trajcompress/traj"
)

func input(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const rec = `{"conversations":[{"from":"human","value":"hi"}]}` + "\n"

// TestPlanNamesAndRefusals: the peer's default names, and the outputs a
// run refuses before it reads anything.
func TestPlanNamesAndRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := input(t, dir, "a.jsonl.gz", rec)
	plain := input(t, dir, "b.jsonl", rec)
	p, err := NewPlan(Spec{Config: config.Default(), Settings: Settings{Input: in}})
	if err != nil {
		t.Fatal(err)
	}
	if got := filepath.Base(p.Files[0].Out) + " " + filepath.Base(p.Metrics) + " " + filepath.Base(p.Rejects); got != "a_compressed.jsonl a_compressed_metrics.json a_compressed_rejects.jsonl" {
		t.Errorf("default names: %s", got)
	}
	for _, tc := range []struct {
		name string
		spec Spec
		want string
	}{
		{"over_input", Spec{Settings: Settings{Input: plain, Paths: Paths{Output: plain}}}, "over its own input"},
		{"same_files", Spec{Settings: Settings{Paths: Paths{Output: filepath.Join(dir, "o.jsonl"), Metrics: filepath.Join(dir, "o.jsonl")}}}, "are the same file"},
		{"lfs_pointer", Spec{Settings: Settings{Input: input(t, dir, "p.parquet", "version https://git-lfs.github.com/spec/v1\noid sha256:00\nsize 9\n")}}, "a Git LFS pointer file, not the data it stands for (the repository was cloned without git-lfs): fetch the data with git lfs pull --include " + filepath.Join(dir, "p.parquet")},
		{"empty_parquet", Spec{Settings: Settings{Input: input(t, dir, "e.parquet", "")}}, "e.parquet: an empty file (0 bytes), not a Parquet file"},
		{"stdin_without_output", Spec{Settings: Settings{Input: "-"}}, "name the output with --output"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.spec.Config = config.Default()
			if tc.spec.Input == "" {
				tc.spec.Input = in
			}
			_, err := NewPlan(tc.spec)
			var ue UsageError
			if err == nil || !strings.Contains(err.Error(), tc.want) || !asUsage(err, &ue) {
				t.Fatalf("err = %v, want a UsageError containing %q", err, tc.want)
			}
		})
	}
}

func asUsage(err error, ue *UsageError) bool {
	u, ok := err.(UsageError)
	*ue = u
	return ok
}

// TestRunCommitsAndVouches: a run puts every output in place, leaves no
// file of the commit behind, and its metrics vouch for its outputs.
func TestRunCommitsAndVouches(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := input(t, dir, "a.jsonl", rec+"not json\n"+rec)
	res, err := Run(context.Background(), Spec{Config: config.Default(), Settings: Settings{Input: in, Paths: Paths{Outcomes: filepath.Join(dir, "oc.jsonl")}}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Partial || res.Total.RecordsIn() != 3 || res.Total.RecordsRejected() != 1 {
		t.Fatalf("partial %v, in %d, rejected %d", res.Partial, res.Total.RecordsIn(), res.Total.RecordsRejected())
	}
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if got := strings.Join(names, " "); got != "a.jsonl a_compressed.jsonl a_compressed_metrics.json a_compressed_rejects.jsonl oc.jsonl" {
		t.Fatalf("files after the run: %s", got)
	}
	var m struct {
		Run struct {
			Outputs []struct{ Path string } `json:"outputs"`
		} `json:"run"`
	}
	b, _ := os.ReadFile(filepath.Join(dir, "a_compressed_metrics.json"))
	if err := json.Unmarshal(b, &m); err != nil || len(m.Run.Outputs) != 3 {
		t.Fatalf("run.outputs %+v (%v)", m.Run.Outputs, err)
	}
}

// TestFailedRunLeavesNothing: a run that fails (a truncated gzip input)
// puts nothing in place and leaves no temporary file.
func TestFailedRunLeavesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := input(t, dir, "a.jsonl.gz", "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03truncated")
	if _, err := Run(context.Background(), Spec{Config: config.Default(), Settings: Settings{Input: in}}); err == nil {
		t.Fatal("a truncated gzip input did not fail the run")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("left behind: %v", names)
	}
}

// TestRejectLineKeepsEveryByte: a rejected line is kept as is, in
// raw_base64 when it is not valid UTF-8.
func TestRejectLineKeepsEveryByte(t *testing.T) {
	t.Parallel()
	b := jobcore.RejectLine(&pipeline.Reject{Pos: traj.Pos{File: "f", Line: 7}, Reason: "invalid_json", Raw: []byte("bad \xff")})
	var l struct {
		File      string `json:"file"`
		Line      int64  `json:"line"`
		Raw       string `json:"raw"`
		RawBase64 string `json:"raw_base64"`
	}
	if err := json.Unmarshal(b, &l); err != nil {
		t.Fatal(err)
	}
	if l.File != "f" || l.Line != 7 || l.Raw != "" || l.RawBase64 != "YmFkIP8=" {
		t.Fatalf("reject line %s", b)
	}
}

// TestFingerprintIgnoresWhatCannotChangeOutput: workers, request limits,
// the cache directory and output names do not change the fingerprint;
// the target and the sample do.
func TestFingerprintIgnoresWhatCannotChangeOutput(t *testing.T) {
	t.Parallel()
	a := config.Default()
	_, fa := jobcore.SampledConfigFingerprint(a, nil)
	b := a
	b.Processing.NumWorkers, b.Processing.MaxConcurrentRequests = 7, 3
	b.Summarization.CacheDir, b.Output.OutputSuffix = "/elsewhere", "_x"
	if _, fb := jobcore.SampledConfigFingerprint(b, nil); fb != fa {
		t.Errorf("settings that cannot change the output changed the fingerprint")
	}
	c := a
	c.Compression.TargetMaxTokens++
	if _, fc := jobcore.SampledConfigFingerprint(c, nil); fc == fa {
		t.Errorf("the target did not change the fingerprint")
	}
	if _, fs := jobcore.SampledConfigFingerprint(a, &Sample{Percent: 10, Seed: 1}); fs == fa {
		t.Errorf("sampling did not change the fingerprint")
	}
}

// TestMetricsOutputFileInFileMode: a metrics.output_file other than the
// default names the metrics of a file input too; --metrics wins.
func TestMetricsOutputFileInFileMode(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := input(t, dir, "a.jsonl", rec)
	cfg := config.Default()
	cfg.Metrics.OutputFile = "stats.json"
	p, err := NewPlan(Spec{Config: cfg, Settings: Settings{Input: in, Paths: Paths{Output: filepath.Join(dir, "out", "b.jsonl")}}})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "out", "stats.json"); p.Metrics != want {
		t.Errorf("metrics %s, want %s", p.Metrics, want)
	}
	p, err = NewPlan(Spec{Config: cfg, Settings: Settings{Input: in, Paths: Paths{Metrics: filepath.Join(dir, "m.json")}}})
	if err != nil || p.Metrics != filepath.Join(dir, "m.json") {
		t.Errorf("--metrics: %v %s", err, p.Metrics)
	}
	p, err = NewPlan(Spec{Config: config.Default(), Settings: Settings{Input: in}})
	if err != nil || filepath.Base(p.Metrics) != "a_compressed_metrics.json" {
		t.Errorf("default: %v %s", err, p.Metrics)
	}
}

// TestWorkersCappedWithNote: more workers than cores run as many as the
// cores, and the run says so.
func TestWorkersCappedWithNote(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := input(t, dir, "a.jsonl", rec)
	cfg := config.Default()
	cfg.Processing.NumWorkers = 1000
	var notes strings.Builder
	if _, err := Run(context.Background(), Spec{Config: cfg, Settings: Settings{Input: in}, Notes: &notes}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(notes.String(), "1000 workers requested") {
		t.Errorf("notes %q", notes.String())
	}
}

// TestDirectoryWalk: a directory input is walked recursively, keeping
// relative paths in the output directory and leaving hidden entries out;
// --no-recursive reads only its own files; side files and an output
// directory inside the input are refused.
func TestDirectoryWalk(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := filepath.Join(dir, "ds")
	for _, name := range []string{"b.jsonl", "data/train/part-0.jsonl", "data/a.jsonl", ".git/x.jsonl", "data/.cache/y.jsonl", "README.md", ".hidden.jsonl"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(in, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		input(t, in, name, rec)
	}
	files := func(p Plan) string {
		var s []string
		for _, f := range p.Files {
			ri, _ := filepath.Rel(in, f.In)
			ro, _ := filepath.Rel(p.Dir, f.Out)
			s = append(s, ri+">"+ro)
		}
		return strings.Join(s, " ")
	}
	p, err := NewPlan(Spec{Config: config.Default(), Settings: Settings{Input: in}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := files(p), "b.jsonl>b.jsonl data/a.jsonl>data/a.jsonl data/train/part-0.jsonl>data/train/part-0.jsonl"; got != want {
		t.Errorf("recursive: %s, want %s", got, want)
	}
	p, err = NewPlan(Spec{Config: config.Default(), Settings: Settings{Input: in, NoRecursive: true}})
	if err != nil || files(p) != "b.jsonl>b.jsonl" {
		t.Errorf("--no-recursive: %v %s", err, files(p))
	}
	res, err := Run(context.Background(), Spec{Config: config.Default(), Settings: Settings{Input: in}})
	if err != nil || res.Total.RecordsIn() != 3 {
		t.Fatalf("run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ds_compressed", "data", "train", "part-0.jsonl")); err != nil {
		t.Errorf("nested output: %v", err)
	}
	for _, tc := range []struct {
		name string
		spec Spec
	}{
		{"metrics", Spec{Settings: Settings{Paths: Paths{Metrics: filepath.Join(in, "m.json")}}}},
		{"rejects_nested", Spec{Settings: Settings{Paths: Paths{Rejects: filepath.Join(in, "data", "r.jsonl")}}}},
		{"outcomes", Spec{Settings: Settings{Paths: Paths{Outcomes: filepath.Join(in, "o.jsonl")}}}},
		{"output_dir", Spec{Settings: Settings{Paths: Paths{Output: filepath.Join(in, "out")}}}},
		{"output_dir_is_input", Spec{Config: func() config.Config { c := config.Default(); c.Output.Format = "parquet"; return c }(), Settings: Settings{Paths: Paths{Output: in}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.spec.Config.Tokenizer.Name == "" {
				tc.spec.Config = config.Default()
			}
			tc.spec.Input = in
			_, err := NewPlan(tc.spec)
			var ue UsageError
			if err == nil || !strings.Contains(err.Error(), "inside the input directory") || !asUsage(err, &ue) {
				t.Fatalf("err = %v, want a refusal: inside the input directory", err)
			}
		})
	}
	// Not walked, so allowed: a hidden path, and a subdirectory with --no-recursive.
	if _, err := NewPlan(Spec{Config: config.Default(), Settings: Settings{Input: in, Paths: Paths{Metrics: filepath.Join(in, ".m.json")}}}); err != nil {
		t.Errorf("hidden metrics: %v", err)
	}
	if _, err := NewPlan(Spec{Config: config.Default(), Settings: Settings{Input: in, NoRecursive: true, Paths: Paths{Output: filepath.Join(in, "out"), Rejects: filepath.Join(dir, "r.jsonl")}}}); err != nil {
		t.Errorf("--no-recursive output subdirectory: %v", err)
	}
}

// TestPlanLinear: planning a directory of many files stats each path a
// bounded number of times (it was quadratic: 3,000 files took 135 s).
func TestPlanLinear(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := filepath.Join(dir, "many")
	os.Mkdir(in, 0o755)
	for i := range 2000 {
		input(t, in, fmt.Sprintf("f%04d.jsonl", i), rec)
	}
	p, err := NewPlan(Spec{Config: config.Default(), Settings: Settings{Input: in}})
	if err != nil || len(p.Files) != 2000 {
		t.Fatalf("%v, %d files", err, len(p.Files))
	}
	// The same file named twice is still caught.
	if err := checkPaths(Plan{Files: []File{{In: filepath.Join(in, "f0001.jsonl"), Out: filepath.Join(dir, "o.jsonl")}}, Metrics: filepath.Join(in, "..", "many", "f0001.jsonl")}, Spec{}); err == nil || !strings.Contains(err.Error(), "over its own input") {
		t.Errorf("an input named another way: %v", err)
	}
}
