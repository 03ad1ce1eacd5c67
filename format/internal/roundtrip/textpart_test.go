package roundtrip

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/ipc"
	pq "github.com/parquet-go/parquet-go"

	farrow "github.com/trajcompress/trajcompress/format/arrow"
	"github.com/trajcompress/trajcompress/format/internal/jsonval"
	"github.com/trajcompress/trajcompress/format/parquet"
)

// The strings the compressor writes as a message's content whatever the
// record's content shape: a summary turn, a system prompt with a notice
// appended (a string system prompt), a prepass digest of a tool result.
var textContents = []struct{ role, text string }{
	{"system", "sys\n\nSome of your previous tool results were condensed."},
	{"user", "[CONTEXT SUMMARY]: 5 turns (3–7) condensed.\nImages: 3 (1026x768 png ×1)"},
	{"tool", "[digest] 2,400 lines of build output: 3 errors"},
}

// withTextContents returns record r with the messages of textContents
// added, their content as a JSON string (asText) or as the one text part
// the writers make of it.
func withTextContents(t testing.TB, r string, asText bool) []byte {
	t.Helper()
	o := decodeObject(t, []byte(r))
	v, _ := o.Get("messages")
	msgs := v.([]any)
	for _, c := range textContents {
		var content any = c.text
		if !asText {
			content = []any{&jsonval.Object{Keys: []string{"type", "text", "image"}, Vals: []any{"text", c.text, nil}}}
		}
		msgs = append(msgs, &jsonval.Object{Keys: []string{"role", "content"}, Vals: []any{c.role, content}})
	}
	for i, k := range o.Keys {
		if k == "messages" {
			o.Vals[i] = msgs
		}
	}
	return jsonval.Append(nil, o)
}

// writeTextContents writes every record of recs with string contents added
// through w, and returns the rows expected back.
func writeTextContents(t *testing.T, recs []string, w interface {
	Write([]byte) error
	Close() error
}) []any {
	t.Helper()
	var want []any
	for i, r := range recs {
		if err := w.Write(withTextContents(t, r, true)); err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
		want = append(want, decodeObject(t, withTextContents(t, r, false)))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return want
}

func checkRows(t *testing.T, who string, got [][]byte, want []any) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s reads %d rows, want %d", who, len(got), len(want))
	}
	for i, g := range got {
		if !sameRow(decodeObject(t, g), want[i]) {
			t.Errorf("%s reads row %d as\n%.900s\nwant\n%.900s", who, i, g, jsonval.Append(nil, want[i]))
		}
	}
}

// TestParquetStringContentAsTextPart: in a file whose message content is
// a list of part structs (datasets' layout for image parts), a content
// written as a string — a summary, a notice on a string system prompt, a
// digest — is written as one text part, and every reader sees that part:
// this package's reader, parquet-go's own row reader, npm hyparquet.
func TestParquetStringContentAsTextPart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	recs := imageRecords(t)
	in, out := filepath.Join(dir, "in.parquet"), filepath.Join(dir, "out.parquet")
	writeImageParquet(t, in, recs)
	r := mustOpenParquet(t, in)
	defer r.Close()
	w, err := parquet.Create(out, r.Schema(), parquet.WriterOptions{Extra: parquet.Column{Name: metricsColumn.name, Sample: []byte(metricsColumn.sample)}})
	if err != nil {
		t.Fatal(err)
	}
	want := writeTextContents(t, recs, w)

	back := mustOpenParquet(t, out)
	defer back.Close()
	checkRows(t, "format/parquet", drain(t, back), want)

	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := pq.Read[dsRow](f, mustSize(t, f))
	if err != nil {
		t.Fatal(err)
	}
	var got [][]byte
	for _, row := range rows {
		b, err := json.Marshal(row) // []byte as base64, as the records hold it
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, b)
	}
	checkRows(t, "parquet-go", got, want)
	for _, row := range rows {
		m := row.Messages[len(row.Messages)-2]
		if len(m.Content) != 1 || m.Content[0].Type == nil || *m.Content[0].Type != "text" || m.Content[0].Image != nil ||
			m.Content[0].Text == nil || !strings.HasPrefix(*m.Content[0].Text, "[CONTEXT SUMMARY]") {
			t.Errorf("parquet-go: the summary turn is %+v, want one text part with a null image", m.Content)
		}
	}
	nodeDump(t, "--parquet", out, want)
}

// TestArrowStringContentAsTextPart is TestParquetStringContentAsTextPart
// for an Arrow IPC stream, read back by this package, by arrow-go's IPC
// reader and by npm apache-arrow.
func TestArrowStringContentAsTextPart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	recs := imageRecords(t)
	in, out := filepath.Join(dir, "in.arrow"), filepath.Join(dir, "out.arrow")
	writeImageArrow(t, in, recs)
	r, err := farrow.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w, err := farrow.Create(out, r.Schema(), farrow.WriterOptions{Extra: farrow.Column{Name: metricsColumn.name, Sample: []byte(metricsColumn.sample)}})
	if err != nil {
		t.Fatal(err)
	}
	want := writeTextContents(t, recs, w)

	back, err := farrow.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	checkRows(t, "format/arrow", drain(t, back), want)

	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ir, err := ipc.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer ir.Release()
	var got [][]byte
	for ir.Next() {
		b, err := ir.Record().MarshalJSON() // arrow-go's rendering: binary as base64
		if err != nil {
			t.Fatal(err)
		}
		var rows []json.RawMessage
		if err := json.Unmarshal(b, &rows); err != nil {
			t.Fatal(err)
		}
		for _, row := range rows {
			got = append(got, row)
		}
	}
	if err := ir.Err(); err != nil {
		t.Fatal(err)
	}
	checkRows(t, "arrow-go", got, want)
	nodeDump(t, "--arrow", out, want)
}

func mustSize(t *testing.T, f *os.File) int64 {
	t.Helper()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}
