package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/format"
	arrowfmt "github.com/trajcompress/trajcompress/format/arrow"
	"github.com/trajcompress/trajcompress/format/parquet"
)

// hfFeatures is the `datasets` features JSON of the generator's records.
const hfFeatures = `{"info":{"features":{"id":{"dtype":"string","_type":"Value"},"conversations":{"feature":{"from":{"dtype":"string","_type":"Value"},"value":{"dtype":"string","_type":"Value"}},"_type":"Sequence"},"model":{"dtype":"string","_type":"Value"},"completed":{"dtype":"bool","_type":"Value"},"metadata":{"generator":{"dtype":"string","_type":"Value"},"profile":{"dtype":"string","_type":"Value"},"index":{"dtype":"int64","_type":"Value"}}}}}`

// hubInputs writes the same generated records as JSONL, a JSON array,
// Parquet and Arrow (stream and file format), the tabular ones with the
// "huggingface" features metadata `datasets` writes.
func hubInputs(t *testing.T, dir string) map[string]string {
	t.Helper()
	src := filepath.Join(dir, "src.jsonl")
	mustRun(t, "fixtures", "--output", src, "--count", "60", "--seed", "11", "--profile", "coding", "--median-tokens", "3000")
	var recs [][]byte
	for _, r := range lines(t, src) {
		if json.Valid(r) && r[0] == '{' {
			recs = append(recs, r)
		}
	}
	os.WriteFile(src, append(bytes.Join(recs, []byte("\n")), '\n'), 0o644)
	files := map[string]string{"jsonl": src, "json": filepath.Join(dir, "src.json")}
	llamaFactoryJSON(t, files["json"], recs)
	pqIn := filepath.Join(dir, "src.parquet")
	mustRun(t, "compress", "--quiet", "--input", src, "--output", pqIn, "--target-max-tokens", "100000000", "--config", writeConfig(t, dir, "metrics:\n  per_trajectory: false\n"))
	r, err := parquet.Open(pqIn)
	if err != nil {
		t.Fatal(err)
	}
	sch := r.Schema().WithKeyValues(parquet.KeyValue{Key: "huggingface", Value: hfFeatures})
	r.Close()
	files["parquet"] = filepath.Join(dir, "hub.parquet")
	w, err := parquet.Create(files["parquet"], sch, parquet.WriterOptions{})
	writeAll(t, w, err, recs)
	for _, kind := range []string{"stream", "file"} {
		p := filepath.Join(dir, "hub_"+kind+".arrow")
		as, err := arrowfmt.InferSchema(recs)
		if err != nil {
			t.Fatal(err)
		}
		aw, err := arrowfmt.Create(p, as.WithMetadata(map[string]string{"huggingface": hfFeatures}), arrowfmt.WriterOptions{Format: kind})
		writeAll(t, aw, err, recs)
		files["arrow "+kind] = p
	}
	return files
}

// writeAll writes recs through w (made with error err) and closes it.
func writeAll(t *testing.T, w interface {
	Write([]byte) error
	Close() error
}, err error, recs [][]byte) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs {
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

var outExt = map[string]string{"jsonl": ".jsonl", "json": ".json", "parquet": ".parquet", "arrow stream": ".arrow", "arrow file": ".arrow"}

// checkMetricsColumn: every compression_metrics in the file is null or an
// object with the per-record fields (never JSON text), and there is at
// least one object.
func checkMetricsColumn(t *testing.T, path string) {
	t.Helper()
	objects := 0
	for i, b := range readRecords(t, path) {
		var r map[string]json.RawMessage
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		m, ok := r["compression_metrics"]
		if !ok || string(m) == "null" {
			continue
		}
		var o map[string]any
		if err := json.Unmarshal(m, &o); err != nil || o["original_tokens"] == nil || o["compression_region"] == nil {
			t.Fatalf("%s record %d: compression_metrics is %.80s, want an object", filepath.Base(path), i+1, m)
		}
		objects++
	}
	if objects == 0 {
		t.Fatalf("%s: no compression_metrics object", filepath.Base(path))
	}
}

// TestRecompressOwnOutput: the tool compresses its own output again, in
// every format pair (Parquet and Arrow failed: "key compression_metrics:
// want a string, got object"), with a tighter target so that records
// compressed before are compressed again; compression_metrics is an
// object in JSONL and JSON and a struct column in Parquet and Arrow,
// whatever the pair.
func TestRecompressOwnOutput(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	ins := hubInputs(t, tmp)
	froms := slices.Sorted(maps.Keys(ins))
	for i, from := range froms {
		in := ins[from]
		first := filepath.Join(tmp, "first_"+strings.ReplaceAll(from, " ", "_")+outExt[from])
		mustRun(t, "compress", "--quiet", "--input", in, "--output", first, "--target-max-tokens", "4000", "--summary-target-tokens", "200")
		checkMetricsColumn(t, first)
		for j, to := range []string{"jsonl", "json", "parquet", "arrow"} {
			if testing.Short() && (i+j)%2 == 0 {
				// Under -short, half the pairs (a checkerboard: every
				// format is still read and written, and Parquet and Arrow
				// go to each other); all of them without -short.
				continue
			}
			t.Run(from+"_to_"+to, func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "again."+to)
				outcomes := filepath.Join(t.TempDir(), "o.jsonl")
				mustRun(t, "compress", "--quiet", "--input", first, "--output", out, "--target-max-tokens", "2500", "--summary-target-tokens", "200", "--outcomes", outcomes)
				checkMetricsColumn(t, out)
				if to == "json" {
					pythonLoads(t, out, true)
				}
				again := 0
				for _, l := range lines(t, outcomes) {
					if bytes.Contains(l, []byte(`"outcome":"compressed`)) {
						again++
					}
				}
				if again == 0 {
					t.Fatal("nothing was compressed the second time: the test proves nothing")
				}
			})
		}
	}
}

// TestArrowIPCFormatKept: Arrow file format in gives file format out,
// stream in gives stream out.
func TestArrowIPCFormatKept(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	ins := hubInputs(t, tmp)
	for kind, magic := range map[string][]byte{"stream": {0xff, 0xff, 0xff, 0xff}, "file": []byte("ARROW1")} {
		out := filepath.Join(tmp, "out_"+kind+".arrow")
		mustRun(t, "compress", "--quiet", "--input", ins["arrow "+kind], "--output", out, "--target-max-tokens", "2500")
		b, _ := os.ReadFile(out)
		if !bytes.HasPrefix(b, magic) {
			t.Errorf("%s in: output starts with %x, want %x", kind, b[:8], magic)
		}
		if kind == "file" && !bytes.HasSuffix(b, []byte("ARROW1")) {
			t.Error("file format out has no footer magic")
		}
	}
}

// TestHuggingFaceMetadataSurvives: the "huggingface" features survive
// Parquet → Parquet, Arrow → Parquet, Parquet → Arrow and Arrow → Arrow,
// with compression_metrics added as the struct it is; the features name
// exactly the output's columns, as `datasets` requires.
func TestHuggingFaceMetadataSurvives(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	ins := hubInputs(t, tmp)
	for _, from := range []string{"parquet", "arrow stream"} {
		for _, to := range []string{"parquet", "arrow"} {
			t.Run(from+"_to_"+to, func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "out."+to)
				mustRun(t, "compress", "--quiet", "--input", ins[from], "--output", out, "--target-max-tokens", "2500")
				in, err := format.Open(out, format.Options{})
				if err != nil {
					t.Fatal(err)
				}
				defer in.Close()
				meta, ok := in.Schema.Metadata("huggingface")
				if !ok {
					t.Fatal("no huggingface metadata in the output")
				}
				var hf struct {
					Info struct {
						Features map[string]json.RawMessage `json:"features"`
					} `json:"info"`
				}
				if err := json.Unmarshal([]byte(meta), &hf); err != nil {
					t.Fatal(err)
				}
				cols := in.Schema.Columns()
				if len(hf.Info.Features) != len(cols) {
					t.Errorf("features %d, columns %v", len(hf.Info.Features), cols)
				}
				for _, c := range cols {
					if _, ok := hf.Info.Features[c]; !ok {
						t.Errorf("column %s has no feature", c)
					}
				}
				if cm := string(hf.Info.Features["compression_metrics"]); !strings.Contains(cm, `"original_tokens":{"dtype":"int64","_type":"Value"}`) {
					t.Errorf("compression_metrics feature: %s", cm)
				}
				if !strings.Contains(string(hf.Info.Features["conversations"]), `"_type":"Sequence"`) {
					t.Errorf("conversations feature changed: %s", hf.Info.Features["conversations"])
				}
			})
		}
	}
}

// saveToDisk writes a `datasets` save_to_disk directory of recs in
// shards: data-0000x-of-0000n.arrow (IPC streams with the "huggingface"
// metadata), state.json and dataset_info.json as datasets writes them.
func saveToDisk(t *testing.T, dir, split string, recs [][]byte, shards int) {
	t.Helper()
	os.MkdirAll(dir, 0o755)
	as, err := arrowfmt.InferSchema(recs)
	if err != nil {
		t.Fatal(err)
	}
	as = as.WithMetadata(map[string]string{"huggingface": hfFeatures})
	var files []string
	for s := range shards {
		name := fmt.Sprintf("data-%05d-of-%05d.arrow", s, shards)
		files = append(files, `{"filename": "`+name+`"}`)
		var shard [][]byte
		for i := s; i < len(recs); i += shards {
			shard = append(shard, recs[i])
		}
		w, err := arrowfmt.Create(filepath.Join(dir, name), as, arrowfmt.WriterOptions{})
		writeAll(t, w, err, shard)
	}
	state := `{"_data_files": [` + strings.Join(files, ", ") + `], "_fingerprint": "4c2f3f0c2b2a1d0e", "_format_columns": null, "_format_kwargs": {}, "_format_type": null, "_output_all_columns": false, "_split": "` + split + `"}`
	var features struct {
		Info struct {
			Features json.RawMessage `json:"features"`
		} `json:"info"`
	}
	json.Unmarshal([]byte(hfFeatures), &features)
	info := `{"builder_name": "json", "citation": "", "config_name": "default", "dataset_name": "json", "dataset_size": 999, "description": "", "download_size": 100, "features": ` + string(features.Info.Features) +
		`, "homepage": "", "license": "", "size_in_bytes": 1099, "splits": {"` + split + `": {"name": "` + split + `", "num_bytes": 999, "num_examples": ` + fmt.Sprint(len(recs)) + `, "dataset_name": "json"}}, "version": {"version_str": "0.0.0", "major": 0, "minor": 0, "patch": 0}}`
	for name, body := range map[string]string{"state.json": state, "dataset_info.json": info} {
		var b bytes.Buffer
		json.Indent(&b, []byte(body), "", "  ")
		os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644)
	}
}

// checkLoadFromDisk checks dir as datasets.load_from_disk would read it
// (Dataset.load_from_disk and Dataset.__init__): state.json names data
// files that are Arrow IPC streams; dataset_info.json's features name
// exactly the files' columns and equal the features in each file's
// schema metadata (datasets compares the types and raises "External
// features info don't match the dataset"); the split's num_examples is
// the rows. It returns the state and the info.
func checkLoadFromDisk(t *testing.T, dir string) (state, info map[string]any) {
	t.Helper()
	for name, v := range map[string]*map[string]any{"state.json": &state, "dataset_info.json": &info} {
		pythonLoads(t, filepath.Join(dir, name), true)
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatal(err)
		}
	}
	infoFeatures, _ := json.Marshal(info["features"])
	rows := 0
	for _, f := range state["_data_files"].([]any) {
		p := filepath.Join(dir, f.(map[string]any)["filename"].(string))
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, []byte{0xff, 0xff, 0xff, 0xff}) {
			t.Errorf("%s is not an Arrow IPC stream", p)
		}
		in, err := format.Open(p, format.Options{})
		if err != nil {
			t.Fatal(err)
		}
		meta, _ := in.Schema.Metadata("huggingface")
		var hf struct {
			Info struct {
				Features map[string]any `json:"features"`
			} `json:"info"`
		}
		json.Unmarshal([]byte(meta), &hf)
		fileFeatures, _ := json.Marshal(hf.Info.Features)
		if string(fileFeatures) != string(infoFeatures) {
			t.Errorf("%s: dataset_info.json features\n%s\ndiffer from the file's\n%s", p, infoFeatures, fileFeatures)
		}
		cols := in.Schema.Columns()
		if len(cols) != len(hf.Info.Features) {
			t.Errorf("%s: columns %v, features %d", p, cols, len(hf.Info.Features))
		}
		for {
			if _, _, err := in.Next(); err != nil {
				break
			}
			rows++
		}
		in.Close()
	}
	split := state["_split"].(string)
	if n := info["splits"].(map[string]any)[split].(map[string]any)["num_examples"].(float64); int(n) != rows {
		t.Errorf("num_examples %v, rows %d", n, rows)
	}
	return state, info
}

// TestSaveToDiskDirectory: a datasets save_to_disk directory (a Dataset,
// and a DatasetDict of two splits) gives a directory of the layout
// load_from_disk expects: the Arrow streams under the same names,
// state.json with a new fingerprint and the same data files,
// dataset_info.json with the features of the written files
// (compression_metrics included) and the split's rows and bytes.
func TestSaveToDiskDirectory(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	ins := hubInputs(t, tmp)
	recs := readRecords(t, ins["jsonl"])
	ds := filepath.Join(tmp, "ds")
	saveToDisk(t, ds, "train", recs, 2)
	dict := filepath.Join(tmp, "dict")
	saveToDisk(t, filepath.Join(dict, "train"), "train", recs[:40], 2)
	saveToDisk(t, filepath.Join(dict, "test"), "test", recs[40:], 1)
	os.WriteFile(filepath.Join(dict, "dataset_dict.json"), []byte(`{"splits": ["train", "test"]}`), 0o644)

	out := filepath.Join(tmp, "ds_small")
	m := filepath.Join(tmp, "m.json")
	mustRun(t, "compress", "--quiet", "--input", ds, "--output", out, "--target-max-tokens", "2500", "--metrics", m)
	state, info := checkLoadFromDisk(t, out)
	if fp := state["_fingerprint"].(string); fp == "4c2f3f0c2b2a1d0e" || len(fp) != 16 {
		t.Errorf("fingerprint %q: want a new 16-hex-digit one", fp)
	}
	if _, ok := info["features"].(map[string]any)["compression_metrics"]; !ok {
		t.Error("dataset_info.json features lack compression_metrics")
	}
	split := info["splits"].(map[string]any)["train"].(map[string]any)
	var size int64
	for _, n := range []string{"data-00000-of-00002.arrow", "data-00001-of-00002.arrow"} {
		st, _ := os.Stat(filepath.Join(out, n))
		size += st.Size()
	}
	if int64(split["num_bytes"].(float64)) != size || int64(info["dataset_size"].(float64)) != size || int64(info["size_in_bytes"].(float64)) != size+100 {
		t.Errorf("sizes: num_bytes %v, dataset_size %v, size_in_bytes %v; want %d, %d, %d", split["num_bytes"], info["dataset_size"], info["size_in_bytes"], size, size, size+100)
	}
	if b, _ := os.ReadFile(m); !bytes.Contains(b, []byte(`"path": "ds_small/state.json"`)) || !bytes.Contains(b, []byte(`"path": "ds_small/dataset_info.json"`)) {
		t.Errorf("the metrics do not vouch for state.json and dataset_info.json:\n%s", b)
	}
	// Run again: the same bytes (the fingerprint is derived, not random).
	b1, _ := os.ReadFile(filepath.Join(out, "state.json"))
	mustRun(t, "compress", "--quiet", "--input", ds, "--output", filepath.Join(tmp, "again"), "--target-max-tokens", "2500")
	if b2, _ := os.ReadFile(filepath.Join(tmp, "again", "state.json")); !bytes.Equal(b1, b2) {
		t.Errorf("state.json differs between two identical runs:\n%s\n%s", b1, b2)
	}

	dictOut := filepath.Join(tmp, "dict_small")
	mustRun(t, "compress", "--quiet", "--input", dict, "--output", dictOut, "--target-max-tokens", "2500")
	for _, s := range []string{"train", "test"} {
		st, _ := checkLoadFromDisk(t, filepath.Join(dictOut, s))
		if st["_split"] != s {
			t.Errorf("%s: _split %v", s, st["_split"])
		}
	}
	if b, err := os.ReadFile(filepath.Join(dictOut, "dataset_dict.json")); err != nil || string(b) != `{"splits": ["train", "test"]}` {
		t.Errorf("dataset_dict.json: %q, %v", b, err)
	}

	// Written as Parquet, it is no longer a save_to_disk directory: no
	// state.json, and a note says why.
	stderr := mustRun(t, "compress", "--input", ds, "--output", filepath.Join(tmp, "pq"), "--output-format", "parquet", "--target-max-tokens", "2500")
	if _, err := os.Stat(filepath.Join(tmp, "pq", "state.json")); err == nil || !strings.Contains(stderr, "load_from_disk reads Arrow") {
		t.Errorf("parquet output: state.json written or no note (%v):\n%s", err, stderr)
	}
}
