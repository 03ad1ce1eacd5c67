package job

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/config"
)

// processLocal are the Spec fields that belong to one process: how it
// runs (its progress, its notes, its share of the tasks, whether it
// waits, resumes or starts over, its profile, the batch files it
// exchanges), never what the run writes, so no run directory keeps them.
// ToolVersion is kept, but as the manifest's own tool_version.
var processLocal = []string{"ToolVersion", "Wait", "Progress", "Stdin", "Notes", "Shard", "Resume", "Overwrite", "BatchExport", "BatchImport", "CPUProfile"}

// TestSpecFieldsPersistedOrLocal: every Spec field is the config, part of
// the persisted Settings, or listed as process-local; a new field must be
// put in one or the other, and every persisted one has its JSON name.
func TestSpecFieldsPersistedOrLocal(t *testing.T) {
	t.Parallel()
	local := map[string]bool{}
	for _, n := range processLocal {
		local[n] = true
	}
	st := reflect.TypeOf(Spec{})
	for i := 0; i < st.NumField(); i++ {
		f := st.Field(i)
		switch {
		case f.Name == "Config" || (f.Name == "Settings" && f.Anonymous):
		case local[f.Name]:
			delete(local, f.Name)
		default:
			t.Errorf("Spec.%s is neither in Settings (persisted in the run directory) nor listed in processLocal", f.Name)
		}
	}
	for n := range local {
		t.Errorf("processLocal lists %s, which Spec has no longer", n)
	}
	var tagged func(reflect.Type)
	tagged = func(ty reflect.Type) {
		for i := 0; i < ty.NumField(); i++ {
			f := ty.Field(i)
			if f.Anonymous {
				tagged(f.Type)
				continue
			}
			if f.Tag.Get("json") == "" {
				t.Errorf("Settings field %s has no json name", f.Name)
			}
		}
	}
	tagged(reflect.TypeOf(Settings{}))
}

// TestManifestSpecBytes pins the run.json "spec" a run writes (key names
// and order, as before Settings was one struct) and checks that merge
// reads back every persisted setting.
func TestManifestSpecBytes(t *testing.T) {
	t.Parallel()
	s := Settings{Input: "in", NoRecursive: true, FollowLinks: true,
		Paths:  Paths{Output: "o", Metrics: "m", Rejects: "r", Outcomes: "oc", Report: "rep", OutputFormatSet: true},
		DryRun: true, Sample: &Sample{Percent: 5, Seed: 7}, PriceIn: 1.5, PriceOut: 2.5, GroupBy: "src", TaskSize: 99, MaxRecordBytes: 1000}
	b, err := json.Marshal(specJSON{Config: json.RawMessage(`{}`), Settings: s})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"config":{},"input":"in","no_recursive":true,"follow_links":true,"output":"o","metrics":"m","rejects":"r","outcomes":"oc","report":"rep","output_format_set":true,"dry_run":true,"sample":{"Percent":5,"Seed":7},"price_in":1.5,"price_out":2.5,"group_by":"src","target_task_size":99,"max_record_bytes":1000}`
	if string(b) != want {
		t.Errorf("spec JSON\n got %s\nwant %s", b, want)
	}
	// Every field set (to a value other than its zero) survives the trip.
	v := reflect.ValueOf(&s).Elem()
	var zero func(reflect.Value)
	zero = func(v reflect.Value) {
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).Anonymous {
				zero(v.Field(i))
			} else if v.Field(i).IsZero() {
				t.Errorf("the test leaves Settings.%s unset", v.Type().Field(i).Name)
			}
		}
	}
	zero(v)
	cfg, _ := json.Marshal(config.Default())
	sp, err := manifest{Tool: "v9", Spec: specJSON{Config: cfg, Settings: s}}.spec(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(sp.Settings, s) || sp.ToolVersion != "v9" || !reflect.DeepEqual(sp.Config, config.Default()) {
		t.Errorf("manifest.spec: got %+v", sp)
	}
}

// TestMarkerKeys pins the keys of a task's marker, in order, as they were
// before the marker was grouped into embedded structs (the shard and the
// checksum came later, last).
func TestMarkerKeys(t *testing.T) {
	t.Parallel()
	sp := &span{Seg: "s"}
	m := marker{Version: 1, taskRef: taskRef{Task: 1, File: 2, Part: 3, Parts: 4}, Lines: 5, Relative: true, RowsOut: 6,
		taskSpans: taskSpans{sp, sp, sp}, blockShare: blockShare{7, []string{"b"}}, State: json.RawMessage(`{}`),
		Worst: nil, Input: &stamp{}, LLM: &llmStats{}, taskTimes: taskTimes{"a", "z"}, Shard: &shardRef{1, 2}, Sum: "c"}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.Token() // {
	var keys []string
	for dec.More() {
		k, _ := dec.Token()
		keys = append(keys, k.(string))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
	}
	// The checksum is the last key: seal and unsealed (verify.go) rely on it.
	want := "version task file part parts lines relative rows_out output rejects outcomes first_block blocks state input llm start end shard sum"
	if got := strings.Join(keys, " "); got != want {
		t.Errorf("marker keys\n got %s\nwant %s", got, want)
	}
}
