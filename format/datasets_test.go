package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/format/arrow"
)

func TestDiskDatasetUpdated(t *testing.T) {
	dir := t.TempDir()
	if d, err := OpenDiskDataset(dir); d != nil || err != nil {
		t.Fatalf("no state.json: %v, %v", d, err)
	}
	os.WriteFile(filepath.Join(dir, StateFile), []byte(`{"_data_files": [{"filename": "data-00000-of-00002.arrow"}, {"filename": "data-00001-of-00002.arrow"}], "_fingerprint": "aaaa", "_format_columns": null, "_split": "train"}`), 0o644)
	os.WriteFile(filepath.Join(dir, DatasetInfoFile), []byte(`{"dataset_size": 10, "download_size": 7, "features": {"a": {"dtype": "string", "_type": "Value"}}, "size_in_bytes": 17, "splits": {"train": {"name": "train", "num_bytes": 6, "num_examples": 3}, "test": {"name": "test", "num_bytes": 4, "num_examples": 1}}}`), 0o644)
	d, err := OpenDiskDataset(dir)
	if err != nil {
		t.Fatal(err)
	}
	files, err := d.DataFiles()
	if err != nil || strings.Join(files, " ") != "data-00000-of-00002.arrow data-00001-of-00002.arrow" || d.Fingerprint() != "aaaa" {
		t.Fatalf("%v %v %s", files, err, d.Fingerprint())
	}
	hf := `{"info":{"features":{"a":{"dtype":"string","_type":"Value"},"compression_metrics":{"n":{"dtype":"int64","_type":"Value"}}}}}`
	state, info, err := d.Updated(DiskUpdate{HF: hf, Rows: 2, Bytes: 100, Fingerprint: "bbbb"})
	if err != nil {
		t.Fatal(err)
	}
	wantState := `{
  "_data_files": [
    {
      "filename": "data-00000-of-00002.arrow"
    },
    {
      "filename": "data-00001-of-00002.arrow"
    }
  ],
  "_fingerprint": "bbbb",
  "_format_columns": null,
  "_split": "train"
}`
	if string(state) != wantState {
		t.Errorf("state.json:\n%s\nwant\n%s", state, wantState)
	}
	for _, want := range []string{`"dataset_size": 104,`, `"size_in_bytes": 111,`, `"num_bytes": 100,
      "num_examples": 2`, `"compression_metrics": {
      "n": {`, `"test": {
      "name": "test",
      "num_bytes": 4,
      "num_examples": 1`} {
		if !strings.Contains(string(info), want) {
			t.Errorf("dataset_info.json lacks %s:\n%s", want, info)
		}
	}
	os.WriteFile(filepath.Join(dir, StateFile), []byte(`{"_data_files": [{"filename": "../x.arrow"}]}`), 0o644)
	d, _ = OpenDiskDataset(dir)
	if _, err := d.DataFiles(); err == nil {
		t.Error("a data file outside the directory: want an error")
	}
	// A state.json that is not datasets' (not an object, or without
	// _data_files: a training state) makes no save_to_disk directory.
	for _, state := range []string{`[]`, `{"step": 3}`} {
		os.WriteFile(filepath.Join(dir, StateFile), []byte(state), 0o644)
		if d, err := OpenDiskDataset(dir); d != nil || err != nil {
			t.Errorf("state.json %s: got %v, %v; want not a dataset, no error", state, d, err)
		}
	}
	// datasets' state.json without its dataset_info.json: an error of
	// its own kind, naming the directory.
	os.WriteFile(filepath.Join(dir, StateFile), []byte(`{"_data_files": [{"filename": "x.arrow"}]}`), 0o644)
	os.Remove(filepath.Join(dir, DatasetInfoFile))
	var bad DiskDatasetError
	if _, err := OpenDiskDataset(dir); !errors.As(err, &bad) || !strings.Contains(err.Error(), dir) {
		t.Errorf("no dataset_info.json: %v", err)
	}
}

// TestDiskDatasetImageFeatures: a save_to_disk directory whose features
// hold datasets Image values keeps them Image in the copy's
// dataset_info.json, through the Arrow writer (which adds the extra
// column's feature to the "huggingface" metadata) and Updated, so that
// load_from_disk decodes those columns as images again.
func TestDiskDatasetImageFeatures(t *testing.T) {
	feats, s := imageFeatures, imageSchema()

	dir := t.TempDir()
	w, err := arrow.Create(filepath.Join(dir, "data-00000-of-00001.arrow"), s, arrow.WriterOptions{Extra: arrow.Column{Name: "compression_metrics", Sample: []byte(`{"n":1}`)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write([]byte(`{"images":[null,{"bytes":"iVBORw0KGgo=","path":null}],"messages":[{"role":"user","content":[{"type":"text","image":null}]}],"compression_metrics":{"n":3}}`)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	hf, _ := w.Schema().Metadata(HFMetadata)

	os.WriteFile(filepath.Join(dir, StateFile), []byte(`{"_data_files": [{"filename": "data-00000-of-00001.arrow"}], "_fingerprint": "aaaa", "_split": null}`), 0o644)
	os.WriteFile(filepath.Join(dir, DatasetInfoFile), []byte(`{"features": `+feats+`}`), 0o644)
	d, err := OpenDiskDataset(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, info, err := d.Updated(DiskUpdate{HF: hf, Rows: 1, Fingerprint: "bbbb"})
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Features map[string]json.RawMessage }
	if err := json.Unmarshal(info, &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"images", "messages"} {
		var want map[string]json.RawMessage
		json.Unmarshal([]byte(feats), &want) //nolint:errcheck // a constant
		if !bytes.Equal(compactJSON(t, got.Features[k]), compactJSON(t, want[k])) {
			t.Errorf("dataset_info.json feature %s = %s, want %s", k, got.Features[k], want[k])
		}
	}
	if _, ok := got.Features["compression_metrics"]; !ok || strings.Count(string(info), `"_type": "Image"`) != 2 {
		t.Errorf("dataset_info.json:\n%s", info)
	}
}

func compactJSON(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
