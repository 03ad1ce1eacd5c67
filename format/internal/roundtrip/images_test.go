package roundtrip

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	pq "github.com/parquet-go/parquet-go"

	farrow "github.com/trajcompress/trajcompress/format/arrow"
	"github.com/trajcompress/trajcompress/format/internal/formattest"
	"github.com/trajcompress/trajcompress/format/internal/jsonval"
	"github.com/trajcompress/trajcompress/format/parquet"
)

// Hugging Face datasets stores an Image feature as struct<bytes: binary,
// path: string>, here both as a top-level `images` list (LLaMA-Factory's
// multimodal layout) and inside message content parts. The Go types are
// written with parquet-go and read back with it (and with encoding/json,
// which renders []byte as base64, for the comparisons).
type dsImage struct {
	Bytes []byte  `parquet:"bytes,optional" json:"bytes"`
	Path  *string `parquet:"path,optional" json:"path"`
}

type dsPart struct {
	Type  *string  `parquet:"type,optional" json:"type"`
	Text  *string  `parquet:"text,optional" json:"text"`
	Image *dsImage `parquet:"image,optional" json:"image"`
}

type dsMessage struct {
	Role    *string  `parquet:"role,optional" json:"role"`
	Content []dsPart `parquet:"content,list,optional" json:"content"`
}

type dsMetrics struct {
	N *int64 `parquet:"n,optional" json:"n"`
}

type dsRow struct {
	ID       *string     `parquet:"id,optional" json:"id"`
	Messages []dsMessage `parquet:"messages,list,optional" json:"messages"`
	Images   []*dsImage  `parquet:"images,list,optional" json:"images"`
}

type dsRowOut struct {
	dsRow
	Metrics *dsMetrics `parquet:"compression_metrics,optional" json:"compression_metrics"`
}

// imageFeatures is the "huggingface" metadata datasets writes for dsRow.
const imageFeatures = `{"info":{"features":{"id":{"dtype":"string","_type":"Value"},` +
	`"messages":[{"role":{"dtype":"string","_type":"Value"},"content":[{"type":{"dtype":"string","_type":"Value"},` +
	`"text":{"dtype":"string","_type":"Value"},"image":{"_type":"Image"}}]}],` +
	`"images":{"feature":{"_type":"Image"},"_type":"Sequence"}}}}`

// noisePNG is a real PNG of w×h random pixels (incompressible, so its
// bytes are not one repeated run).
func noisePNG(t testing.TB, seed uint64, w, h int) []byte {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = uint8(rng.Uint32()), uint8(rng.Uint32()), uint8(rng.Uint32()), 255
	}
	img.Set(0, 0, color.NRGBA{0xff, 0xfe, 0x80, 0xff}) // bytes that are not UTF-8 somewhere
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// imageRecords are the input rows as JSON, every key present (null where
// there is no value), binary as base64: what format/parquet and
// format/arrow must read them as.
func imageRecords(t testing.TB) []string {
	var p [6]string
	for i := range p {
		p[i] = base64.StdEncoding.EncodeToString(noisePNG(t, uint64(i+1), 40+8*i, 30+4*i))
	}
	img := func(i int, path string) string {
		ps := "null"
		if path != "" {
			ps = `"` + path + `"`
		}
		return fmt.Sprintf(`{"bytes":"%s","path":%s}`, p[i], ps)
	}
	text := func(s string) string { return `{"type":"text","text":"` + s + `","image":null}` }
	imagePart := func(i int, path string) string { return `{"type":"image","text":null,"image":` + img(i, path) + `}` }
	return []string{
		// 0: left unchanged.
		`{"id":"r0","messages":[{"role":"user","content":[` + text("look") + `,` + imagePart(0, "shot1.png") + `]},` +
			`{"role":"assistant","content":[` + text("ok") + `]}],"images":[` + img(1, "a.png") + `,` + img(2, "") + `]}`,
		// 1: a content part becomes a text part, another part's image and
		// an images element become null.
		`{"id":"r1","messages":[{"role":"user","content":[` + imagePart(0, "x.png") + `,` + imagePart(3, "") + `,` + text("what") + `]}],` +
			`"images":[` + img(4, "b.png") + `,` + img(5, "") + `]}`,
		// 2: an entry of the images list is removed.
		`{"id":"r2","messages":[{"role":"user","content":[` + text("<image><image><image>") + `]}],"images":[` +
			img(1, "1.png") + `,` + img(2, "2.png") + `,` + img(3, "3.png") + `]}`,
	}
}

// editImages changes record i the way the image steps do, on the decoded
// tree; the same edit builds the expected output from the input records.
func editImages(t testing.TB, i int, o *jsonval.Object) {
	t.Helper()
	list := func(o *jsonval.Object, key string) []any {
		v, _ := o.Get(key)
		a, ok := v.([]any)
		if !ok {
			t.Fatalf("record %d: %s is %s, not an array", i, key, jsonval.KindName(v))
		}
		return a
	}
	set := func(o *jsonval.Object, key string, v any) {
		for j, k := range o.Keys {
			if k == key {
				o.Vals[j] = v
				return
			}
		}
		o.Keys, o.Vals = append(o.Keys, key), append(o.Vals, v)
	}
	metrics := &jsonval.Object{Keys: []string{"n"}, Vals: []any{json.Number(fmt.Sprint(i))}}
	switch i {
	case 1:
		parts := list(list(o, "messages")[0].(*jsonval.Object), "content")
		// The image part becomes the text part of the shared convention,
		// without an image key at all.
		parts[0] = &jsonval.Object{Keys: []string{"type", "text"}, Vals: []any{"text", "[image removed: 1024x768 png]"}}
		set(parts[1].(*jsonval.Object), "image", nil)
		list(o, "images")[1] = nil
		set(o, "compression_metrics", metrics)
	case 2:
		imgs := list(o, "images")
		set(o, "images", append(imgs[:1:1], imgs[2]))
		m := list(o, "messages")[0].(*jsonval.Object)
		list(m, "content")[0].(*jsonval.Object).Vals[1] = "<image>[image removed: 40x30 png]<image>"
		set(o, "compression_metrics", metrics)
	}
}

func decodeObject(t testing.TB, b []byte) *jsonval.Object {
	t.Helper()
	o, err := jsonval.DecodeObject(b)
	if err != nil {
		t.Fatalf("%v: %.200s", err, b)
	}
	return o
}

// wantImageRows is the expected output: the input records with the edits,
// every absent key null.
func wantImageRows(t testing.TB, recs []string) []any {
	var want []any
	for i, r := range recs {
		o := decodeObject(t, []byte(r))
		editImages(t, i, o)
		want = append(want, o)
	}
	return want
}

var strictIgnoreOrder = jsonval.EqualOptions{IgnoreOrder: true}

// sameRow compares a row read back with its expected value: a key absent
// in either counts as null (the text part written without an image key
// reads back with "image": null) but a null never equals a value.
func sameRow(got, want any) bool {
	return jsonval.Equal(got, want, jsonval.EqualOptions{NullIsAbsent: true, IgnoreOrder: true})
}

// passImages reads every row with r, applies editImages, and writes it
// with w; an unchanged row must read exactly as its input record.
func passImages(t *testing.T, recs []string, r source, w interface {
	Write([]byte) error
	Close() error
}) {
	t.Helper()
	got := drain(t, r)
	if len(got) != len(recs) {
		t.Fatalf("read %d rows, want %d", len(got), len(recs))
	}
	for i, obj := range got {
		o := decodeObject(t, obj)
		if !jsonval.Equal(o, decodeObject(t, []byte(recs[i])), strictIgnoreOrder) {
			t.Fatalf("row %d read as\n%.600s\nwant\n%.600s", i, obj, recs[i])
		}
		out := obj
		if i > 0 {
			editImages(t, i, o)
			out = jsonval.Append(nil, o)
		}
		if err := w.Write(out); err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func writeImageParquet(t testing.TB, path string, recs []string) {
	t.Helper()
	var rows []dsRow
	for _, r := range recs {
		var row dsRow
		if err := json.Unmarshal([]byte(r), &row); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, row)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	// As pyarrow writes it: no min/max statistics of the image bytes
	// (pyarrow leaves out statistics of values over 4 KiB).
	var opts []pq.WriterOption
	for _, p := range []string{"images.list.element.bytes", "messages.list.element.content.list.element.image.bytes"} {
		path := strings.Split(p, ".")
		opts = append(opts, pq.SkipPageStatistics(path...), pq.SkipPageBounds(path...))
	}
	w := pq.NewGenericWriter[dsRow](f, append(opts, pq.KeyValueMetadata("huggingface", imageFeatures))...)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// pqLeafTypes maps each leaf column path of a Parquet schema to its
// physical type and logical annotation.
func pqLeafTypes(n pq.Node, path string, out map[string]string) {
	if n.Leaf() {
		s := n.Type().Kind().String()
		if lt := n.Type().LogicalType(); lt != nil {
			s += "/" + lt.String()
		}
		out[path] = s
		return
	}
	for _, f := range n.Fields() {
		p := f.Name()
		if path != "" {
			p = path + "." + p
		}
		pqLeafTypes(f, p, out)
	}
}

// checkHFImage checks that the "huggingface" metadata of an output still
// declares the Image features of the input (so datasets loads the columns
// as Image) and has the extra column's feature.
func checkHFImage(t *testing.T, hf string) {
	t.Helper()
	got := decodeObject(t, []byte(hf))
	want := decodeObject(t, []byte(imageFeatures))
	gf, _ := got.Vals[0].(*jsonval.Object).Get("features")
	wf, _ := want.Vals[0].(*jsonval.Object).Get("features")
	g, w := gf.(*jsonval.Object), wf.(*jsonval.Object)
	for i, k := range w.Keys {
		v, _ := g.Get(k)
		if !jsonval.Equal(v, w.Vals[i], jsonval.EqualOptions{}) {
			t.Errorf("huggingface feature %q = %s, want %s", k, jsonval.Append(nil, v), jsonval.Append(nil, w.Vals[i]))
		}
	}
	if _, ok := g.Get("compression_metrics"); !ok {
		t.Errorf("huggingface features lack compression_metrics: %s", hf)
	}
	if n := strings.Count(hf, `"_type":"Image"`); n != 2 {
		t.Errorf("huggingface metadata has %d Image features, want 2: %s", n, hf)
	}
}

var metricsColumn = struct{ name, sample string }{"compression_metrics", `{"n":1}`}

// TestParquetImageColumns: a datasets Parquet file with Image columns goes
// through format/parquet's reader, the image edits and its writer; the
// output, read by parquet-go's own row reader, keeps the bytes of an
// unchanged record byte for byte in a BYTE_ARRAY column (not a base64
// string), writes null structs where the JSON has null, a null image
// field in a part that became text, a shorter images list, and the
// Image features in the "huggingface" metadata.
func TestParquetImageColumns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	recs := imageRecords(t)
	in, out := filepath.Join(dir, "in.parquet"), filepath.Join(dir, "out.parquet")
	writeImageParquet(t, in, recs)
	r, err := parquet.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	w, err := parquet.Create(out, r.Schema(), parquet.WriterOptions{Extra: parquet.Column{Name: metricsColumn.name, Sample: []byte(metricsColumn.sample)}})
	if err != nil {
		t.Fatal(err)
	}
	passImages(t, recs, r, w)

	pf, pin := formattest.OpenParquet(t, out), formattest.OpenParquet(t, in)
	inTypes, outTypes := map[string]string{}, map[string]string{}
	pqLeafTypes(pin.Schema(), "", inTypes)
	pqLeafTypes(pf.Schema(), "", outTypes)
	for k, v := range inTypes {
		if outTypes[k] != v {
			t.Errorf("column %s: %s in the output, %s in the input", k, outTypes[k], v)
		}
	}
	for _, k := range []string{"images.list.element.bytes", "messages.list.element.content.list.element.image.bytes"} {
		if outTypes[k] != "BYTE_ARRAY" {
			t.Errorf("column %s is %q, want BYTE_ARRAY without annotation (binary)", k, outTypes[k])
		}
	}
	hf, ok := pf.Lookup("huggingface")
	if !ok {
		t.Fatal("no huggingface metadata in the output")
	}
	checkHFImage(t, hf)
	// The image bytes are in the file once: no min/max statistics copy
	// them into the page headers or the footer.
	for _, c := range pf.Metadata().RowGroups[0].Columns {
		if p := strings.Join(c.MetaData.PathInSchema, "."); strings.HasSuffix(p, ".bytes") &&
			(len(c.MetaData.Statistics.MinValue)+len(c.MetaData.Statistics.MaxValue)+len(c.MetaData.Statistics.Min)+len(c.MetaData.Statistics.Max) > 0) {
			t.Errorf("column %s has min/max statistics in the footer", p)
		}
	}
	want := wantImageRows(t, recs)
	written := 0
	for i := range want {
		written += len(jsonval.Append(nil, want[i]))
	}
	if pf.Size() >= int64(written) {
		t.Errorf("the output is %d bytes, more than the %d bytes of JSON (base64) written to it: image bytes stored more than once?", pf.Size(), written)
	}

	// parquet-go's row reader, not format/parquet's assembler, reads the output.
	rows := make([]dsRowOut, len(recs)+1)
	n, err := pq.NewGenericReader[dsRowOut](pf).Read(rows)
	if err != nil && err != io.EOF {
		t.Fatal(err)
	}
	if n != len(recs) {
		t.Fatalf("output has %d rows, want %d", n, len(recs))
	}
	for i := range n {
		b, err := json.Marshal(rows[i])
		if err != nil {
			t.Fatal(err)
		}
		if !sameRow(decodeObject(t, b), want[i]) {
			t.Errorf("row %d written as\n%.800s\nwant\n%.800s", i, b, jsonval.Append(nil, want[i]))
		}
	}
	// The points of the test, spelled out on the Go values.
	var in0 []dsRow
	json.Unmarshal([]byte("["+strings.Join(recs, ",")+"]"), &in0) //nolint:errcheck // parsed above
	if !bytes.Equal(rows[0].Images[0].Bytes, in0[0].Images[0].Bytes) || *rows[0].Images[0].Path != "a.png" || rows[0].Images[1].Path != nil ||
		!bytes.Equal(rows[0].Messages[0].Content[1].Image.Bytes, in0[0].Messages[0].Content[1].Image.Bytes) {
		t.Error("row 0: image bytes or paths changed")
	}
	if rows[1].Images[1] != nil || rows[1].Messages[0].Content[1].Image != nil || rows[1].Messages[0].Content[0].Image != nil ||
		*rows[1].Messages[0].Content[0].Text != "[image removed: 1024x768 png]" {
		t.Errorf("row 1: want null image structs and the text part, got %+v %+v", rows[1].Images, rows[1].Messages[0].Content)
	}
	if len(rows[2].Images) != 2 || *rows[2].Images[1].Path != "3.png" {
		t.Errorf("row 2: want images [1.png 3.png], got %d", len(rows[2].Images))
	}

	// format/parquet reads its own output back as the records written.
	back := drain(t, mustOpenParquet(t, out))
	for i := range back {
		if !sameRow(decodeObject(t, back[i]), want[i]) {
			t.Errorf("row %d reads back as\n%.600s", i, back[i])
		}
	}
	nodeDump(t, "--parquet", out, want)
}

func mustOpenParquet(t *testing.T, path string) *parquet.Reader {
	t.Helper()
	r, err := parquet.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// imageArrowSchema is the Arrow schema datasets gives dsRow.
func imageArrowSchema() *arrow.Schema {
	img := arrow.StructOf(
		arrow.Field{Name: "bytes", Type: arrow.BinaryTypes.Binary, Nullable: true},
		arrow.Field{Name: "path", Type: arrow.BinaryTypes.String, Nullable: true})
	part := arrow.StructOf(
		arrow.Field{Name: "type", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "text", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "image", Type: img, Nullable: true})
	msg := arrow.StructOf(
		arrow.Field{Name: "role", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "content", Type: arrow.ListOf(part), Nullable: true})
	md := arrow.NewMetadata([]string{"huggingface"}, []string{imageFeatures})
	return arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "messages", Type: arrow.ListOf(msg), Nullable: true},
		{Name: "images", Type: arrow.ListOf(img), Nullable: true},
	}, &md)
}

// writeImageArrow writes recs as an Arrow IPC stream with arrow-go's own
// JSON reader (binary from base64), as datasets save_to_disk lays it out.
func writeImageArrow(t testing.TB, path string, recs []string) {
	t.Helper()
	s := imageArrowSchema()
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, s, strings.NewReader("["+strings.Join(recs, ",")+"]"))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := ipc.NewWriter(f, ipc.WithSchema(s))
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestArrowImageColumns is TestParquetImageColumns for Arrow IPC (a
// datasets save_to_disk data file), the output read by arrow-go's IPC
// reader and its JSON rendering of the record batch.
func TestArrowImageColumns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	recs := imageRecords(t)
	in, out := filepath.Join(dir, "in.arrow"), filepath.Join(dir, "out.arrow")
	writeImageArrow(t, in, recs)
	r, err := farrow.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	w, err := farrow.Create(out, r.Schema(), farrow.WriterOptions{Extra: farrow.Column{Name: metricsColumn.name, Sample: []byte(metricsColumn.sample)}})
	if err != nil {
		t.Fatal(err)
	}
	passImages(t, recs, r, w)

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
	inSchema := imageArrowSchema()
	for _, fld := range inSchema.Fields() {
		got, ok := ir.Schema().FieldsByName(fld.Name)
		if !ok || !arrow.TypeEqual(got[0].Type, fld.Type) {
			t.Errorf("field %s: type %v in the output, %v in the input", fld.Name, got, fld.Type)
		}
	}
	hf, ok := ir.Schema().Metadata().GetValue("huggingface")
	if !ok {
		t.Fatal("no huggingface metadata in the output")
	}
	checkHFImage(t, hf)
	want := wantImageRows(t, recs)
	var rows [][]byte
	for ir.Next() {
		var b bytes.Buffer
		if err := array.RecordToJSON(ir.Record(), &b); err != nil {
			t.Fatal(err)
		}
		for l := range bytes.SplitSeq(bytes.TrimSpace(b.Bytes()), []byte("\n")) {
			rows = append(rows, bytes.Clone(l))
		}
	}
	if err := ir.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(recs) {
		t.Fatalf("output has %d rows, want %d", len(rows), len(recs))
	}
	for i, b := range rows {
		if !sameRow(decodeObject(t, b), want[i]) {
			t.Errorf("row %d written as\n%.800s\nwant\n%.800s", i, b, jsonval.Append(nil, want[i]))
		}
	}
	// The validity of the null structs, spelled out on the arrays.
	f.Seek(0, io.SeekStart) //nolint:errcheck // a local file
	ir2, err := ipc.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer ir2.Release()
	if !ir2.Next() {
		t.Fatal(ir2.Err())
	}
	rec := ir2.Record()
	images := rec.Column(2).(*array.List)
	imgs := images.ListValues().(*array.Struct)
	start, _ := images.ValueOffsets(1)
	if !imgs.IsNull(int(start) + 1) {
		t.Error("row 1: images[1] is not a null struct")
	}
	if s, e := images.ValueOffsets(2); e-s != 2 {
		t.Errorf("row 2: images has %d entries, want 2", e-s)
	}
	bin := imgs.Field(0).(*array.Binary)
	s0, _ := images.ValueOffsets(0)
	var in0 dsRow
	json.Unmarshal([]byte(recs[0]), &in0) //nolint:errcheck // parsed above
	if !bytes.Equal(bin.Value(int(s0)), in0.Images[0].Bytes) {
		t.Error("row 0: images[0] bytes changed")
	}
	msgs := rec.Column(1).(*array.List).ListValues().(*array.Struct)
	parts := msgs.Field(1).(*array.List).ListValues().(*array.Struct)
	// Parts in order: row 0 has 2+1, so row 1's parts start at index 3.
	if !parts.Field(2).IsNull(3) || !parts.Field(2).IsNull(4) || parts.Field(1).(*array.String).Value(3) != "[image removed: 1024x768 png]" {
		t.Error("row 1: the parts' image fields are not null structs, or the text is missing")
	}
	nodeDump(t, "--arrow", out, want)
}

// nodeDump reads the file with npm hyparquet or apache-arrow (dump.mjs)
// and compares the rows with want, binary values ({"$bytes": base64})
// compared with want's base64 strings; it skips when node or the pinned
// packages are missing (see TestNodeReaders), and checks that the Image
// columns are binary and the Image features are in the metadata.
func nodeDump(t *testing.T, flag, path string, want []any) {
	t.Run("node", func(t *testing.T) { nodeDumpCheck(t, flag, path, want) })
}

func nodeDumpCheck(t *testing.T, flag, path string, want []any) {
	node, nodeDir := nodeSetup(t)
	cmd := exec.Command(node, "dump.mjs", flag, path)
	cmd.Dir = nodeDir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node dump.mjs: %v\n%s", err, stderr.String())
	}
	var dump struct {
		Columns  map[string]string
		Metadata map[string]string
		Rows     []json.RawMessage
	}
	if err := json.Unmarshal(out, &dump); err != nil {
		t.Fatalf("dump.mjs output: %v: %.300s", err, out)
	}
	binCols := 0
	for k, v := range dump.Columns {
		if strings.HasSuffix(k, "image.bytes") || strings.HasPrefix(k, "images.") && strings.HasSuffix(k, ".bytes") {
			binCols++
			if v != "BYTE_ARRAY" && v != "Binary" {
				t.Errorf("%s: column %s is %s, want binary", flag, k, v)
			}
		}
	}
	if binCols != 2 {
		t.Errorf("%s: found %d image bytes columns in %v, want 2", flag, binCols, dump.Columns)
	}
	checkHFImage(t, dump.Metadata["huggingface"])
	if len(dump.Rows) != len(want) {
		t.Fatalf("%s: node reads %d rows, want %d", flag, len(dump.Rows), len(want))
	}
	for i, raw := range dump.Rows {
		v, err := jsonval.Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		if !sameRow(unBytes(t, v), want[i]) {
			t.Errorf("%s: node reads row %d as\n%.800s\nwant\n%.800s", flag, i, raw, jsonval.Append(nil, want[i]))
		}
	}
	t.Logf("%s: node (%s) read %d rows; image bytes columns binary; Image features kept", flag, filepath.Base(node), len(dump.Rows))
}

// unBytes turns dump.mjs's {"$bytes": base64} back into base64 strings,
// after checking that no "bytes" key holds a plain string (a binary column
// read as text would otherwise compare equal to the base64 wanted).
func unBytes(t *testing.T, v any) any {
	switch x := v.(type) {
	case []any:
		for i := range x {
			x[i] = unBytes(t, x[i])
		}
	case *jsonval.Object:
		if len(x.Keys) == 1 && x.Keys[0] == "$bytes" {
			return x.Vals[0]
		}
		for i, k := range x.Keys {
			if _, isString := x.Vals[i].(string); k == "bytes" && isString {
				t.Errorf("node reads an image's bytes as a string, not binary")
			}
			x.Vals[i] = unBytes(t, x.Vals[i])
		}
	}
	return v
}

func nodeSkip(t *testing.T, msg string) {
	t.Helper()
	if os.Getenv("TRAJCOMPRESS_REQUIRE_NODE") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}
