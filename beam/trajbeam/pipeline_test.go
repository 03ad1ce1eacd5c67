package trajbeam

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/memfs"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/trajcompress/trajcompress/check/checkfile"
	"github.com/trajcompress/trajcompress/config"
	"github.com/trajcompress/trajcompress/fixtures/gen"
	"github.com/trajcompress/trajcompress/format"
	"github.com/trajcompress/trajcompress/format/parquet"
	"github.com/trajcompress/trajcompress/metrics"
)

// TestMain runs the pipelines of this package on prism, in process,
// then removes the trajcompress CLI the tests built, if they built one.
func TestMain(m *testing.M) {
	code := ptest.MainRet(m)
	if cli.dir != "" {
		os.RemoveAll(cli.dir)
	}
	os.Exit(code)
}

// saveStateFn writes the Summary it receives to Path, for the test to
// compare with the pool's.
type saveStateFn struct{ Path string }

func (fn *saveStateFn) ProcessElement(s *metrics.Summary) error {
	b, err := s.MarshalState()
	if err != nil {
		return err
	}
	return os.WriteFile(fn.Path, b, 0o644)
}

func init() { register.DoFn1x1[*metrics.Summary, error](&saveStateFn{}) }

// corpus writes an input directory that exercises every reading path:
// plain JSONL through textio (with CRLF and lone CR line ends, blank
// lines, malformed lines, the same invalid line twice, ill-formed UTF-8
// in a record and in a rejected line), in a subdirectory too; gzip JSONL,
// a gzip file named .jsonl, a JSON array (records told apart by index), a
// JSONL file with a byte order mark, and Parquet through our readers; a
// hidden file both runs leave out.
func corpus(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "runs")
	lines := func(o gen.Options) [][]byte {
		var out [][]byte
		if err := gen.Generate(o, func(l []byte) error { out = append(out, bytes.Clone(l)); return nil }); err != nil {
			t.Fatal(err)
		}
		return out
	}
	write := func(name string, data []byte) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gz := func(b []byte) []byte {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(b)
		zw.Close()
		return buf.Bytes()
	}
	small := gen.Options{MedianTokens: 2500, P99Tokens: 20000}

	o := small
	o.Count, o.Seed = 90, 1
	var a bytes.Buffer
	for i, l := range lines(o) {
		a.Write(l)
		switch i % 7 {
		case 0:
			a.WriteString("\r\n")
		case 3:
			a.WriteString("\n  \n")
		case 5:
			a.WriteString("\r") // a lone CR ends a line too
		default:
			a.WriteString("\n")
		}
		if i == 10 || i == 50 {
			a.WriteString(`{"conversations": "not a list"}` + "\n")
		}
		if i == 20 {
			a.WriteString(`{"conversations":[{"from":"human","value":"caf\xe9"},{"from":"gpt","value":"ok"}]}` + "\n")
			a.WriteString(`{"conversations": "\xff"}` + "\n")
		}
	}
	a.WriteString("not json at all") // last line, no newline
	write("a.jsonl", a.Bytes())

	o.Count, o.Seed, o.Dialect = 60, 2, "openai"
	write("sub/b.jsonl", bytes.Join(lines(o), []byte("\n")))

	o.Count, o.Seed, o.Dialect = 50, 3, ""
	c := bytes.Join(lines(o), []byte("\n"))
	write("sub/c.jsonl.gz", gz(c))
	write("sub/deeper/gzipped-by-content.jsonl", gz(c[:len(c)/2]))

	// Parquet in row groups of 256 KiB, several units at a 1 MiB task size.
	o.Count, o.Seed = 300, 4
	var rows [][]byte
	for _, l := range lines(o) {
		if json.Valid(l) && bytes.HasPrefix(l, []byte("{")) {
			rows = append(rows, l)
		}
	}
	sch, err := parquet.InferSchema(rows)
	if err != nil {
		t.Fatal(err)
	}
	w, err := parquet.Create(filepath.Join(dir, "d.parquet"), sch, parquet.WriterOptions{RowGroupBytes: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	o.Count, o.Seed = 20, 5
	arr := lines(o)[:15]
	arr = append(arr, []byte(`{"conversations": 5}`))
	write("e.json", append(append([]byte("[\n  "), bytes.Join(arr, []byte(",\n  "))...), "\n]\n"...))
	o.Count, o.Seed = 10, 6
	write("sub/bom.jsonl", append([]byte("\xef\xbb\xbf"), bytes.Join(lines(o), []byte("\n"))...))

	write(".hidden.jsonl", []byte(`{"conversations":[{"from":"human","value":"never read"}]}`+"\n"))
	return dir
}

// testConfigFile is the config both runs read, relative to the
// repository root.
const testConfigFile = "fixtures/example/trajectory_compression.yaml"

// repoRoot is the repository root (the main module's directory).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// testConfig is the config of testConfigFile with JSONL output, as
// `trajcompress compress --config testConfigFile --output-format jsonl`
// has it.
func testConfig(t *testing.T) config.Config {
	t.Helper()
	cfg, err := config.Load(filepath.Join(repoRoot(t), testConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Output.Format = format.JSONL // the pipeline writes JSONL parts
	return cfg
}

// cliEnv names the trajcompress binary the tests run as the pool, the
// reference the pipeline must equal: make test-beam builds bin/trajcompress
// (go build -o bin/trajcompress ./cmd/trajcompress) and sets it. When it is
// unset, the tests build the CLI themselves with go build in the repository
// root (the go tool and the main module's dependencies must be at hand:
// inside isolated.sh there is no network); either way, a binary that
// cannot be had fails the test.
const cliEnv = "TRAJCOMPRESS_BIN"

// cli is the trajcompress binary of this test process, found or built
// once; dir is the temporary directory of one built here, which TestMain
// removes.
var cli struct {
	once               sync.Once
	path, version, dir string
	err                error
}

// trajcompress returns the path of the trajcompress binary and its
// version (what `trajcompress version` prints after the name, the
// metrics' run.tool_version), failing the test when there is none.
func trajcompress(t *testing.T) (path, version string) {
	t.Helper()
	cli.once.Do(func() { cli.path, cli.version, cli.err = findCLI() })
	if cli.err != nil {
		t.Fatal(cli.err)
	}
	return cli.path, cli.version
}

func findCLI() (path, version string, err error) {
	if path = os.Getenv(cliEnv); path != "" {
		if path, err = filepath.Abs(path); err != nil {
			return "", "", err
		}
		st, err := os.Stat(path)
		if err == nil && (st.IsDir() || st.Mode()&0o111 == 0) {
			err = errors.New("not an executable file")
		}
		if err != nil {
			return "", "", fmt.Errorf("%s=%s: %v (make test-beam builds it: go build -o bin/trajcompress ./cmd/trajcompress)", cliEnv, path, err)
		}
	} else {
		root, err := filepath.Abs("../..")
		if err != nil {
			return "", "", err
		}
		if cli.dir, err = os.MkdirTemp("", "trajbeam-cli-"); err != nil {
			return "", "", err
		}
		path = filepath.Join(cli.dir, "trajcompress")
		build := exec.Command("go", "build", "-o", path, "./cmd/trajcompress")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("%s is unset, and the reference CLI could not be built (go build -o %s ./cmd/trajcompress in %s): %v\n%s", cliEnv, path, root, err, out)
		}
	}
	out, err := exec.Command(path, "version").Output()
	v, ok := strings.CutPrefix(strings.TrimSpace(string(out)), "trajcompress ")
	if err != nil || !ok || v == "" {
		return "", "", fmt.Errorf("%s version: %q, %v: not the trajcompress CLI", path, out, err)
	}
	return path, v, nil
}

// runCLI runs the trajcompress CLI with args, failing the test (with its
// stderr) unless it exits with one of the statuses in ok.
func runCLI(t *testing.T, ok []int, args ...string) {
	t.Helper()
	bin, _ := trajcompress(t)
	cmd := exec.Command(bin, args...)
	// A batch scheduler's array index in the environment would make
	// compress run one shard of the run (task.ShardOf): the shards are
	// asked for by flag only.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SLURM_ARRAY_") && !strings.HasPrefix(kv, "JOB_COMPLETION_INDEX=") && !strings.HasPrefix(kv, "AWS_BATCH_JOB_ARRAY_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("trajcompress %s: %v", strings.Join(args, " "), err)
	}
	if !slices.Contains(ok, code) {
		t.Fatalf("trajcompress %s: exit status %d, want one of %v\n%s", strings.Join(args, " "), code, ok, out.Bytes())
	}
}

// Exit statuses of the CLI: a finished run, and one with rejected
// records (partial).
const (
	exitOK      = 0
	exitPartial = 3
)

// poolRun is what the trajcompress CLI made of an input: the output
// directory of `compress` (its metrics inside, the rejects beside it as
// <Out>_rejects.jsonl), and Total, the exact metrics.Summary of the run.
type poolRun struct {
	Out   string
	Total metrics.Summary
}

// runPool runs `trajcompress compress` on in (--config testConfigFile
// --output-format jsonl): the pool, the reference the pipeline must equal.
//
// The metrics JSON rounds (the mean compression ratio to 4 places, the
// other means to 1 and 2): the exact Summary, which the pipeline's is
// compared with, is not in it. compress keeps it, per task, in the run
// directory of an unfinished run only: so the input runs a second time,
// as the two shards of one run (compress --shard I --num-shards 2), the
// metrics state each task marker recorded (job/rundir.go: run.json holds
// the number of tasks, tasks/NNNNNN.json a task's marker, its "state"
// the task's metrics.Summary.MarshalState) is merged into Total, and
// `trajcompress merge` finishes that run; its metrics, the vouched
// output files' sizes and hashes included, must equal the first run's,
// which ties Total to it.
func runPool(t *testing.T, in string) poolRun {
	t.Helper()
	dir := t.TempDir()
	args := func(out string, more ...string) []string {
		return append([]string{"compress", "--quiet", "--input", in, "--config", filepath.Join(repoRoot(t), testConfigFile),
			"--output-format", "jsonl", "--output", out}, more...)
	}
	plain := filepath.Join(dir, "plain", "out")
	sharded := filepath.Join(dir, "sharded", "out") // the same base name: the same relative paths in the metrics
	runCLI(t, []int{exitPartial}, args(plain)...)
	for i := range 2 {
		runCLI(t, []int{exitOK, exitPartial}, args(sharded, "--shard", strconv.Itoa(i), "--num-shards", "2")...)
	}
	run := poolRun{Out: plain}
	runDirs, err := filepath.Glob(filepath.Join(dir, "sharded", ".*.tc-run"))
	if err != nil || len(runDirs) != 1 {
		t.Fatalf("the sharded run's directory: %v, %v", runDirs, err)
	}
	var manifest struct {
		Tasks int `json:"tasks"`
	}
	readJSON(t, filepath.Join(runDirs[0], "run.json"), &manifest)
	markers, err := filepath.Glob(filepath.Join(runDirs[0], "tasks", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if manifest.Tasks < 2 || len(markers) != manifest.Tasks {
		t.Fatalf("the sharded run has %d tasks and %d task markers: %v", manifest.Tasks, len(markers), markers)
	}
	for _, m := range markers {
		var marker struct {
			State json.RawMessage `json:"state"`
		}
		readJSON(t, m, &marker)
		var s metrics.Summary
		if err := s.UnmarshalState(marker.State); err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		run.Total.Merge(&s)
	}
	bin, version := trajcompress(t)
	t.Logf("pool: %s (version %s); the sharded run's %d task states merged", bin, version, len(markers))
	runCLI(t, []int{exitPartial}, "merge", "--quiet", "--output", sharded)
	cfg := testConfig(t)
	plainDoc, shardedDoc := metricsJSON(t, filepath.Join(plain, cfg.Metrics.OutputFile)), metricsJSON(t, filepath.Join(sharded, cfg.Metrics.OutputFile))
	delete(plainDoc, "processing")
	delete(shardedDoc, "processing")
	if !reflect.DeepEqual(plainDoc, shardedDoc) {
		pj, _ := json.MarshalIndent(plainDoc, "", " ")
		sj, _ := json.MarshalIndent(shardedDoc, "", " ")
		t.Fatalf("the sharded run's metrics differ from compress's:\ncompress %s\nsharded %s", pj, sj)
	}
	outcomes, _ := plainDoc["outcomes"].(map[string]any)
	if in, rej := run.Total.RecordsIn(), run.Total.RecordsRejected(); outcomes == nil || float64(in) != outcomes["records_in"] || float64(rej) != outcomes["records_rejected"] {
		t.Fatalf("the tasks' states count %d records in, %d rejected; compress's metrics: %v", in, rej, outcomes)
	}
	return run
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestPipelineEqualsPool runs the same input through `trajcompress
// compress` (the CLI: the pool, runPool) and through the Beam pipeline on
// prism, and compares: the output records as multisets (the part files' order is
// the runner's), the rejects file byte for byte (numbered, in input
// order), the merged Summary exactly (Summary.Equal), and the metrics
// JSON except for times, the input fingerprint and the list of output
// files; the Beam metrics vouch for the files it wrote, and nothing is
// left of the temporary directory, nor of a file a failed bundle left in
// it.
func TestPipelineEqualsPool(t *testing.T) {
	in := corpus(t)
	cfg := testConfig(t)
	work := t.TempDir()

	res := runPool(t, in)
	poolOut := res.Out
	if res.Total.RecordsRejected() < 4 || res.Total.RecordsOut() < 200 {
		t.Fatalf("corpus too tame: %d out, %d rejected", res.Total.RecordsOut(), res.Total.RecordsRejected())
	}

	beamOut := filepath.Join(work, "beam")
	_, version := trajcompress(t)
	opts := Options{Config: cfg, Input: in, Output: beamOut, Start: time.Now(), TaskSize: 1 << 20, ToolVersion: version}
	plan, err := NewPlan(context.Background(), opts, "test")
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Sources) != 7 {
		t.Fatalf("sources: %+v", plan.Sources)
	}
	groups := 0
	for _, u := range plan.Units {
		if plan.Sources[u.Source].Format == format.Parquet && u.Task.Parts > 1 {
			groups++
		}
	}
	if groups < 2 {
		t.Fatalf("the Parquet file is %d units of row groups, want several: %+v", groups, plan.Units)
	}
	// What a bundle that failed after writing leaves: a part nobody names.
	orphan := filepath.Join(plan.Temp, partPrefix+"failed-bundle.jsonl")
	if err := os.MkdirAll(plan.Temp, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(orphan, []byte(`{"conversations":[]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, s := beam.NewPipelineWithRoot()
	outs := Build(s, plan, opts)
	statePath := filepath.Join(work, "state.json")
	beam.ParDo0(s, &saveStateFn{Path: statePath}, outs.Summary)
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}

	// Records, as multisets.
	poolRecs := readLines(t, poolOut, ".jsonl")
	beamRecs := readLines(t, beamOut, ".jsonl", RejectsName)
	if int64(len(poolRecs)) != res.Total.RecordsOut() {
		t.Fatalf("pool wrote %d records, its metrics say %d", len(poolRecs), res.Total.RecordsOut())
	}
	t.Logf("pool: %d records out, %d rejected; beam: %d records in %d part files, rejects %d bytes",
		len(poolRecs), res.Total.RecordsRejected(), len(beamRecs), len(readParts(t, beamOut)), sizeOf(t, plan.Rejects))
	slices.Sort(poolRecs)
	slices.Sort(beamRecs)
	if !slices.Equal(poolRecs, beamRecs) {
		t.Errorf("output records differ: pool %d, beam %d", len(poolRecs), len(beamRecs))
	}

	// Rejects, byte for byte.
	poolRej, err := os.ReadFile(poolOut + "_rejects.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	beamRej, err := os.ReadFile(plan.Rejects)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(poolRej, beamRej) {
		t.Errorf("rejects differ:\npool:\n%s\nbeam:\n%s", poolRej, beamRej)
	}

	// The Summary, exactly.
	sameSummary(t, statePath, &res.Total)

	// The metrics JSON, but for what must differ.
	poolDoc := metricsDoc(t, filepath.Join(poolOut, cfg.Metrics.OutputFile))
	beamDoc := metricsDoc(t, plan.Metrics)
	if fp, _ := beamDoc["run"].(map[string]any)["input_fingerprint"].(string); !strings.HasPrefix(fp, "xxh3-128:") {
		t.Errorf("beam metrics: input fingerprint %q", fp)
	}
	if !reflect.DeepEqual(poolDoc, beamDoc) {
		pj, _ := json.MarshalIndent(poolDoc, "", " ")
		bj, _ := json.MarshalIndent(beamDoc, "", " ")
		t.Errorf("metrics differ:\npool %s\nbeam %s", pj, bj)
	}

	// The metrics vouch for the files, and nothing else is left.
	var rep metrics.Report
	raw, _ := os.ReadFile(plan.Metrics)
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	if err := checkfile.VerifyOutputs(plan.Metrics, rep.Run.Outputs); err != nil {
		t.Error(err)
	}
	entries, _ := os.ReadDir(beamOut)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != len(rep.Run.Outputs)+1 { // + the metrics
		t.Errorf("output directory holds %v, metrics vouch for %d files", names, len(rep.Run.Outputs))
	}
	for _, n := range names {
		if strings.HasPrefix(n, tempPrefix) {
			t.Errorf("temporary directory %s left behind", n)
		}
	}
}

// readLines reads the lines of every file under dir whose name ends in
// ext, except those named in skip.
func readLines(t *testing.T, dir, ext string, skip ...string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ext) || slices.Contains(skip, d.Name()) {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			if l != "" {
				out = append(out, l)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// metricsJSON is a metrics file as JSON.
func metricsJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	var doc map[string]any
	readJSON(t, path, &doc)
	return doc
}

// metricsDoc is a metrics file as JSON, without what differs between two
// runs of the same input: the processing times and the output files.
func metricsDoc(t *testing.T, path string) map[string]any {
	t.Helper()
	doc := metricsJSON(t, path)
	delete(doc, "processing")
	run := doc["run"].(map[string]any)
	delete(run, "outputs")
	return doc
}

func readParts(t *testing.T, dir string) []string {
	t.Helper()
	parts, err := filepath.Glob(filepath.Join(dir, partPrefix+"*-of-*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return parts
}

func sizeOf(t *testing.T, p string) int64 {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// TestRemoteFileSystem runs the pipeline on Beam's in-memory file system
// (memfs://), the code path of gs:// and s3:// inputs and outputs:
// listing a glob, textio on it, a remote gzip and Parquet file copied to
// the worker for our readers, parts renamed and the temporary directory
// removed through the file system's interface. The records and the
// Summary equal the pool's on the same files on disk; the rejects too,
// but for the file names.
func TestRemoteFileSystem(t *testing.T) {
	in := corpus(t)
	cfg := testConfig(t)
	root := "memfs://" + randomID() // memfs is one per process: -count=2 must not see this run's outputs
	var names []string
	for _, rel := range []string{"a.jsonl", "sub/b.jsonl", "sub/c.jsonl.gz", "d.parquet"} {
		b, err := os.ReadFile(filepath.Join(in, rel))
		if err != nil {
			t.Fatal(err)
		}
		memfs.Write(root+"/in/"+filepath.Base(rel), b)
		names = append(names, filepath.Base(rel))
	}
	local := filepath.Join(t.TempDir(), "in")
	for _, rel := range []string{"a.jsonl", "sub/b.jsonl", "sub/c.jsonl.gz", "d.parquet"} {
		b, _ := os.ReadFile(filepath.Join(in, rel))
		if err := os.MkdirAll(local, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(local, filepath.Base(rel)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res := runPool(t, local)
	poolOut := res.Out

	opts := Options{Config: cfg, Input: root + "/in/*", Output: root + "/out", Start: time.Now()}
	plan, err := NewPlan(context.Background(), opts, "memfs")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range plan.Sources {
		got = append(got, s.Name)
	}
	slices.Sort(names)
	if !slices.Equal(got, names) {
		t.Fatalf("sources %v, want %v", got, names)
	}
	p, s := beam.NewPipelineWithRoot()
	outs := Build(s, plan, opts)
	statePath := filepath.Join(t.TempDir(), "state.json")
	beam.ParDo0(s, &saveStateFn{Path: statePath}, outs.Summary)
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}

	fs := memfs.New(context.Background())
	all, err := fs.List(context.Background(), root+"/out/*")
	if err != nil {
		t.Fatal(err)
	}
	var beamRecs []string
	var rejects []byte
	for _, f := range all {
		b, err := filesystem.Read(context.Background(), fs, f)
		if err != nil {
			t.Fatal(err)
		}
		switch base := f[strings.LastIndex(f, "/")+1:]; {
		case strings.HasPrefix(base, tempPrefix):
			t.Errorf("temporary file %s left behind", f)
		case strings.HasPrefix(base, partPrefix):
			beamRecs = append(beamRecs, strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")...)
		case base == RejectsName:
			rejects = b
		}
	}
	poolRecs := readLines(t, poolOut, ".jsonl")
	slices.Sort(poolRecs)
	slices.Sort(beamRecs)
	if len(poolRecs) == 0 || !slices.Equal(poolRecs, beamRecs) {
		t.Errorf("output records differ: pool %d, beam %d", len(poolRecs), len(beamRecs))
	}
	poolRej, err := os.ReadFile(poolOut + "_rejects.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	poolRej = bytes.ReplaceAll(poolRej, []byte(`"file":"`+local+`/`), []byte(`"file":"`+root+`/in/`))
	if len(poolRej) == 0 || !bytes.Equal(poolRej, rejects) {
		t.Errorf("rejects differ:\npool:\n%s\nbeam:\n%s", poolRej, rejects)
	}
	sameSummary(t, statePath, &res.Total)
}

// sameSummary checks that the Summary state saveStateFn wrote to path
// equals the pool's, exactly (Summary.Equal: every counter, the 64.64
// fixed-point sum of ratios, the histograms, the groups).
func sameSummary(t *testing.T, path string, pool *metrics.Summary) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got metrics.Summary
	if err := got.UnmarshalState(b); err != nil {
		t.Fatal(err)
	}
	if !got.Equal(pool) {
		t.Errorf("merged Summary differs from the pool's")
	}
}

// TestPlanRefusals: what NewPlan refuses before a pipeline is built.
func TestPlanRefusals(t *testing.T) {
	in := corpus(t)
	cfg := testConfig(t)
	out := filepath.Join(t.TempDir(), "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(out, "part-00000-of-00001.jsonl"), []byte("{}\n"), 0o644)
	llm := cfg
	llm.Summarization.Method = "llm"
	parquet := cfg
	parquet.Output.Format = format.Parquet
	for _, tc := range []struct {
		name string
		o    Options
		want string
	}{
		{"no_output", Options{Config: cfg, Input: in}, "--output: name the output directory"},
		{"inside_input", Options{Config: cfg, Input: in, Output: filepath.Join(in, "out")}, "inside the input directory"},
		{"earlier_run", Options{Config: cfg, Input: in, Output: out}, "pass --overwrite"},
		{"llm", Options{Config: llm, Input: in, Output: t.TempDir()}, "deterministic summarizer only"},
		{"parquet_out", Options{Config: parquet, Input: in, Output: t.TempDir()}, "writes JSONL part files"},
		{"missing", Options{Config: cfg, Input: filepath.Join(in, "nope"), Output: t.TempDir()}, "no such file"},
		{"empty_dir", Options{Config: cfg, Input: t.TempDir(), Output: t.TempDir()}, "no .jsonl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewPlan(context.Background(), tc.o, "x")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
	if _, err := NewPlan(context.Background(), Options{Config: cfg, Input: in, Output: out, Overwrite: true}, "x"); err != nil {
		t.Errorf("--overwrite: %v", err)
	}
}

// TestCommitParts: the commit names the parts of the committed bundles
// part-NNNNN-of-NNNNN.jsonl in the order of their temporary names, can be
// done again (a retried commit), and with Overwrite removes the part
// files of an earlier run these did not replace.
func TestCommitParts(t *testing.T) {
	out := t.TempDir()
	temp := filepath.Join(out, tempPrefix+"x")
	os.MkdirAll(temp, 0o755)
	var parts []Part
	for _, n := range []string{"b", "a", "c"} {
		p := filepath.Join(temp, partPrefix+n+".jsonl")
		os.WriteFile(p, []byte(n+"\n"), 0o644)
		parts = append(parts, Part{Temp: p, Source: -1, Records: 1, Bytes: 2})
	}
	stale := filepath.Join(out, "part-00007-of-00009.jsonl")
	os.WriteFile(stale, []byte("old\n"), 0o644)
	fn := &finalizeFn{Plan: Plan{Output: out, Temp: temp}, Overwrite: true}
	iter := func() func(*Part) bool {
		i := 0
		return func(p *Part) bool {
			if i == len(parts) {
				return false
			}
			*p = parts[i]
			i++
			return true
		}
	}
	for try := 0; try < 2; try++ {
		outputs, err := fn.commitParts(context.Background(), collect(iter()))
		if err != nil {
			t.Fatalf("try %d: %v", try, err)
		}
		if len(outputs) != 3 {
			t.Fatalf("outputs %+v", outputs)
		}
		for i, want := range []string{"a", "b", "c"} {
			b, err := os.ReadFile(filepath.Join(out, fmt.Sprintf("part-%05d-of-00003.jsonl", i)))
			if err != nil || string(b) != want+"\n" {
				t.Errorf("try %d: part %d = %q, %v; want %q", try, i, b, err, want)
			}
		}
		if _, err := os.Stat(stale); !os.IsNotExist(err) {
			t.Errorf("the earlier run's %s is still there", stale)
		}
	}
}
