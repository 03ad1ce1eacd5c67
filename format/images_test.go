package format

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	garrow "github.com/apache/arrow/go/v17/arrow"
	pq "github.com/parquet-go/parquet-go"

	"github.com/trajcompress/trajcompress/format/arrow"
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
	w, err := arrow.Create(src, s, arrow.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write([]byte(r)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	copyAs := func(in, out, format string) {
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
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(rec) != recs[i] {
				t.Errorf("%s row %d reads as\n%s\nwant\n%s", in, i, rec, recs[i])
			}
			if err := w.Write(rec); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	pqOut := filepath.Join(dir, "out.parquet")
	copyAs(src, pqOut, Parquet)
	f, err := os.Open(pqOut)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := pq.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"images.list.element.bytes", "messages.list.element.content.list.element.image.bytes"} {
		leaf, ok := pf.Schema().Lookup(strings.Split(path, ".")...)
		if !ok || leaf.Node.Type().Kind() != pq.ByteArray || leaf.Node.Type().LogicalType() != nil {
			t.Errorf("Parquet column %s: %v, want binary", path, leaf.Node)
		}
	}
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
	copyAs(pqOut, arOut, Arrow)
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
