package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/format/parquet"
)

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	var stderr bytes.Buffer
	if code := run(context.Background(), args, nil, &bytes.Buffer{}, &stderr); code != exitOK && code != exitPartial {
		t.Fatalf("%v: exit %d: %s", args, code, stderr.String())
	}
	return stderr.String()
}

// normalize decodes a record and drops null-valued keys: Parquet and
// Arrow have no "absent", so an absent key reads back as null.
func normalize(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	var strip func(any) any
	strip = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if e == nil {
					delete(x, k)
				} else {
					x[k] = strip(e)
				}
			}
		case []any:
			for i := range x {
				x[i] = strip(x[i])
			}
		}
		return v
	}
	return strip(v)
}

func lines(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
}

// TestFormatRoundTrip: JSONL → Parquet → Arrow → JSONL of records that are
// not compressed gives back the same records.
func TestFormatRoundTrip(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	in := filepath.Join(tmp, "in.jsonl")
	mustRun(t, "fixtures", "--output", in, "--count", "60", "--seed", "3", "--profile", "parallel", "--dialect", "openai", "--median-tokens", "800")
	pq := filepath.Join(tmp, "a.parquet")
	ar := filepath.Join(tmp, "b.arrow")
	back := filepath.Join(tmp, "c.jsonl")
	big := "100000000" // nothing is compressed
	mustRun(t, "compress", "--quiet", "--input", in, "--output", pq, "--target-max-tokens", big)
	mustRun(t, "compress", "--quiet", "--input", pq, "--output", ar, "--target-max-tokens", big)
	mustRun(t, "compress", "--quiet", "--input", ar, "--output", back, "--target-max-tokens", big)
	want, got := lines(t, in), lines(t, back)
	if len(want) != len(got) {
		t.Fatalf("%d records in, %d back", len(want), len(got))
	}
	for i := range want {
		if w, g := normalize(t, want[i]), normalize(t, got[i]); !reflect.DeepEqual(w, g) {
			t.Fatalf("record %d changed in the round trip:\n in: %.300s\nout: %.300s", i+1, want[i], got[i])
		}
	}
}

// TestParquetCompressKeepsSchema: a hub-style Parquet file compresses into
// Parquet with the same columns (plus compression_metrics), rows in order,
// tool pairs intact.
func TestParquetCompressKeepsSchema(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	src := filepath.Join(tmp, "train.parquet")
	mustRun(t, "fixtures", "--output", src, "--format", "parquet", "--count", "80", "--seed", "5", "--profile", "coding", "--median-tokens", "3000")
	out := filepath.Join(tmp, "train_small.parquet")
	outcomes := filepath.Join(tmp, "o.jsonl")
	mustRun(t, "compress", "--quiet", "--input", src, "--output", out, "--target-max-tokens", "2500", "--summary-target-tokens", "200", "--outcomes", outcomes)

	rin, err := parquet.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer rin.Close()
	rout, err := parquet.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer rout.Close()
	wantCols := append(rin.Schema().Columns(), "compression_metrics")
	if got := rout.Schema().Columns(); !reflect.DeepEqual(got, wantCols) {
		t.Fatalf("columns %v, want %v", got, wantCols)
	}
	compressed := 0
	for _, l := range lines(t, outcomes) {
		var o outcomeLine
		json.Unmarshal(l, &o)
		inRow, _, err := rin.Next()
		if err != nil {
			t.Fatal(err)
		}
		inRow = bytes.Clone(inRow)
		outRow, _, err := rout.Next()
		if err != nil {
			t.Fatal(err)
		}
		if o.Outcome == "compressed" || o.Outcome == "compressed_over_limit" {
			compressed++
			checkCompressed(t, o, inRow, outRow)
		}
	}
	if _, _, err := rout.Next(); err != io.EOF {
		t.Fatalf("extra rows in the output: %v", err)
	}
	if compressed == 0 {
		t.Fatal("nothing compressed: the test does not exercise Parquet output")
	}
}

// TestShardDirectory: a directory of Parquet shards is read like a
// directory of JSONL files, one output per shard, same names.
func TestShardDirectory(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	data := filepath.Join(tmp, "data")
	os.Mkdir(data, 0o755)
	for i, name := range []string{"train-00000-of-00002.parquet", "train-00001-of-00002.parquet"} {
		mustRun(t, "fixtures", "--output", filepath.Join(data, name), "--format", "parquet", "--count", "10", "--seed", string(rune('1'+i)), "--profile", "short")
	}
	mustRun(t, "compress", "--quiet", "--input", data)
	for _, name := range []string{"train-00000-of-00002.parquet", "train-00001-of-00002.parquet", "compression_metrics.json"} {
		if _, err := os.Stat(filepath.Join(tmp, "data_compressed", name)); err != nil {
			t.Error(err)
		}
	}
}

func TestTabularBadInput(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	pq2 := filepath.Join(tmp, "text.parquet")
	mustRun(t, "fixtures", "--output", pq2, "--format", "parquet", "--count", "3", "--profile", "short")
	w, _ := os.ReadFile(pq2)

	cases := []struct {
		name, input, want string
	}{
		{"truncated", "trunc.parquet", "trunc.parquet"},
		{"not_parquet", "garbage.parquet", "garbage.parquet"},
		{"not_arrow", "garbage.arrow", "garbage.arrow"},
	}
	os.WriteFile(filepath.Join(tmp, "trunc.parquet"), w[:len(w)/2], 0o644)
	os.WriteFile(filepath.Join(tmp, "garbage.parquet"), []byte(strings.Repeat("not parquet ", 100)), 0o644)
	os.WriteFile(filepath.Join(tmp, "garbage.arrow"), []byte(strings.Repeat("not arrow ", 100)), 0o644)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(tmp, c.name+"_out.jsonl")
			var stderr bytes.Buffer
			code := run(context.Background(), []string{"compress", "--quiet", "--input", filepath.Join(tmp, c.input), "--output", out}, nil, &bytes.Buffer{}, &stderr)
			if code != exitError || !strings.Contains(stderr.String(), c.want) {
				t.Fatalf("exit %d, stderr %q: want exit 1 naming %s", code, stderr.String(), c.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("output put in place after a read error")
			}
		})
	}
	t.Run("missing_turns_column", func(t *testing.T) {
		var stderr bytes.Buffer
		pqRows := filepath.Join(tmp, "rows.parquet")
		os.WriteFile(filepath.Join(tmp, "rows.jsonl"), []byte(`{"conversations": [{"from": "human", "value": "x"}], "text": "a"}`+"\n"), 0o644)
		mustRun(t, "compress", "--quiet", "--input", filepath.Join(tmp, "rows.jsonl"), "--output", pqRows)
		code := run(context.Background(), []string{"compress", "--quiet", "--input", pqRows, "--output", filepath.Join(tmp, "y.jsonl"), "--config", writeConfig(t, tmp, "input:\n  turns_key: dialog\n")}, nil, &bytes.Buffer{}, &stderr)
		if code != exitError || !strings.Contains(stderr.String(), "rows.parquet: no dialog column") {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
	})
}

func writeConfig(t *testing.T, dir, body string) string {
	t.Helper()
	p := filepath.Join(dir, "cfg.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFailureLeavesNothingInPlace: in directory mode, a read error in a
// later file leaves no output of an earlier file in place, nor a rejects
// file that would look complete. The earlier file's finished task is kept
// in the hidden run directory, for a run that goes on from there, and the
// error says so.
func TestFailureLeavesNothingInPlace(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	runs := filepath.Join(tmp, "runs")
	os.Mkdir(runs, 0o755)
	os.WriteFile(filepath.Join(runs, "a.jsonl"), []byte(`{"conversations":[{"from":"human","value":"hi"}]}`+"\nnot json\n"), 0o644)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	for range 2000 {
		zw.Write([]byte(`{"conversations":[{"from":"human","value":"hello there"}]}` + "\n"))
	}
	zw.Close()
	os.WriteFile(filepath.Join(runs, "b.jsonl.gz"), gz.Bytes()[:gz.Len()/2], 0o644)
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"compress", "--quiet", "--input", runs}, nil, &bytes.Buffer{}, &stderr)
	if code != exitError || !strings.Contains(stderr.String(), "b.jsonl.gz") || !strings.Contains(stderr.String(), "1 of 2 tasks are done and kept in") {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(tmp, ".runs_compressed.tc-run")); err != nil {
		t.Fatalf("the finished task was not kept: %v", err)
	}
	os.RemoveAll(filepath.Join(tmp, ".runs_compressed.tc-run"))
	ents, _ := os.ReadDir(tmp)
	if len(ents) != 1 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("left beside the input after a failed run: %v", names)
	}
}

func TestOutputPathsMustDiffer(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	in := filepath.Join(tmp, "in.jsonl")
	os.WriteFile(in, []byte(`{"conversations":[{"from":"human","value":"hi"}]}`+"\n"), 0o644)
	out := filepath.Join(tmp, "out.jsonl")
	cases := [][]string{
		{"--output", out, "--rejects", out},
		{"--output", out, "--metrics", out},
		{"--output", out, "--outcomes", filepath.Join(tmp, "x.jsonl"), "--rejects", filepath.Join(tmp, "x.jsonl")},
		{"--output", in},
		{"--output", tmp},
		// --output out.jsonl.gz is no longer refused: it writes out.jsonl,
		// with a note (job.TestCompressedOutputIsPlain).
	}
	for _, c := range cases {
		var stderr bytes.Buffer
		args := append([]string{"compress", "--quiet", "--input", in}, c...)
		if code := run(context.Background(), args, nil, &bytes.Buffer{}, &stderr); code != exitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", c, code, exitUsage, stderr.String())
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("an output was written by a refused run")
	}
}

// TestSampling: --sample-percent with --seed picks max(1, ⌊n·p/100⌋)
// records, the same ones every time, in input order.
func TestSampling(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	in := filepath.Join(tmp, "in.jsonl")
	mustRun(t, "fixtures", "--output", in, "--count", "41", "--seed", "4", "--profile", "short")
	sample := func(seed string) []outcomeLine {
		o := filepath.Join(t.TempDir(), "o.jsonl")
		mustRun(t, "compress", "--quiet", "--input", in, "--output", filepath.Join(t.TempDir(), "out.jsonl"),
			"--sample-percent", "25", "--seed", seed, "--outcomes", o)
		var got []outcomeLine
		for _, l := range lines(t, o) {
			var x outcomeLine
			json.Unmarshal(l, &x)
			got = append(got, x)
		}
		return got
	}
	a, b, c := sample("7"), sample("7"), sample("8")
	if len(a) != 10 { // ⌊41 × 25 / 100⌋
		t.Fatalf("sampled %d records, want 10", len(a))
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same seed sampled different records")
	}
	if reflect.DeepEqual(a, c) {
		t.Fatal("another seed sampled the same records")
	}
	for i := 1; i < len(a); i++ {
		if a[i].Line <= a[i-1].Line {
			t.Fatalf("sample not in input order: line %d after %d", a[i].Line, a[i-1].Line)
		}
	}
}
