package format

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"testing"

	garrow "github.com/apache/arrow/go/v17/arrow"
	pq "github.com/parquet-go/parquet-go"

	"github.com/trajcompress/trajcompress/format/arrow"
	"github.com/trajcompress/trajcompress/format/internal/formattest"
	"github.com/trajcompress/trajcompress/format/parquet"
)

// imageFeatures are datasets' features of imageSchema's columns.
const imageFeatures = `{"images":{"feature":{"_type":"Image"},"_type":"Sequence"},"messages":[{"role":{"dtype":"string","_type":"Value"},"content":[{"type":{"dtype":"string","_type":"Value"},"image":{"_type":"Image"}}]}]}`

// imageSchema is the Arrow schema datasets gives an images list and
// messages whose content parts hold an image, with its "huggingface"
// metadata.
func imageSchema() *arrow.Schema {
	img := garrow.StructOf(garrow.Field{Name: "bytes", Type: garrow.BinaryTypes.Binary, Nullable: true},
		garrow.Field{Name: "path", Type: garrow.BinaryTypes.String, Nullable: true})
	part := garrow.StructOf(garrow.Field{Name: "type", Type: garrow.BinaryTypes.String, Nullable: true},
		garrow.Field{Name: "image", Type: img, Nullable: true})
	msg := garrow.StructOf(garrow.Field{Name: "role", Type: garrow.BinaryTypes.String, Nullable: true},
		garrow.Field{Name: "content", Type: garrow.ListOf(part), Nullable: true})
	md := garrow.NewMetadata([]string{HFMetadata}, []string{`{"info":{"features":` + imageFeatures + `}}`})
	return arrow.NewSchema(garrow.NewSchema([]garrow.Field{
		{Name: "images", Type: garrow.ListOf(img), Nullable: true},
		{Name: "messages", Type: garrow.ListOf(msg), Nullable: true},
	}, &md))
}

// TestCrossFormatImages: datasets Image columns stay binary structs when
// an Arrow file is written as Parquet and that Parquet file as Arrow (the
// output schema is inferred from the records, which hold the bytes as
// base64 text, and typed by the carried "huggingface" features); the
// bytes come back identical, a null image stays null.
func TestCrossFormatImages(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe not utf-8")
	b64 := base64.StdEncoding.EncodeToString(png)
	s := imageSchema()
	recs := []string{
		`{"images":[{"bytes":"` + b64 + `","path":"a.png"},null],"messages":[{"role":"user","content":[{"type":"image","image":{"bytes":"` + b64 + `","path":null}}]}]}`,
		`{"images":[],"messages":[{"role":"user","content":[{"type":"text","image":null}]}]}`,
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "in.arrow")
	writeArrow(t, src, s, recs)
	pqOut := filepath.Join(dir, "out.parquet")
	copyAs(t, src, pqOut, Parquet, recs)
	pf := formattest.OpenParquet(t, pqOut)
	formattest.BinaryLeaves(t, pf, "images.list.element.bytes", "messages.list.element.content.list.element.image.bytes")
	// parquet-go reads the raw bytes back.
	rows := make([]pq.Row, 3)
	n, _ := pf.RowGroups()[0].Rows().ReadRows(rows)
	found := 0
	for _, v := range rows[0] {
		if bytes.Equal(v.ByteArray(), png) {
			found++
		}
	}
	if n != 2 || found != 2 {
		t.Errorf("parquet-go reads %d rows, the image bytes %d times in row 0; want 2 and 2", n, found)
	}

	arOut := filepath.Join(dir, "back.arrow")
	copyAs(t, pqOut, arOut, Arrow, recs)
	r, err := arrow.Open(arOut)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	imgs := r.Schema().Arrow().Field(0).Type.(*garrow.ListType).Elem().(*garrow.StructType)
	if bt := imgs.Field(0).Type; bt.ID() != garrow.BINARY {
		t.Errorf("Arrow images.bytes is %v, want binary", bt)
	}
}

// writeArrow writes recs to an Arrow file at path with schema s.
func writeArrow(t *testing.T, path string, s *arrow.Schema, recs []string) {
	t.Helper()
	w, err := arrow.Create(path, s, arrow.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	formattest.WriteAll(t, w, formattest.Case{Recs: recs}.Bytes())
}

// copyAs writes the records of in to out in format, as the CLI converts,
// and checks that they read as want.
func copyAs(t *testing.T, in, out, format string, want []string) {
	t.Helper()
	r, err := Open(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w, err := Create(out, format, r.Schema, Column{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		rec, _, err := r.Next()
		if errors.Is(err, io.EOF) {
			if i != len(want) {
				t.Errorf("%s: %d rows, want %d", in, i, len(want))
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if i < len(want) && string(rec) != want[i] {
			t.Errorf("%s row %d reads as\n%s\nwant\n%s", in, i, rec, want[i])
		}
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestCrossFormatLateImages: a converted file whose first SchemaSample
// rows hold no image (an Image column always null, a list of images
// always empty, the older Sequence of a dict with empty lists) still gets
// the Image columns typed struct<bytes: binary, path: string> from the
// features alone, Arrow → Parquet and Parquet → Arrow, and the later
// rows' images are written as their bytes (review D2, D3).
func TestCrossFormatLateImages(t *testing.T) {
	feats := `{"img":{"_type":"Image"},"imgs":[{"_type":"Image"}],"s":{"feature":{"image":{"_type":"Image"},"id":{"dtype":"int64","_type":"Value"}},"_type":"Sequence"}}`
	hf := `{"info":{"features":` + feats + `}}`
	img := garrow.StructOf(garrow.Field{Name: "bytes", Type: garrow.BinaryTypes.Binary, Nullable: true},
		garrow.Field{Name: "path", Type: garrow.BinaryTypes.String, Nullable: true})
	seq := garrow.StructOf(garrow.Field{Name: "image", Type: garrow.ListOf(img), Nullable: true},
		garrow.Field{Name: "id", Type: garrow.ListOf(garrow.PrimitiveTypes.Int64), Nullable: true})
	md := garrow.NewMetadata([]string{HFMetadata}, []string{hf})
	s := arrow.NewSchema(garrow.NewSchema([]garrow.Field{
		{Name: "img", Type: img, Nullable: true},
		{Name: "imgs", Type: garrow.ListOf(img), Nullable: true},
		{Name: "s", Type: seq, Nullable: true},
	}, &md))
	png := []byte("\x89PNG\r\n\x1a\n\x00 late image \xff")
	b64 := base64.StdEncoding.EncodeToString(png)
	var recs []string
	for range SchemaSample {
		recs = append(recs, `{"img":null,"imgs":[],"s":{"image":[],"id":[1]}}`)
	}
	last := `{"img":{"bytes":"` + b64 + `","path":null},"imgs":[{"bytes":"` + b64 + `","path":"a.png"}],"s":{"image":[{"bytes":"` + b64 + `","path":null}],"id":[7]}}`
	recs = append(recs, last)
	leaves := []string{"img.bytes", "imgs.list.element.bytes", "s.image.list.element.bytes"}
	t.Run("arrow to parquet", func(t *testing.T) {
		dir := t.TempDir()
		src := filepath.Join(dir, "in.arrow")
		writeArrow(t, src, s, recs)
		out := filepath.Join(dir, "out.parquet")
		copyAs(t, src, out, Parquet, recs)
		formattest.BinaryLeaves(t, formattest.OpenParquet(t, out), leaves...)
	})
	t.Run("parquet to arrow", func(t *testing.T) {
		// The source's schema is inferred from the row that has images:
		// its Image columns are binary structs with the code before the
		// fix too.
		ps, err := parquet.InferSchemaFeatures([][]byte{[]byte(last)}, hf)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		src := filepath.Join(dir, "in.parquet")
		w, err := parquet.Create(src, ps.WithKeyValues(parquet.KeyValue{Key: HFMetadata, Value: hf}), parquet.WriterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		formattest.WriteAll(t, w, formattest.Case{Recs: recs}.Bytes())
		formattest.BinaryLeaves(t, formattest.OpenParquet(t, src), leaves...)
		out := filepath.Join(dir, "out.arrow")
		copyAs(t, src, out, Arrow, recs)
		r, err := arrow.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if got, want := r.Schema().Arrow().Fields(), s.Arrow().Fields(); !slices.EqualFunc(got, want, garrow.Field.Equal) {
			t.Errorf("Arrow schema\n%v\nwant\n%v", got, want)
		}
	})
}
