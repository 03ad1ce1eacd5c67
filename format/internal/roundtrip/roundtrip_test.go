package roundtrip

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/trajcompress/trajcompress/format/arrow"
	"github.com/trajcompress/trajcompress/format/internal/jsonval"
	"github.com/trajcompress/trajcompress/format/parquet"
	"github.com/trajcompress/trajcompress/internal/testenv"
)

// records covers both dialects, tool calls, list content, big ints, floats
// and nulls. Top-level keys follow first-seen order so it survives as is.
var records = []string{
	`{"id":1,"conversations":[{"from":"system","value":"be brief"},{"from":"human","value":"hi"},{"from":"gpt","value":"hello"}],"tools":"[]","messages":null,"score":0.1}`,
	`{"id":9007199254740993,"conversations":null,"tools":"[{\"name\":\"f\"}]","messages":[{"role":"user","content":[{"type":"text","text":"look"}]},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}},{"id":"c2","type":"function","function":{"name":"g","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"ok"},{"role":"tool","tool_call_id":"c2","content":"ok2"}],"score":1e-300}`,
	`{"id":-3,"conversations":[],"tools":null,"messages":[{"role":"user","content":"plain ünï \"q\"\n"},{"role":"assistant","content":"done","reasoning_content":"hmm"}],"score":-2.5}`,
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// nodeInstall is the npm ci of format/testdata/node, run once per test
// binary: the tests that read with node run in parallel, and two npm ci in
// one directory at once break each other's install.
var nodeInstall struct {
	once sync.Once
	skip string // why the node checks skip; "" when they can run
}

// nodeSetup returns the node binary and format/testdata/node, installing
// the pinned npm packages there on first need; it skips (fails under
// TRAJCOMPRESS_REQUIRE_NODE=1) when node or the packages are unavailable.
func nodeSetup(t *testing.T) (node, nodeDir string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		nodeSkip(t, "node is not installed: skipping the hyparquet/apache-arrow check")
	}
	nodeDir = filepath.Join(moduleRoot(t), "format", "testdata", "node")
	nodeInstall.once.Do(func() {
		if _, err := os.Stat(filepath.Join(nodeDir, "node_modules", "hyparquet")); err == nil {
			return
		}
		npm, err := exec.LookPath("npm")
		if err != nil {
			nodeInstall.skip = "npm is not installed: skipping the hyparquet/apache-arrow check"
			return
		}
		cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund")
		cmd.Dir = nodeDir
		if out, err := cmd.CombinedOutput(); err != nil {
			nodeInstall.skip = fmt.Sprintf("npm ci failed (offline?): skipping the hyparquet/apache-arrow check: %v\n%s", err, out)
		}
	})
	if nodeInstall.skip != "" {
		nodeSkip(t, nodeInstall.skip)
	}
	return node, nodeDir
}

type source interface {
	Next() ([]byte, int64, error)
	Close() error
}

func drain(t *testing.T, r source) [][]byte {
	t.Helper()
	defer r.Close()
	var out [][]byte
	for {
		obj, _, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, bytes.Clone(obj))
	}
}

func asBytes(recs []string) [][]byte {
	var out [][]byte
	for _, r := range recs {
		out = append(out, []byte(r))
	}
	return out
}

// writeFiles writes recs as JSONL, Parquet (via InferSchema) and Arrow
// (schema inferred from what the Parquet reader returned: the any-to-any
// path) and returns the paths and the rows read back from the Arrow file.
func writeFiles(t *testing.T, dir string, recs [][]byte) (jsonlPath, pqPath, arPath string, final [][]byte) {
	t.Helper()
	jsonlPath = filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(jsonlPath, append(bytes.Join(recs, []byte("\n")), '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	ps, err := parquet.InferSchema(recs)
	if err != nil {
		t.Fatal(err)
	}
	pqPath = filepath.Join(dir, "out.parquet")
	pw, err := parquet.Create(pqPath, ps, parquet.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := pw.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	pr, err := parquet.Open(pqPath)
	if err != nil {
		t.Fatal(err)
	}
	fromPQ := drain(t, pr)
	as, err := arrow.InferSchema(fromPQ)
	if err != nil {
		t.Fatal(err)
	}
	arPath = filepath.Join(dir, "out.arrow")
	aw, err := arrow.Create(arPath, as, arrow.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range fromPQ {
		if err := aw.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := aw.Close(); err != nil {
		t.Fatal(err)
	}
	ar, err := arrow.Open(arPath)
	if err != nil {
		t.Fatal(err)
	}
	return jsonlPath, pqPath, arPath, drain(t, ar)
}

// TestJSONLParquetArrowJSONL: the same records come back,
// with null == absent key and nested keys in schema order.
func TestJSONLParquetArrowJSONL(t *testing.T) {
	t.Parallel()
	recs := asBytes(records)
	_, _, _, final := writeFiles(t, t.TempDir(), recs)
	if len(final) != len(recs) {
		t.Fatalf("got %d records, want %d", len(final), len(recs))
	}
	for i := range recs {
		want, _ := jsonval.Decode(recs[i])
		got, err := jsonval.Decode(final[i])
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if !jsonval.Equal(got, want, jsonval.EqualOptions{NullIsAbsent: true, IgnoreOrder: true}) {
			t.Errorf("record %d:\n got %s\nwant %s", i, final[i], recs[i])
		}
		if g, w := got.(*jsonval.Object).Keys, want.(*jsonval.Object).Keys; !slices.Equal(g, w) {
			t.Errorf("record %d: top-level key order %v, want %v", i, g, w)
		}
	}
}

// TestNodeReaders: hyparquet and apache-arrow read the
// files and agree with the JSONL.
func TestNodeReaders(t *testing.T) {
	t.Parallel()
	node, nodeDir := nodeSetup(t)
	jsonlPath, pqPath, arPath, _ := writeFiles(t, t.TempDir(), asBytes(records))
	cmd := exec.Command(node, "verify.mjs", "--jsonl", jsonlPath, "--parquet", pqPath, "--arrow", arPath)
	cmd.Dir = nodeDir
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("node verify.mjs: %v", err)
	}
	if !strings.Contains(string(out), "ok") {
		t.Fatal("verify.mjs did not report ok")
	}

	// The check must be able to fail: a JSONL that differs in one value.
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	data, err := os.ReadFile(jsonlPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, bytes.Replace(data, []byte(`"hello"`), []byte(`"hullo"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(node, "verify.mjs", "--jsonl", bad, "--parquet", pqPath, "--arrow", arPath)
	cmd.Dir = nodeDir
	out, err = cmd.CombinedOutput()
	if err == nil || strings.Count(string(out), "FAIL") != 2 {
		t.Fatalf("verify.mjs accepted a mismatching JSONL (err %v):\n%s", err, out)
	}
}

func readJSONL(t *testing.T, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var recs [][]byte
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) > 0 {
			recs = append(recs, bytes.TrimRight(line, "\r"))
		}
	}
	return recs
}

// TestRealData runs every JSONL file of the real data (testenv) through
// JSONL → Parquet → Arrow → JSONL (schemas inferred from the whole file) and
// compares each record; when node and the pinned npm packages are already
// installed it also runs verify.mjs on the outputs (under -short on the
// first file of each source only). Skipped when the shared data is absent.
func TestRealData(t *testing.T) {
	files, real := testenv.RealJSONL()
	if len(files) == 0 {
		t.Skipf("no real data under %s", real)
	}
	nodeDir := filepath.Join(moduleRoot(t), "format", "testdata", "node")
	node, nodeErr := exec.LookPath("node")
	if _, err := os.Stat(filepath.Join(nodeDir, "node_modules", "apache-arrow")); err != nil {
		nodeErr = err
	}
	nodeSources := map[string]bool{} // under -short node reads one file per source
	for _, file := range files {
		name := filepath.Base(filepath.Dir(file)) + "/" + filepath.Base(file)
		withNode := nodeErr == nil && (!testing.Short() || !nodeSources[filepath.Dir(file)])
		nodeSources[filepath.Dir(file)] = true
		t.Run(name, func(t *testing.T) {
			t.Parallel() // a file's round trip shares nothing with another's; verify.mjs waits on node
			recs := readJSONL(t, file)
			jsonlPath, pqPath, arPath, final := writeFiles(t, t.TempDir(), recs)
			if len(final) != len(recs) {
				t.Fatalf("got %d records, want %d", len(final), len(recs))
			}
			for i := range recs {
				want, err := jsonval.Decode(recs[i])
				if err != nil {
					t.Fatalf("line %d: %v", i+1, err)
				}
				got, err := jsonval.Decode(final[i])
				if err != nil {
					t.Fatalf("line %d: output is not JSON: %v", i+1, err)
				}
				if !jsonval.Equal(got, want, jsonval.EqualOptions{NullIsAbsent: true, IgnoreOrder: true}) {
					t.Fatalf("line %d differs after the round trip:\n got %.400s\nwant %.400s", i+1, final[i], recs[i])
				}
			}
			if !withNode {
				return
			}
			cmd := exec.Command(node, "verify.mjs", "--jsonl", jsonlPath, "--parquet", pqPath, "--arrow", arPath)
			cmd.Dir = nodeDir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("verify.mjs: %v\n%s", err, out)
			}
		})
	}
}
