package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	pq "github.com/parquet-go/parquet-go"

	"github.com/trajcompress/trajcompress/format"
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
