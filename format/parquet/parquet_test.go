package parquet

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	pq "github.com/parquet-go/parquet-go"

	"github.com/trajcompress/trajcompress/format/internal/formattest"
)

// hub-like layout, as pyarrow writes `datasets` OpenAI-messages data.
type function struct {
	Arguments *string `parquet:"arguments,optional"`
	Name      *string `parquet:"name,optional"`
}

type toolCall struct {
	Function *function `parquet:"function,optional"`
	ID       *string   `parquet:"id,optional"`
	Type     *string   `parquet:"type,optional"`
}

type message struct {
	Content    *string    `parquet:"content,optional"`
	Name       *string    `parquet:"name,optional"`
	Role       *string    `parquet:"role,optional"`
	ToolCallID *string    `parquet:"tool_call_id,optional"`
	ToolCalls  []toolCall `parquet:"tool_calls,optional,list"`
}

type turn struct {
	From  *string `parquet:"from,optional"`
	Value *string `parquet:"value,optional"`
}

type hubRow struct {
	ID            int64     `parquet:"id"`
	Messages      []message `parquet:"messages,optional,list"`
	Conversations []turn    `parquet:"conversations,optional,list"`
	Tools         *string   `parquet:"tools,optional"`
	Score         float64   `parquet:"score"`
	Weight        float32   `parquet:"weight"`
	OK            bool      `parquet:"ok"`
	Blob          []byte    `parquet:"blob"`
}

func s(v string) *string { return &v }

func hubRows() ([]hubRow, []string) {
	rows := []hubRow{
		{
			ID: 9007199254740993, Score: 0.1, Weight: 0.25, OK: true, Blob: []byte{0, 1, 2, 255},
			Tools: s(`[{"type":"function"}]`),
			Messages: []message{
				{Role: s("system"), Content: s("You are helpful.")},
				{Role: s("user"), Content: s("weather in Paris?")},
				{Role: s("assistant"), ToolCalls: []toolCall{
					{ID: s("call_1"), Type: s("function"), Function: &function{Name: s("get_weather"), Arguments: s(`{"city":"Paris"}`)}},
					{ID: s("call_2"), Type: s("function"), Function: &function{Name: s("get_time"), Arguments: s(`{}`)}},
				}},
				{Role: s("tool"), ToolCallID: s("call_1"), Name: s("get_weather"), Content: s("sunny")},
				{Role: s("tool"), ToolCallID: s("call_2"), Content: s("noon")},
			},
		},
		{
			ID: -2, Score: 1e300, Weight: 3, OK: false, Blob: []byte{},
			Conversations: []turn{{From: s("human"), Value: s("hi \"there\"\n")}, {From: s("gpt"), Value: s("héllo")}},
			Messages:      []message{},
		},
		{ID: 3, Score: math.Copysign(0, -1), Weight: -1.5, Blob: []byte("x")},
	}
	want := []string{
		`{"id":9007199254740993,"messages":[` +
			`{"content":"You are helpful.","name":null,"role":"system","tool_call_id":null,"tool_calls":null},` +
			`{"content":"weather in Paris?","name":null,"role":"user","tool_call_id":null,"tool_calls":null},` +
			`{"content":null,"name":null,"role":"assistant","tool_call_id":null,"tool_calls":[` +
			`{"function":{"arguments":"{\"city\":\"Paris\"}","name":"get_weather"},"id":"call_1","type":"function"},` +
			`{"function":{"arguments":"{}","name":"get_time"},"id":"call_2","type":"function"}]},` +
			`{"content":"sunny","name":"get_weather","role":"tool","tool_call_id":"call_1","tool_calls":null},` +
			`{"content":"noon","name":null,"role":"tool","tool_call_id":"call_2","tool_calls":null}],` +
			`"conversations":null,"tools":"[{\"type\":\"function\"}]","score":0.1,"weight":0.25,"ok":true,"blob":"AAEC/w=="}`,
		`{"id":-2,"messages":[],"conversations":[{"from":"human","value":"hi \"there\"\n"},{"from":"gpt","value":"héllo"}],` +
			`"tools":null,"score":1e+300,"weight":3.0,"ok":false,"blob":""}`,
		`{"id":3,"messages":null,"conversations":null,"tools":null,"score":-0.0,"weight":-1.5,"ok":false,"blob":"eA=="}`,
	}
	return rows, want
}

// writeHub writes rows with parquet-go's own struct writer (an encoder we
// did not write), n copies, maxRows rows per row group.
func writeHub(t *testing.T, path string, rows []hubRow, copies int, maxRows int64, codec pq.WriterOption, kv ...string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	opts := []pq.WriterOption{pq.MaxRowsPerRowGroup(maxRows), codec}
	for i := 0; i+1 < len(kv); i += 2 {
		opts = append(opts, pq.KeyValueMetadata(kv[i], kv[i+1]))
	}
	w := pq.NewGenericWriter[hubRow](f, opts...)
	for range copies {
		if _, err := w.Write(rows); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func readAll(t *testing.T, path string) ([]string, *Schema) {
	t.Helper()
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []string
	for {
		obj, row, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if row != int64(len(out)) {
			t.Fatalf("row index %d, want %d", row, len(out))
		}
		out = append(out, string(obj))
	}
	if int64(len(out)) != r.NumRows() {
		t.Fatalf("read %d rows, footer says %d", len(out), r.NumRows())
	}
	return out, r.Schema()
}

func TestReadHubLayout(t *testing.T) {
	rows, want := hubRows()
	codecs := []struct {
		name string
		opt  pq.WriterOption
	}{
		{"snappy", pq.Compression(&pq.Snappy)},
		{"zstd", pq.Compression(&pq.Zstd)},
		{"none", pq.Compression(&pq.Uncompressed)},
	}
	for _, c := range codecs {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "train-00000-of-00001.parquet")
			writeHub(t, path, rows, 3, 2, c.opt) // 9 rows in 5 row groups
			got, _ := readAll(t, path)
			if len(got) != 9 {
				t.Fatalf("got %d rows, want 9", len(got))
			}
			for i, g := range got {
				if w := want[i%3]; g != w {
					t.Errorf("row %d:\n got %s\nwant %s", i, g, w)
				}
			}
		})
	}
}

// TestRewriteSameSchema reads a hub file and writes it back with its own
// schema: parquet-go's struct reader must get the original rows back and
// the schema text and metadata must be unchanged.
func TestRewriteSameSchema(t *testing.T) {
	rows, want := hubRows()
	dir := t.TempDir()
	in := filepath.Join(dir, "in.parquet")
	hf := `{"info":{"features":{"id":{"dtype":"int64","_type":"Value"}}}}`
	writeHub(t, in, rows, 1, 2, pq.Compression(&pq.Snappy), "huggingface", hf)
	got, schema := readAll(t, in)
	for _, comp := range []string{"snappy", "zstd", "none"} {
		t.Run(comp, func(t *testing.T) {
			out := filepath.Join(dir, "out-"+comp+".parquet")
			w, err := Create(out, schema, WriterOptions{Compression: comp})
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range got {
				if err := w.Write([]byte(g)); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			again, s2 := readAll(t, out)
			if !reflect.DeepEqual(again, want) {
				t.Errorf("rows changed:\n got %q\nwant %q", again, want)
			}
			if s2.String() != schema.String() {
				t.Errorf("schema changed:\n got %s\nwant %s", s2, schema)
			}
			if v, _ := s2.Metadata("huggingface"); v != hf {
				t.Errorf("huggingface metadata = %q, want %q", v, hf)
			}
			// An independent decoder: parquet-go's struct reader.
			f, err := os.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			back := make([]hubRow, len(rows))
			gr := pq.NewGenericReader[hubRow](f)
			n, err := gr.Read(back)
			if err != nil && err != io.EOF {
				t.Fatal(err)
			}
			if n != len(rows) {
				t.Fatalf("struct reader got %d rows", n)
			}
			for i := range rows {
				if !reflect.DeepEqual(normalize(back[i]), normalize(rows[i])) {
					t.Errorf("row %d via struct reader:\n got %+v\nwant %+v", i, back[i], rows[i])
				}
			}
		})
	}
}

// normalize maps empty slices to nil: the struct reader does not keep the
// difference, which the JSON comparison above already checks.
func normalize(r hubRow) hubRow {
	if len(r.Messages) == 0 {
		r.Messages = nil
	}
	if len(r.Conversations) == 0 {
		r.Conversations = nil
	}
	if len(r.Blob) == 0 {
		r.Blob = nil
	}
	return r
}

func TestRoundTripInferred(t *testing.T) {
	for _, tc := range formattest.RoundTripCases {
		for _, v := range []string{"snappy", "zstd"} {
			t.Run(tc.Name+"/"+v, func(t *testing.T) {
				sample := tc.Bytes()
				schema, err := InferSchema(sample)
				if err != nil {
					t.Fatal(err)
				}
				path := filepath.Join(t.TempDir(), "rt.parquet")
				w, err := Create(path, schema, WriterOptions{Compression: v, RowGroupBytes: 1})
				if err != nil {
					t.Fatal(err)
				}
				formattest.WriteAll(t, w, sample)
				got, _ := readAll(t, path)
				formattest.CheckRows(t, sample, got, schema.Columns())
			})
		}
	}
}

func TestKeyOrderFollowsSchema(t *testing.T) {
	schema, err := InferSchema([][]byte{[]byte(`{"z":1,"a":"x","m":true}`)})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(schema.Columns(), ","); got != "z,a,m" {
		t.Fatalf("columns %s, want z,a,m", got)
	}
	path := filepath.Join(t.TempDir(), "o.parquet")
	w, err := Create(path, schema, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write([]byte(`{"m":false,"z":2}`)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, _ := readAll(t, path)
	if want := `{"z":2,"a":null,"m":false}`; got[0] != want {
		t.Fatalf("got %s, want %s", got[0], want)
	}
}

func TestExtraColumnAndMetadata(t *testing.T) {
	rows, _ := hubRows()
	dir := t.TempDir()
	in := filepath.Join(dir, "in.parquet")
	hf := `{"info":{"features":{"id":{"dtype":"int64","_type":"Value"}}}}`
	writeHub(t, in, rows[:1], 1, 10, pq.Compression(&pq.Snappy), "huggingface", hf, "ARROW:schema", "stale")
	got, schema := readAll(t, in)
	out := filepath.Join(dir, "out.parquet")
	w, err := Create(out, schema, WriterOptions{Extra: Column{Name: "compression_metrics"}})
	if err != nil {
		t.Fatal(err)
	}
	rec := strings.TrimSuffix(got[0], "}") + `,"compression_metrics":{"tokens_in":10,"tokens_out":4}}`
	if err := w.Write([]byte(rec)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	back, s2 := readAll(t, out)
	if !strings.HasSuffix(back[0], `,"compression_metrics":"{\"tokens_in\":10,\"tokens_out\":4}"}`) {
		t.Errorf("extra column not stored as JSON text: %s", back[0])
	}
	wantHF := `{"info":{"features":{"id":{"dtype":"int64","_type":"Value"},"compression_metrics":{"dtype":"string","_type":"Value"}}}}`
	if v, _ := s2.Metadata("huggingface"); v != wantHF {
		t.Errorf("huggingface = %s", v)
	}
	if _, ok := s2.Metadata("ARROW:schema"); ok {
		t.Error("stale ARROW:schema kept after adding a column")
	}
	// A column the schema has is kept, not added again.
	w, err = Create(filepath.Join(dir, "dup.parquet"), schema, WriterOptions{Extra: Column{Name: "id"}})
	if err != nil || len(w.Schema().Columns()) != len(schema.Columns()) {
		t.Errorf("extra column the schema has: %v", err)
	}
	w.Abort()

	// With a sample, the column is typed from it (a struct) and takes an
	// object or its JSON text; the features get the struct's entry.
	w, err = Create(filepath.Join(dir, "struct.parquet"), schema, WriterOptions{Extra: Column{Name: "m", Sample: []byte(`{"n":0,"r":0.0,"ok":false}`)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{`{"n":3,"r":0.5,"ok":true}`, `"{\"n\":4,\"r\":1.0,\"ok\":false}"`} {
		if err := w.Write([]byte(strings.TrimSuffix(got[0], "}") + `,"m":` + v + `}`)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	back, s3 := readAll(t, filepath.Join(dir, "struct.parquet"))
	if !strings.HasSuffix(back[0], `,"m":{"n":3,"r":0.5,"ok":true}}`) || !strings.HasSuffix(back[1], `,"m":{"n":4,"r":1.0,"ok":false}}`) {
		t.Errorf("struct column: %s / %s", back[0], back[1])
	}
	wantHF = `{"info":{"features":{"id":{"dtype":"int64","_type":"Value"},"m":{"n":{"dtype":"int64","_type":"Value"},"r":{"dtype":"float64","_type":"Value"},"ok":{"dtype":"bool","_type":"Value"}}}}}`
	if v, _ := s3.Metadata("huggingface"); v != wantHF {
		t.Errorf("huggingface = %s", v)
	}
}

// TestReadJSONText: a top-level string column named in Open's jsonText is
// read as the JSON value its text holds (text that is not JSON stays a
// string).
func TestReadJSONText(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "t.parquet")
	schema, _ := InferSchema([][]byte{[]byte(`{"m":"x","s":"y"}`)})
	w, _ := Create(p, schema, WriterOptions{})
	w.Write([]byte(`{"m":"{\"a\":[1,2]}","s":"{\"a\":1}"}`))
	w.Write([]byte(`{"m":"not json","s":null}`))
	w.Close()
	r, err := Open(p, "m")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, want := range []string{`{"m":{"a":[1,2]},"s":"{\"a\":1}"}`, `{"m":"not json","s":null}`} {
		b, _, err := r.Next()
		if err != nil || string(b) != want {
			t.Errorf("got %s, %v; want %s", b, err, want)
		}
	}
}

func TestWriteErrors(t *testing.T) {
	schema, err := InferSchema([][]byte{[]byte(`{"n":1,"s":"x","m":[{"role":"user","tool_calls":[{"id":"a"}]}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, rec, want string }{
		{"unknown top key", `{"n":1,"extra":2}`, `key "extra": not a column`},
		{"unknown nested key", `{"m":[{"role":"user","foo":1}]}`, `key "m[0].foo": not a column`},
		{"string given number", `{"s":5}`, `key "s": want a string, got number`},
		{"int given string", `{"n":"5"}`, `key "n": want an integer, got string`},
		{"int given float", `{"n":1.5}`, `key "n": want a 64-bit integer`},
		{"nested wrong type", `{"m":[{"role":"user","tool_calls":[{"id":7}]}]}`, `key "m[0].tool_calls[0].id": want a string`},
		{"list given object", `{"m":{"role":"user"}}`, `key "m": want an array, got object`},
		{"not an object", `[1]`, "not a JSON object"},
		{"bad json", `{"n":`, "row 0"},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "bad.parquet")
			w, err := Create(path, schema, WriterOptions{})
			if err != nil {
				t.Fatal(err)
			}
			err = w.Write([]byte(tt.rec))
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("err = %v, want it to name %s and contain %q", err, path, tt.want)
			}
			// The bad row is not written; a good row still goes through.
			if err := w.Write([]byte(`{"n":2}`)); err != nil {
				t.Fatalf("write after a rejected row: %v", err)
			}
			if err := w.Abort(); err != nil {
				t.Fatal(err)
			}
			assertNoFiles(t, dir)
		})
	}
}

func assertNoFiles(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		t.Errorf("left behind: %s", e.Name())
	}
}

func TestCreateErrors(t *testing.T) {
	schema, _ := InferSchema([][]byte{[]byte(`{"a":1}`)})
	dir := t.TempDir()
	if _, err := Create(filepath.Join(dir, "x.parquet"), schema, WriterOptions{Compression: "lzma"}); err == nil || !strings.Contains(err.Error(), "lzma") {
		t.Errorf("unknown codec: err = %v", err)
	}
	if _, err := Create(filepath.Join(dir, "missing", "x.parquet"), schema, WriterOptions{}); err == nil {
		t.Error("missing directory: want error")
	}
	assertNoFiles(t, dir)
	if _, err := InferSchema([][]byte{[]byte(`{}`)}); err == nil {
		t.Error("sample without keys: want error")
	}
}

// TestCloseLeavesNothingUntilDone checks the destination only appears on
// Close and that Close after Abort is harmless.
func TestCloseLeavesNothingUntilDone(t *testing.T) {
	schema, _ := InferSchema([][]byte{[]byte(`{"a":1}`)})
	dir := t.TempDir()
	path := filepath.Join(dir, "out.parquet")
	w, err := Create(path, schema, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write([]byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("destination exists before Close: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != "out.parquet" {
		t.Fatalf("dir holds %v, want only out.parquet", ents)
	}
}

func TestBadInput(t *testing.T) {
	rows, _ := hubRows()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.parquet")
	writeHub(t, good, rows, 4, 3, pq.Compression(&pq.Snappy))
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	flip := func(off int) []byte {
		b := bytes.Clone(data)
		for i := off; i < off+16 && i < len(b); i++ {
			b[i] ^= 0xff
		}
		return b
	}
	tests := []struct {
		name string
		data []byte
		want []string // substrings, besides the path
	}{
		{"empty", nil, nil},
		{"jsonl not parquet", []byte(`{"a":1}` + "\n"), nil},
		{"truncated tail", data[:len(data)-100], nil},
		{"truncated half", data[:len(data)/2], nil},
		{"footer magic flipped", flip(len(data) - 4), nil},
		{"first page header flipped", flip(4), []string{"row group 0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_")+".parquet")
			if err := os.WriteFile(path, tt.data, 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := Open(path)
			if err == nil {
				for {
					_, _, err = r.Next()
					if err != nil {
						break
					}
				}
				r.Close()
				if err == io.EOF {
					t.Fatal("corrupt file read to the end without an error")
				}
			}
			t.Logf("error: %v", err)
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error does not name the file: %v", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
	if _, err := Open(filepath.Join(dir, "absent.parquet")); err == nil || !strings.Contains(err.Error(), "absent.parquet") {
		t.Errorf("missing file: err = %v", err)
	}
}

// TestManyRowGroupsBoundedMemory writes ~48 MiB in 48 row groups and checks
// that reading the first row allocates far less than the file: the reader
// holds one row group's open pages, never the whole file.
func TestManyRowGroupsBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 48 MiB file")
	}
	schema, err := InferSchema([][]byte{[]byte(`{"i":1,"text":"x"}`)})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "big.parquet")
	w, err := Create(path, schema, WriterOptions{Compression: "none", RowGroupBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	// Incompressible-looking text so the file really is large.
	var sb strings.Builder
	for i := range 16 << 10 {
		fmt.Fprintf(&sb, "%x", (i*2654435761)&0xf)
	}
	text := sb.String() // 16 KiB
	const n = 48 * 64   // 64 rows of 16 KiB per 1 MiB row group
	for i := range n {
		if err := w.Write(fmt.Appendf(nil, `{"i":%d,"text":%q}`, i, text)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if g := len(r.file.RowGroups()); g < 40 {
		t.Fatalf("only %d row groups", g)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if _, _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(st.Size())/4 {
		t.Errorf("first row allocated %d bytes for a %d-byte file", alloc, st.Size())
	}
	count := int64(1)
	for {
		obj, row, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(obj, fmt.Appendf(nil, `{"i":%d,`, row)) {
			t.Fatalf("row %d out of order: %.20s", row, obj)
		}
		count++
	}
	if count != n {
		t.Fatalf("read %d rows, want %d", count, n)
	}
}

// TestCorruptionNeverPanics flips bytes all over a file: every read either
// ends cleanly (Parquet has no checksums on most pages, so a value may just
// change) or fails with an error naming the file; it never panics.
func TestCorruptionNeverPanics(t *testing.T) {
	rows, _ := hubRows()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.parquet")
	writeHub(t, good, rows, 2, 2, pq.Compression(&pq.Snappy))
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	failed, _ := formattest.FlipSweep(t, data, filepath.Join(dir, "bad.parquet"), 17, formattest.Drain(func(p string) (*Reader, error) { return Open(p) }))
	if failed == 0 {
		t.Fatal("no corruption was detected at all")
	}
}

type mapRow struct {
	Tags  []string         `parquet:"tags"` // bare repeated field (no LIST group)
	Attrs map[string]int64 `parquet:"attrs"`
	Day   int32            `parquet:"day,date"`
	U     uint32           `parquet:"u"`
}

func TestMapsAndBareRepeated(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.parquet")
	f, err := os.Create(in)
	if err != nil {
		t.Fatal(err)
	}
	w := pq.NewGenericWriter[mapRow](f)
	rows := []mapRow{
		{Tags: []string{"a", "b"}, Attrs: map[string]int64{"k": -1}, Day: 19000, U: 4294967295},
		{Tags: nil, Attrs: map[string]int64{}, Day: 0, U: 0},
	}
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	want := []string{
		`{"tags":["a","b"],"attrs":{"k":-1},"day":19000,"u":4294967295}`,
		`{"tags":[],"attrs":{},"day":0,"u":0}`,
	}
	got, schema := readAll(t, in)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	out := filepath.Join(dir, "out.parquet")
	pw, err := Create(out, schema, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range got {
		if err := pw.Write([]byte(g)); err != nil {
			t.Fatal(err)
		}
	}
	if err := pw.Write([]byte(`{"tags":[],"attrs":{},"day":0,"u":-1}`)); err == nil || !strings.Contains(err.Error(), `key "u": want an unsigned 32-bit integer`) {
		t.Errorf("negative into uint32: err = %v", err)
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	again, s2 := readAll(t, out)
	if !reflect.DeepEqual(again, want) || s2.String() != schema.String() {
		t.Fatalf("rewrite changed rows or schema:\n%q\n%s", again, s2)
	}
}

// TestStringAsTextPart: see formattest.StringAsTextPart.
func TestStringAsTextPart(t *testing.T) {
	schema, err := InferSchema([][]byte{[]byte(formattest.TextPartSample)})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "parts.parquet")
	w, err := Create(path, schema, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	formattest.StringAsTextPart(t, w, func() []string {
		got, _ := readAll(t, path)
		return got
	})
}
