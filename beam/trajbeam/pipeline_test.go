package trajbeam

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/trajcompress/trajcompress/config"
	"github.com/trajcompress/trajcompress/fixtures/gen"
	"github.com/trajcompress/trajcompress/format"
	"github.com/trajcompress/trajcompress/job"
	"github.com/trajcompress/trajcompress/metrics"
)

// TestMain runs the pipelines of this package on prism, in process.
func TestMain(m *testing.M) { ptest.Main(m) }

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

	o.Count, o.Seed = 40, 4
	pq := filepath.Join(dir, "d.parquet")
	w, err := format.Create(pq, format.Parquet, format.Schema{}, format.Column{})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines(o) {
		if json.Valid(l) && bytes.HasPrefix(l, []byte("{")) {
			if err := w.Write(l); err != nil {
				t.Fatal(err)
			}
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

func testConfig(t *testing.T) config.Config {
	t.Helper()
	root, _ := filepath.Abs("../..")
	cfg, err := config.Load(filepath.Join(root, "fixtures/example/trajectory_compression.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Output.Format = format.JSONL // the pipeline writes JSONL parts
	return cfg
}

// TestPipelineEqualsPool runs the same input through `trajcompress
// compress` (job.Run: the pool) and through the Beam pipeline on prism,
// and compares: the output records as multisets (the part files' order is
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

	poolOut := filepath.Join(work, "pool")
	res, err := job.Run(context.Background(), job.Spec{Config: cfg, Input: in, Output: poolOut, OutputFormatSet: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Total.RecordsRejected() < 4 || res.Total.RecordsOut() < 200 {
		t.Fatalf("corpus too tame: %d out, %d rejected", res.Total.RecordsOut(), res.Total.RecordsRejected())
	}

	beamOut := filepath.Join(work, "beam")
	opts := Options{Config: cfg, Input: in, Output: beamOut, Start: time.Now()}
	plan, err := NewPlan(context.Background(), opts, "test")
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Sources) != 7 {
		t.Fatalf("sources: %+v", plan.Sources)
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
		len(poolRecs), res.Total.RecordsRejected(), len(beamRecs), len(readParts(t, beamOut)), fileSize(t, plan.Rejects))
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
	b, err := os.ReadFile(statePath)
	if err != nil {
		t.Fatal(err)
	}
	var got metrics.Summary
	if err := got.UnmarshalState(b); err != nil {
		t.Fatal(err)
	}
	if !got.Equal(&res.Total) {
		t.Errorf("merged Summary differs from the pool's")
	}

	// The metrics JSON, but for what must differ.
	poolDoc := metricsDoc(t, filepath.Join(poolOut, cfg.Metrics.OutputFile))
	beamDoc := metricsDoc(t, plan.Metrics)
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
	if err := metrics.VerifyOutputs(plan.Metrics, rep.Run.Outputs); err != nil {
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

// metricsDoc is a metrics file as JSON, without what differs between two
// runs of the same input: the processing times, the input fingerprint
// (the pipeline does not compute it) and the output files.
func metricsDoc(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	delete(doc, "processing")
	run := doc["run"].(map[string]any)
	delete(run, "input_fingerprint")
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

func fileSize(t *testing.T, p string) int64 {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}
