package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	pq "github.com/parquet-go/parquet-go"

	"github.com/trajcompress/trajcompress/format"
	arrowfmt "github.com/trajcompress/trajcompress/format/arrow"
	"github.com/trajcompress/trajcompress/format/parquet"
)

// pythonLoads reads path with CPython, strictly: the file decoded as
// UTF-8 (errors="strict") and json.loads on every line (JSON Lines) or on
// the whole file (JSON), a reader nobody here wrote. It skips the test
// with a message when python3 is not installed.
func pythonLoads(t *testing.T, path string, whole bool) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed: the CPython json.loads check is skipped")
	}
	script := `import json, sys
n = 0
with open(sys.argv[1], encoding="utf-8", errors="strict", newline="") as f:
    if sys.argv[2] == "whole":
        n = len(json.load(f))
    else:
        for line in f:
            if line.strip():
                json.loads(line)
                n += 1
print(n)`
	mode := "lines"
	if whole {
		mode = "whole"
	}
	out, err := exec.Command(py, "-c", script, path, mode).CombinedOutput()
	if err != nil {
		t.Fatalf("python3 json.loads %s: %v\n%s", path, err, out)
	}
}

// readRecords reads every record of a file through package format.
func readRecords(t *testing.T, path string) [][]byte {
	t.Helper()
	in, err := format.Open(path, format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var out [][]byte
	for {
		b, _, err := in.Next()
		if err != nil {
			if err.Error() == "EOF" {
				return out
			}
			t.Fatal(err)
		}
		out = append(out, b)
	}
}

// badUTF8 are texts with ill-formed UTF-8 as real files hold it: Latin-1
// and Windows-1252 bytes, a multi-byte sequence cut by a byte-limited
// truncation, a lone continuation byte, an encoded surrogate.
var badUTF8 = []string{"caf\xe9 cr\xe8me", "cut \xe4\xb8", "\x93quoted\x94", "lone \x80 byte", "surrogate \xed\xa0\x80"}

func badRecords() []string {
	var recs []string
	for i, s := range badUTF8 {
		v, _ := json.Marshal("question " + strings.Repeat("x", i))
		recs = append(recs, `{"conversations":[{"from":"human","value":`+string(v)+`},{"from":"gpt","value":"`+s+`"}],"id":"r`+string(rune('0'+i))+`"}`)
	}
	return recs
}

// TestInvalidUTF8Repaired: ill-formed UTF-8 in a JSONL input is replaced
// by U+FFFD and counted; every output, in every format, is valid UTF-8
// that CPython's strict decoder and json.loads accept; a rejected line
// keeps its exact bytes (raw_base64).
func TestInvalidUTF8Repaired(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	in := filepath.Join(tmp, "in.jsonl")
	recs := badRecords()
	badLine := "{\"conversations\": \"not a list \xe9\"}"
	os.WriteFile(in, []byte(strings.Join(recs, "\n")+"\n"+badLine+"\n"), 0o644)
	for _, f := range []string{"jsonl", "parquet", "arrow"} {
		t.Run(f, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out."+f)
			outcomes := filepath.Join(dir, "outcomes.jsonl")
			rejects := filepath.Join(dir, "rejects.jsonl")
			m := filepath.Join(dir, "m.json")
			mustRun(t, "compress", "--quiet", "--input", in, "--output", out, "--outcomes", outcomes, "--rejects", rejects, "--metrics", m)
			text := []string{outcomes, rejects, m}
			if f == "jsonl" {
				text = append(text, out)
			}
			for _, p := range text {
				b, _ := os.ReadFile(p)
				if !utf8.Valid(b) {
					t.Errorf("%s is not valid UTF-8", filepath.Base(p))
				}
			}
			got := readRecords(t, out)
			if len(got) != len(recs) {
				t.Fatalf("%d records out, want %d", len(got), len(recs))
			}
			for i, b := range got {
				if !utf8.Valid(b) || !bytes.Contains(b, []byte("\uFFFD")) {
					t.Errorf("record %d not repaired: %s", i, b)
				}
			}
			if f == "jsonl" {
				pythonLoads(t, out, false)
				if want := strings.NewReplacer("\xe9", "\uFFFD", "\xe8", "\uFFFD").Replace(recs[0]); string(got[0]) != want {
					t.Errorf("repair changed more than the bad bytes:\n got %s\nwant %s", got[0], want)
				}
			}
			pythonLoads(t, outcomes, false)
			pythonLoads(t, rejects, false)
			var rep struct {
				Outcomes struct {
					Repaired int64 `json:"records_utf8_repaired"`
					Rejected int64 `json:"records_rejected"`
				} `json:"outcomes"`
			}
			b, _ := os.ReadFile(m)
			json.Unmarshal(b, &rep)
			if rep.Outcomes.Repaired != int64(len(recs)) || rep.Outcomes.Rejected != 1 {
				t.Errorf("metrics: %d repaired, %d rejected; want %d, 1", rep.Outcomes.Repaired, rep.Outcomes.Rejected, len(recs))
			}
			var o struct {
				Line     int64 `json:"line"`
				Repaired int   `json:"utf8_repaired"`
			}
			json.Unmarshal(lines(t, outcomes)[1], &o)
			if o.Line != 2 || o.Repaired != 1 {
				t.Errorf("outcome line 2: %+v, want utf8_repaired 1", o)
			}
			var rej struct {
				Line      int64  `json:"line"`
				RawBase64 string `json:"raw_base64"`
			}
			json.Unmarshal(lines(t, rejects)[0], &rej)
			raw, _ := base64.StdEncoding.DecodeString(rej.RawBase64)
			if rej.Line != int64(len(recs)+1) || string(raw) != badLine {
				t.Errorf("reject: line %d, raw %q; want line %d, the line as read", rej.Line, raw, len(recs)+1)
			}
		})
	}
}

// TestInvalidUTF8InTabularInput: a Parquet or Arrow string column holding
// ill-formed UTF-8 (what another writer may leave) is repaired and counted
// exactly like a JSONL line.
func TestInvalidUTF8InTabularInput(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	var rows []pqRow
	for i, s := range badUTF8 {
		rows = append(rows, pqRow{Conversations: []pqTurn{{"human", "q"}, {"gpt", s}}, ID: "id" + string(rune('0'+i))})
	}
	pqIn := filepath.Join(tmp, "bad.parquet")
	if err := pq.WriteFile(pqIn, rows); err != nil {
		t.Fatal(err)
	}
	arIn := filepath.Join(tmp, "bad.arrow")
	writeArrowTurns(t, arIn, rows[0].Conversations, badUTF8)
	for _, in := range []string{pqIn, arIn} {
		for _, f := range []string{"jsonl", "parquet", "arrow"} {
			t.Run(filepath.Base(in)+"_to_"+f, func(t *testing.T) {
				dir := t.TempDir()
				out := filepath.Join(dir, "out."+f)
				m := filepath.Join(dir, "m.json")
				mustRun(t, "compress", "--quiet", "--input", in, "--output", out, "--metrics", m)
				for i, b := range readRecords(t, out) {
					if !utf8.Valid(b) || !bytes.Contains(b, []byte("\uFFFD")) {
						t.Errorf("record %d not repaired: %s", i, b)
					}
				}
				if f == "jsonl" {
					pythonLoads(t, out, false)
				}
				b, _ := os.ReadFile(m)
				if !bytes.Contains(b, []byte(`"records_utf8_repaired": 5`)) {
					t.Errorf("metrics do not count 5 repaired records:\n%s", b)
				}
			})
		}
	}
}

type pqTurn struct {
	From  string `parquet:"from"`
	Value string `parquet:"value"`
}

type pqRow struct {
	Conversations []pqTurn `parquet:"conversations,list"`
	ID            string   `parquet:"id"`
}

// writeArrowTurns writes an Arrow IPC stream with one row per value: a
// conversation of the two turns, the second turn's value replaced.
func writeArrowTurns(t *testing.T, path string, turns []pqTurn, values []string) {
	t.Helper()
	turnT := arrow.StructOf(arrow.Field{Name: "from", Type: arrow.BinaryTypes.String, Nullable: true}, arrow.Field{Name: "value", Type: arrow.BinaryTypes.String, Nullable: true})
	schema := arrow.NewSchema([]arrow.Field{{Name: "conversations", Type: arrow.ListOf(turnT), Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	lb := b.Field(0).(*array.ListBuilder)
	sb := lb.ValueBuilder().(*array.StructBuilder)
	for _, v := range values {
		lb.Append(true)
		for i, tr := range turns {
			sb.Append(true)
			sb.FieldBuilder(0).(*array.StringBuilder).Append(tr.From)
			val := tr.Value
			if i == 1 {
				val = v
			}
			sb.FieldBuilder(1).(*array.StringBuilder).Append(val)
		}
	}
	rec := b.NewRecord()
	defer rec.Release()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	w.Close()
	os.WriteFile(path, buf.Bytes(), 0o644)
}

// TestLineEndsAndBOM: a CRLF, a CR-only and a BOM-prefixed JSONL file give
// the records, line numbers and output of the plain LF file; output lines
// end in LF.
func TestLineEndsAndBOM(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	recs := []string{
		`{"conversations":[{"from":"human","value":"a"},{"from":"gpt","value":"b"}]}`,
		`{"conversations":[{"from":"human","value":"c"}]}`,
		`not json`,
	}
	variants := map[string]string{
		"lf":   strings.Join(recs, "\n") + "\n",
		"crlf": strings.Join(recs, "\r\n") + "\r\n",
		"cr":   strings.Join(recs, "\r") + "\r",
		"bom":  "\xef\xbb\xbf" + strings.Join(recs, "\r\n") + "\r\n",
	}
	results := map[string][3][]byte{}
	for name, content := range variants {
		dir := filepath.Join(tmp, name)
		os.Mkdir(dir, 0o755)
		in := filepath.Join(dir, "in.jsonl")
		os.WriteFile(in, []byte(content), 0o644)
		out, outcomes, rejects := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "o.jsonl"), filepath.Join(dir, "r.jsonl")
		mustRun(t, "compress", "--quiet", "--input", in, "--output", out, "--outcomes", outcomes, "--rejects", rejects)
		var r [3][]byte
		for i, p := range []string{out, outcomes, rejects} {
			r[i], _ = os.ReadFile(p)
			r[i] = bytes.ReplaceAll(r[i], []byte(dir), []byte("DIR"))
		}
		results[name] = r
	}
	want := results["lf"]
	if bytes.Contains(want[0], []byte("\r")) || !bytes.Contains(want[2], []byte(`"line":3`)) {
		t.Fatalf("LF run: output %q, rejects %q", want[0], want[2])
	}
	for name, r := range results {
		for i, what := range []string{"output", "outcomes", "rejects"} {
			if !bytes.Equal(r[i], want[i]) {
				t.Errorf("%s: %s differs from the LF file's:\n%s\nwant\n%s", name, what, r[i], want[i])
			}
		}
	}
}

// llamaFactoryJSON writes records as LLaMA-Factory ships a dataset: one
// JSON array, json.dump(indent=2, ensure_ascii=False).
func llamaFactoryJSON(t *testing.T, path string, recs [][]byte) {
	t.Helper()
	var vals []json.RawMessage
	for _, r := range recs {
		vals = append(vals, r)
	}
	b, err := json.MarshalIndent(vals, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, append(b, '\n'), 0o644)
}

// TestJSONArrayInput: a LLaMA-Factory .json dataset (one indented array)
// is read record by record like the same records as JSONL: the same
// outcomes and compressed records, outcome lines naming the line where
// each record starts and its index, and a .json output that CPython's
// json.load reads back as an array of the same length.
func TestJSONArrayInput(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	src := filepath.Join(tmp, "src.jsonl")
	mustRun(t, "fixtures", "--output", src, "--count", "40", "--seed", "9", "--profile", "coding", "--median-tokens", "3000")
	recs := lines(t, src)
	var objs [][]byte
	for _, r := range recs {
		if json.Valid(r) && r[0] == '{' {
			objs = append(objs, r)
		}
	}
	os.WriteFile(src, append(bytes.Join(objs, []byte("\n")), '\n'), 0o644)
	arr := filepath.Join(tmp, "data.json")
	llamaFactoryJSON(t, arr, objs)
	args := []string{"--target-max-tokens", "2500", "--summary-target-tokens", "200"}
	mustRun(t, append([]string{"compress", "--quiet", "--input", src, "--outcomes", filepath.Join(tmp, "o_jsonl.jsonl")}, args...)...)
	mustRun(t, append([]string{"compress", "--quiet", "--input", arr, "--outcomes", filepath.Join(tmp, "o_json.jsonl")}, args...)...)
	outJSON := filepath.Join(tmp, "data_compressed.json")
	pythonLoads(t, outJSON, true)
	var got []json.RawMessage
	b, _ := os.ReadFile(outJSON)
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := lines(t, filepath.Join(tmp, "src_compressed.jsonl"))
	if len(got) != len(want) {
		t.Fatalf("%d records in the .json output, %d in the .jsonl one", len(got), len(want))
	}
	for i := range want {
		var c bytes.Buffer
		json.Compact(&c, want[i])
		if !bytes.Equal(c.Bytes(), got[i]) && !reflect.DeepEqual(normalize(t, want[i]), normalize(t, got[i])) {
			t.Fatalf("record %d differs:\n json: %.200s\njsonl: %.200s", i+1, got[i], want[i])
		}
	}
	type oline struct {
		Line, Record int64
		Outcome      string
		TokensAfter  int `json:"tokens_after"`
	}
	read := func(p string) []oline {
		var out []oline
		for _, l := range lines(t, p) {
			var o oline
			json.Unmarshal(l, &o)
			out = append(out, o)
		}
		return out
	}
	oa, ob := read(filepath.Join(tmp, "o_jsonl.jsonl")), read(filepath.Join(tmp, "o_json.jsonl"))
	line := int64(2)
	for i := range oa {
		if oa[i].Outcome != ob[i].Outcome || oa[i].TokensAfter != ob[i].TokensAfter {
			t.Errorf("record %d: %+v from JSONL, %+v from the array", i+1, oa[i], ob[i])
		}
		if ob[i].Record != int64(i+1) || ob[i].Line != line {
			t.Errorf("record %d: line %d record %d, want line %d record %d", i+1, ob[i].Line, ob[i].Record, line, i+1)
		}
		var v json.RawMessage
		json.Unmarshal(objs[i], &v)
		ind, _ := json.MarshalIndent([]json.RawMessage{v}, "", "  ")
		line += int64(bytes.Count(ind, []byte("\n"))) - 1 // the element's lines, its comma line included
	}
}

// TestJSONArrayConversions: JSONL ↔ JSON ↔ Parquet ↔ Arrow keep the
// records; a .json file holding JSON Lines is read as JSON Lines and
// written as .jsonl; a rejected array element is named by line and index.
func TestJSONArrayConversions(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	in := filepath.Join(tmp, "in.jsonl")
	mustRun(t, "fixtures", "--output", in, "--count", "30", "--seed", "2", "--profile", "parallel", "--dialect", "openai", "--median-tokens", "800")
	big := "100000000" // nothing is compressed
	steps := []string{"a.json", "b.parquet", "c.json", "d.arrow", "e.json", "f.jsonl"}
	prev := in
	for _, s := range steps {
		out := filepath.Join(tmp, s)
		mustRun(t, "compress", "--quiet", "--input", prev, "--output", out, "--target-max-tokens", big)
		if strings.HasSuffix(s, ".json") {
			pythonLoads(t, out, true)
		}
		prev = out
	}
	want, got := lines(t, in), lines(t, prev)
	var wantObjs [][]byte
	for _, w := range want {
		if json.Valid(w) && w[0] == '{' {
			wantObjs = append(wantObjs, w)
		}
	}
	if len(wantObjs) != len(got) {
		t.Fatalf("%d records in, %d back", len(wantObjs), len(got))
	}
	for i := range got {
		if w, g := normalize(t, wantObjs[i]), normalize(t, got[i]); !reflect.DeepEqual(w, g) {
			t.Fatalf("record %d changed:\n in: %.300s\nout: %.300s", i+1, wantObjs[i], got[i])
		}
	}

	// JSON Lines under a .json name.
	jl := filepath.Join(tmp, "lines.json")
	os.WriteFile(jl, []byte(`{"conversations":[{"from":"human","value":"hi"}]}`+"\n"+`{"conversations":[{"from":"human","value":"yo"}]}`+"\n"), 0o644)
	mustRun(t, "compress", "--quiet", "--input", jl)
	if n := len(lines(t, filepath.Join(tmp, "lines_compressed.jsonl"))); n != 2 {
		t.Errorf("lines.json: %d records in lines_compressed.jsonl, want 2", n)
	}

	// A bad element in a one-line array.
	one := filepath.Join(tmp, "one.json")
	os.WriteFile(one, []byte(`[{"conversations":[{"from":"human","value":"hi"}]}, {"messages": 3}, 42]`), 0o644)
	rej := filepath.Join(tmp, "rej.jsonl")
	mustRun(t, "compress", "--quiet", "--input", one, "--rejects", rej, "--max-reject-rate", "1")
	var r []struct {
		Line, Record int64
		Raw          string
	}
	for _, l := range lines(t, rej) {
		var x struct {
			Line, Record int64
			Raw          string
		}
		json.Unmarshal(l, &x)
		r = append(r, x)
	}
	if len(r) != 2 || r[0].Record != 2 || r[0].Line != 1 || r[0].Raw != `{"messages":3}` || r[1].Record != 3 || r[1].Raw != "42" {
		t.Errorf("rejects: %+v", r)
	}
}

// TestJSONArrayMalformed: a .json array that is cut short or has no comma
// between records fails the run naming the file and line, and leaves no
// output in place.
func TestJSONArrayMalformed(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	for name, body := range map[string]string{
		"cut.json":   "[\n{\"conversations\":[{\"from\":\"human\",\"value\":\"hi\"}]},\n{\"conversations\":[",
		"comma.json": "[\n{\"conversations\":[]}\n{\"conversations\":[]}\n]",
	} {
		p := filepath.Join(tmp, name)
		os.WriteFile(p, []byte(body), 0o644)
		var stderr bytes.Buffer
		code := run(context.Background(), []string{"compress", "--quiet", "--input", p}, nil, &bytes.Buffer{}, &stderr)
		if code != exitError || !strings.Contains(stderr.String(), name+":3:") {
			t.Errorf("%s: exit %d, %q; want exit 1 naming %s:3", name, code, stderr.String(), name)
		}
		if _, err := os.Stat(filepath.Join(tmp, strings.TrimSuffix(name, ".json")+"_compressed.json")); err == nil {
			t.Errorf("%s: output put in place after a read error", name)
		}
	}
}

// TestDirectoryJSONMembers: in a directory, a .json array is an input and
// other .json files (dataset_info.json, state.json) are left alone.
func TestDirectoryJSONMembers(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	data := filepath.Join(tmp, "data")
	os.Mkdir(data, 0o755)
	rec := `{"conversations":[{"from":"human","value":"hi"},{"from":"gpt","value":"yo"}]}`
	os.WriteFile(filepath.Join(data, "alpaca.json"), []byte("[\n  "+rec+",\n  "+rec+"\n]\n"), 0o644)
	os.WriteFile(filepath.Join(data, "dataset_info.json"), []byte("{\n  \"alpaca\": {\"file_name\": \"alpaca.json\"}\n}\n"), 0o644)
	os.WriteFile(filepath.Join(data, "more.jsonl"), []byte(rec+"\n"), 0o644)
	m := filepath.Join(tmp, "m.json")
	mustRun(t, "compress", "--quiet", "--input", data, "--metrics", m)
	if names := dirNames(filepath.Join(tmp, "data_compressed")); names != "alpaca.json more.jsonl" {
		t.Errorf("outputs %s, want alpaca.json more.jsonl", names)
	}
	b, _ := os.ReadFile(m)
	if !bytes.Contains(b, []byte(`"records_in": 3`)) || !bytes.Contains(b, []byte(`"records_rejected": 0`)) {
		t.Errorf("metrics:\n%s", b)
	}
}

// dirNames lists the names in dir, in order, separated by spaces.
func dirNames(dir string) string {
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return strings.Join(names, " ")
}

// TestDirectoryReadsWhatHoldsRecords: in a directory input, a .json file
// of JSON Lines is read (Dataset.to_json's default), metadata and a
// pretty-printed object are left out with a note naming each, a stray
// state.json (not datasets') does not fail the run, a link to a directory
// below the input is named in a note, and the input itself may be a link
// to a directory.
func TestDirectoryReadsWhatHoldsRecords(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	data := filepath.Join(tmp, "data")
	os.MkdirAll(filepath.Join(tmp, "elsewhere"), 0o755)
	os.Mkdir(data, 0o755)
	rec := `{"conversations":[{"from":"human","value":"hi"},{"from":"gpt","value":"yo"}]}`
	os.WriteFile(filepath.Join(data, "lines.json"), []byte(rec+"\n"+rec+"\n"), 0o644)
	os.WriteFile(filepath.Join(data, "config.json"), []byte("{\n  \"lr\": 0.1\n}\n"), 0o644)
	os.WriteFile(filepath.Join(data, "state.json"), []byte(`{"step": 3}`), 0o644)
	os.WriteFile(filepath.Join(data, "a.jsonl"), []byte(rec+"\n"), 0o644)
	os.WriteFile(filepath.Join(tmp, "elsewhere", "b.jsonl"), []byte(rec+"\n"), 0o644)
	if err := os.Symlink(filepath.Join(tmp, "elsewhere"), filepath.Join(data, "linked")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	m := filepath.Join(tmp, "m.json")
	stderr := mustRun(t, "compress", "--input", data, "--metrics", m)
	for _, want := range []string{
		"note: --input: left out " + filepath.Join(data, "config.json") + ": one JSON object over several lines",
		"note: --input: left out " + filepath.Join(data, "state.json") + ": datasets metadata",
		"note: --input: left out " + filepath.Join(data, "linked") + ": a symbolic link to a directory, not followed",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if names := dirNames(filepath.Join(tmp, "data_compressed")); names != "a.jsonl lines.jsonl" {
		t.Errorf("outputs %s, want a.jsonl lines.jsonl", names)
	}
	if b, _ := os.ReadFile(m); !bytes.Contains(b, []byte(`"records_in": 3`)) {
		t.Errorf("metrics:\n%s", b)
	}

	// The input a link to a directory: its files are read.
	link := filepath.Join(tmp, "datalink")
	os.Symlink(filepath.Join(tmp, "elsewhere"), link)
	mustRun(t, "compress", "--quiet", "--input", link, "--output", filepath.Join(tmp, "out2"), "--metrics", filepath.Join(tmp, "m2.json"))
	if b, _ := os.ReadFile(filepath.Join(tmp, "m2.json")); !bytes.Contains(b, []byte(`"records_in": 1`)) {
		t.Errorf("linked input: metrics:\n%s", b)
	}
}

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
