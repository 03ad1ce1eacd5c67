package arrow

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/trajcompress/trajcompress/format/internal/formattest"
)

const hfMeta = `{"info":{"features":{"id":{"dtype":"int64","_type":"Value"}}}}`

// datasetsSchema mimics a `datasets` cache file: `item` list fields, a
// large_list/large_string, a Json() column and the huggingface metadata.
func datasetsSchema() *arrow.Schema {
	str := arrow.BinaryTypes.String
	fn := arrow.StructOf(
		arrow.Field{Name: "arguments", Type: str, Nullable: true},
		arrow.Field{Name: "name", Type: str, Nullable: true})
	call := arrow.StructOf(
		arrow.Field{Name: "function", Type: fn, Nullable: true},
		arrow.Field{Name: "id", Type: str, Nullable: true},
		arrow.Field{Name: "type", Type: str, Nullable: true})
	msg := arrow.StructOf(
		arrow.Field{Name: "content", Type: arrow.BinaryTypes.LargeString, Nullable: true},
		arrow.Field{Name: "role", Type: str, Nullable: true},
		arrow.Field{Name: "tool_call_id", Type: str, Nullable: true},
		arrow.Field{Name: "tool_calls", Type: arrow.ListOfField(arrow.Field{Name: "element", Type: call, Nullable: true}), Nullable: true})
	turn := arrow.StructOf(
		arrow.Field{Name: "from", Type: str, Nullable: true},
		arrow.Field{Name: "value", Type: str, Nullable: true})
	md := arrow.NewMetadata([]string{"huggingface"}, []string{hfMeta})
	return arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "messages", Type: arrow.LargeListOf(msg), Nullable: true},
		{Name: "conversations", Type: arrow.ListOf(turn), Nullable: true},
		jsonField("tools"),
		{Name: "score", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "n", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
		{Name: "blob", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "ok", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	}, &md)
}

// Input rows for arrow's own JSON decoder (the Json() column holds text)
// and what Reader must produce for them.
var datasetsRows = []struct{ in, want string }{
	{
		`{"id":9007199254740993,"messages":[{"content":"hi","role":"user"},{"role":"assistant","tool_calls":[{"function":{"arguments":"{\"a\":1}","name":"f"},"id":"c1","type":"function"}]},{"content":"ok","role":"tool","tool_call_id":"c1"}],"tools":"[{\"type\":\"function\",\"n\":1}]","score":0.1,"n":18446744073709551615,"blob":"AAEC/w==","ok":true}`,
		`{"id":9007199254740993,"messages":[{"content":"hi","role":"user","tool_call_id":null,"tool_calls":null},{"content":null,"role":"assistant","tool_call_id":null,"tool_calls":[{"function":{"arguments":"{\"a\":1}","name":"f"},"id":"c1","type":"function"}]},{"content":"ok","role":"tool","tool_call_id":"c1","tool_calls":null}],"conversations":null,"tools":[{"type":"function","n":1}],"score":0.1,"n":18446744073709551615,"blob":"AAEC/w==","ok":true}`,
	},
	{
		`{"id":-1,"messages":[],"conversations":[{"from":"human","value":"é\n\"q\""},{"from":"gpt","value":""}],"tools":null,"score":2,"n":0,"blob":"","ok":false}`,
		`{"id":-1,"messages":[],"conversations":[{"from":"human","value":"é\n\"q\""},{"from":"gpt","value":""}],"tools":null,"score":2.0,"n":0,"blob":"","ok":false}`,
	},
	{
		`{"id":3}`,
		`{"id":3,"messages":null,"conversations":null,"tools":null,"score":null,"n":null,"blob":null,"ok":null}`,
	},
}

// writeDatasets writes the rows with arrow's own JSON decoder and IPC
// writer, one batch per row, copies times, in stream or file format.
func writeDatasets(t *testing.T, path string, fileFormat bool, copies int) []arrow.Record {
	t.Helper()
	schema := datasetsSchema()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []arrow.Record
	for range copies {
		for _, r := range datasetsRows {
			rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, schema, strings.NewReader("["+r.in+"]"), array.WithUseNumber())
			if err != nil {
				t.Fatalf("arrow cannot build %s: %v", r.in, err)
			}
			recs = append(recs, rec)
		}
	}
	if fileFormat {
		w, err := ipc.NewFileWriter(f, ipc.WithSchema(schema))
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
	} else {
		w := ipc.NewWriter(f, ipc.WithSchema(schema))
		for _, rec := range recs {
			if err := w.Write(rec); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return recs
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
	return out, r.Schema()
}

func TestReadDatasetsFile(t *testing.T) {
	for _, tc := range []struct {
		name string
		file bool
	}{{"stream", false}, {"file", true}} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "data-00000-of-00001.arrow")
			writeDatasets(t, path, tc.file, 2)
			got, schema := readAll(t, path)
			if len(got) != 2*len(datasetsRows) {
				t.Fatalf("got %d rows", len(got))
			}
			for i, g := range got {
				if w := datasetsRows[i%len(datasetsRows)].want; g != w {
					t.Errorf("row %d:\n got %s\nwant %s", i, g, w)
				}
			}
			if v, _ := schema.Metadata("huggingface"); v != hfMeta {
				t.Errorf("huggingface metadata = %q", v)
			}
		})
	}
}

// TestRewriteSameSchema reads a datasets file, writes it back with its own
// schema and checks with arrow's own reader that schema (with metadata) and
// every record are equal to the originals.
func TestRewriteSameSchema(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.arrow")
	orig := writeDatasets(t, in, false, 2)
	got, schema := readAll(t, in)
	for _, tc := range []struct{ format, comp string }{{"stream", ""}, {"file", "zstd"}, {"stream", "lz4"}} {
		t.Run(tc.format+"/"+tc.comp, func(t *testing.T) {
			out := filepath.Join(dir, "out-"+tc.format+tc.comp+".arrow")
			w, err := Create(out, schema, WriterOptions{Format: tc.format, Compression: tc.comp, BatchRows: 1})
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
			f, err := os.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var recs []arrow.Record
			var back *arrow.Schema
			if tc.format == "file" {
				fr, err := ipc.NewFileReader(f)
				if err != nil {
					t.Fatal(err)
				}
				defer fr.Close()
				back = fr.Schema()
				for i := range fr.NumRecords() {
					rec, err := fr.RecordAt(i)
					if err != nil {
						t.Fatal(err)
					}
					defer rec.Release()
					recs = append(recs, rec)
				}
			} else {
				sr, err := ipc.NewReader(f)
				if err != nil {
					t.Fatal(err)
				}
				defer sr.Release()
				back = sr.Schema()
				for sr.Next() {
					rec := sr.Record()
					rec.Retain()
					defer rec.Release()
					recs = append(recs, rec)
				}
				if err := sr.Err(); err != nil {
					t.Fatal(err)
				}
			}
			if !back.Equal(datasetsSchema()) || !back.Metadata().Equal(datasetsSchema().Metadata()) {
				t.Errorf("schema changed:\n got %s\nwant %s", back, datasetsSchema())
			}
			if !isJSON(back.Field(3)) {
				t.Error("arrow.json extension metadata lost on the tools field")
			}
			if len(recs) != len(orig) {
				t.Fatalf("got %d batches, want %d", len(recs), len(orig))
			}
			for i := range recs {
				if !array.RecordEqual(recs[i], orig[i]) {
					t.Errorf("batch %d differs", i)
				}
			}
		})
	}
}

func TestRoundTripInferred(t *testing.T) {
	for _, tc := range formattest.RoundTripCases {
		for _, v := range []string{"stream", "file"} {
			t.Run(tc.Name+"/"+v, func(t *testing.T) {
				sample := tc.Bytes()
				schema, err := InferSchema(sample)
				if err != nil {
					t.Fatal(err)
				}
				path := filepath.Join(t.TempDir(), "rt.arrow")
				w, err := Create(path, schema, WriterOptions{Format: v, BatchRows: 1})
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

func TestExtraColumn(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.arrow")
	writeDatasets(t, in, false, 1)
	got, schema := readAll(t, in)
	out := filepath.Join(dir, "out.arrow")
	w, err := Create(out, schema, WriterOptions{Extra: Column{Name: "compression_metrics"}})
	if err != nil {
		t.Fatal(err)
	}
	rec := strings.TrimSuffix(got[2], "}") + `,"compression_metrics":{"ratio":0.5}}`
	if err := w.Write([]byte(rec)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	back, s2 := readAll(t, out)
	if !strings.HasSuffix(back[0], `,"compression_metrics":"{\"ratio\":0.5}"}`) {
		t.Errorf("extra column: %s", back[0])
	}
	want := `{"info":{"features":{"id":{"dtype":"int64","_type":"Value"},"compression_metrics":{"dtype":"string","_type":"Value"}}}}`
	if v, _ := s2.Metadata("huggingface"); v != want {
		t.Errorf("huggingface = %s", v)
	}
	// A column the schema has is kept, not added again.
	w, err = Create(filepath.Join(dir, "x.arrow"), schema, WriterOptions{Extra: Column{Name: "id"}})
	if err != nil || len(w.Schema().Columns()) != len(schema.Columns()) {
		t.Errorf("extra column the schema has: %v, columns %v", err, w.Schema().Columns())
	}
	w.Abort()
}

// TestExtraStructColumn: an extra column with a sample is typed from it
// (a struct here) and its feature set in the "huggingface" metadata; it
// takes its value as an object or as JSON text; in a utf8 column already
// in the schema (files written before) an object is stored as JSON text.
func TestExtraStructColumn(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.arrow")
	writeDatasets(t, in, false, 1)
	got, schema := readAll(t, in)
	out := filepath.Join(dir, "out.arrow")
	w, err := Create(out, schema, WriterOptions{Extra: Column{Name: "m", Sample: []byte(`{"n":0,"r":0.0,"ok":false}`)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{`{"n":3,"r":0.5,"ok":true}`, `"{\"n\":4,\"r\":1.0,\"ok\":false}"`, `null`} {
		if err := w.Write([]byte(strings.TrimSuffix(got[0], "}") + `,"m":` + v + `}`)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	back, s2 := readAll(t, out)
	for i, want := range []string{`,"m":{"n":3,"r":0.5,"ok":true}}`, `,"m":{"n":4,"r":1.0,"ok":false}}`, `,"m":null}`} {
		if !strings.HasSuffix(back[i], want) {
			t.Errorf("row %d: %s, want …%s", i, back[i], want)
		}
	}
	wantHF := `{"info":{"features":{"id":{"dtype":"int64","_type":"Value"},"m":{"n":{"dtype":"int64","_type":"Value"},"r":{"dtype":"float64","_type":"Value"},"ok":{"dtype":"bool","_type":"Value"}}}}}`
	if v, _ := s2.Metadata("huggingface"); v != wantHF {
		t.Errorf("huggingface = %s", v)
	}
	// The same column already a utf8 one: kept, an object stored as text.
	textIn := filepath.Join(dir, "text.arrow")
	tw, _ := Create(textIn, schema, WriterOptions{Extra: Column{Name: "m"}})
	tw.Write([]byte(strings.TrimSuffix(got[0], "}") + `,"m":"{}"}`))
	tw.Close()
	_, ts := readAll(t, textIn)
	w, err = Create(filepath.Join(dir, "again.arrow"), ts, WriterOptions{Extra: Column{Name: "m", Sample: []byte(`{"n":0}`)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write([]byte(strings.TrimSuffix(got[0], "}") + `,"m":{"n":5}}`)); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if again, _ := readAll(t, filepath.Join(dir, "again.arrow")); !strings.HasSuffix(again[0], `,"m":"{\"n\":5}"}`) {
		t.Errorf("utf8 column: %s", again[0])
	}
}

func TestWriteErrors(t *testing.T) {
	schema := NewSchema(datasetsSchema())
	tests := []struct{ name, rec, want string }{
		{"unknown top key", `{"id":1,"extra":2}`, `key "extra": not a column`},
		{"unknown nested key", `{"id":1,"conversations":[{"from":"h","x":1}]}`, `key "conversations[0].x": not a column`},
		{"string given number", `{"id":1,"conversations":[{"from":5}]}`, `key "conversations[0].from": want a string, got number`},
		{"int given string", `{"id":"1"}`, `key "id": want an integer, got string`},
		{"uint negative", `{"id":1,"n":-1}`, `key "n": want an unsigned 64-bit integer`},
		{"missing non-nullable", `{"score":1}`, `key "id": null or missing in a non-nullable column`},
		{"bad base64", `{"id":1,"blob":"!!"}`, `key "blob": want a base64 string`},
		{"deep wrong type", `{"id":1,"messages":[{"tool_calls":[{"function":{"name":[]}}]}]}`, `key "messages[0].tool_calls[0].function.name": want a string, got array`},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "bad.arrow")
			w, err := Create(path, schema, WriterOptions{})
			if err != nil {
				t.Fatal(err)
			}
			err = w.Write([]byte(tt.rec))
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("err = %v, want it to name %s and contain %q", err, path, tt.want)
			}
			// The rejected row left nothing in the builders.
			if err := w.Write([]byte(`{"id":7}`)); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			got, _ := readAll(t, path)
			if len(got) != 1 || !strings.HasPrefix(got[0], `{"id":7,`) {
				t.Fatalf("file holds %q, want only the good row", got)
			}
			os.Remove(path)
		})
	}
}

func TestAbortAndClose(t *testing.T) {
	schema, _ := InferSchema([][]byte{[]byte(`{"a":1}`)})
	dir := t.TempDir()
	path := filepath.Join(dir, "out.arrow")
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
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close after Abort: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("left behind: %v", ents)
	}
	for _, o := range []WriterOptions{{Format: "feather3"}, {Compression: "brotli"}} {
		if _, err := Create(path, schema, o); err == nil {
			t.Errorf("%+v: want error", o)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("left behind: %v", ents)
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	stream := filepath.Join(dir, "s.arrow")
	file := filepath.Join(dir, "f.arrow")
	writeDatasets(t, stream, false, 3)
	writeDatasets(t, file, true, 3)
	sdata, _ := os.ReadFile(stream)
	fdata, _ := os.ReadFile(file)
	flip := func(b []byte, off int) []byte {
		b = bytes.Clone(b)
		for i := off; i < off+8 && i < len(b); i++ {
			b[i] ^= 0xff
		}
		return b
	}
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "not a readable"},
		{"jsonl", []byte(`{"a":1}` + "\n"), "not a readable"},
		{"stream truncated", sdata[:len(sdata)*2/3], "truncated"},
		{"stream schema flipped", flip(sdata, 8), ""},
		{"stream batch header flipped", flip(sdata, len(sdata)/2), ""},
		{"file truncated", fdata[:len(fdata)-20], "not a readable"},
		{"file footer flipped", flip(fdata, len(fdata)-30), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_")+".arrow")
			if err := os.WriteFile(path, tt.data, 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := Open(path)
			if err == nil {
				for err == nil {
					_, _, err = r.Next()
				}
				r.Close()
				if err == io.EOF {
					t.Fatal("corrupt file read to the end without an error")
				}
			}
			t.Logf("error: %v", err)
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not name the file or lacks %q", err, tt.want)
			}
		})
	}
}

// TestCorruptionNeverPanics flips bytes all over stream and file format
// files: every read either ends (IPC has no checksums, so a value may just
// change) or fails with an error naming the file; it never panics.
func TestCorruptionNeverPanics(t *testing.T) {
	dir := t.TempDir()
	for _, variant := range []string{"stream", "file", "stream zstd", "file lz4"} {
		start := time.Now()
		good := filepath.Join(dir, "good.arrow")
		fileFormat := strings.HasPrefix(variant, "file")
		writeDatasets(t, good, fileFormat, 1)
		if format, comp, ok := strings.Cut(variant, " "); ok {
			// Re-encode with our writer and IPC body compression.
			rows, schema := readAll(t, good)
			w, err := Create(good, schema, WriterOptions{Format: format, Compression: comp, BatchRows: 2})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				if err := w.Write([]byte(r)); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
		}
		data, err := os.ReadFile(good)
		if err != nil {
			t.Fatal(err)
		}
		step := 5
		if strings.Contains(variant, " ") {
			step = 13 // a corrupt compressed buffer may still inflate to 64 MiB: slower
		}
		failed, tried := formattest.FlipSweep(t, data, filepath.Join(dir, "bad.arrow"), step, formattest.Drain(func(p string) (*Reader, error) { return Open(p) }))
		t.Logf("%s: %d of %d corruptions detected (%v)", variant, failed, tried, time.Since(start))
		if failed == 0 {
			t.Fatalf("%s: no corruption was detected at all", variant)
		}
	}
}

// TestMapKeysOfEveryStringType: map keys of type large_utf8 read as the
// strings they are (they were quoted twice: {"\"k\"": …}), like utf8
// keys; integer keys become JSON strings.
func TestMapKeysOfEveryStringType(t *testing.T) {
	for _, c := range []struct {
		name string
		key  arrow.DataType
		in   string
		want string
	}{
		{"utf8", arrow.BinaryTypes.String, `{"m":[{"key":"k","value":"v"}]}`, `{"m":{"k":"v"}}`},
		{"large_utf8", arrow.BinaryTypes.LargeString, `{"m":[{"key":"k","value":"v"},{"key":"q\"uote","value":"w"}]}`, `{"m":{"k":"v","q\"uote":"w"}}`},
		{"int64", arrow.PrimitiveTypes.Int64, `{"m":[{"key":7,"value":"v"}]}`, `{"m":{"7":"v"}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			schema := arrow.NewSchema([]arrow.Field{{Name: "m", Type: arrow.MapOf(c.key, arrow.BinaryTypes.String), Nullable: true}}, nil)
			rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, schema, strings.NewReader("["+c.in+"]"))
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "m.arrow")
			f, _ := os.Create(path)
			w, err := ipc.NewFileWriter(f, ipc.WithSchema(schema))
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Write(rec); err != nil {
				t.Fatal(err)
			}
			w.Close()
			f.Close()
			if got, _ := readAll(t, path); len(got) != 1 || got[0] != c.want {
				t.Errorf("read %q, want %s", got, c.want)
			}
		})
	}
}

func TestCheckBase64(t *testing.T) {
	long := strings.Repeat("QUJD", 3000)
	for _, s := range []string{"", "QQ==", "QUI=", "QUJD", long, long + "QQ==", long[:4096] + "Q", long[:4096] + "!!!!" + long,
		"QUJD\nQUJD", long[:5000] + "\r\n" + long[:4000], "Q", "QQ=", long + "="} {
		raw, werr := base64.StdEncoding.DecodeString(s)
		n, err := checkBase64(s)
		if (err == nil) != (werr == nil) || (err != nil && err.Error() != werr.Error()) || (err == nil && n != len(raw)) {
			t.Errorf("%.20q (len %d): %d, %v; DecodeString %d, %v", s, len(s), n, err, len(raw), werr)
		}
	}
}

// TestStringAsTextPart: see formattest.StringAsTextPart.
func TestStringAsTextPart(t *testing.T) {
	schema, err := InferSchema([][]byte{[]byte(formattest.TextPartSample)})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "parts.arrow")
	w, err := Create(path, schema, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	formattest.StringAsTextPart(t, w, func() []string {
		got, _ := readAll(t, path)
		return got
	})
}
