package main

import (
	"bytes"
	"encoding/base64"
	"errors"
	"image"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	garrow "github.com/apache/arrow/go/v17/arrow"
	pq "github.com/parquet-go/parquet-go"

	"github.com/trajcompress/trajcompress/format"
	"github.com/trajcompress/trajcompress/format/arrow"
	"github.com/trajcompress/trajcompress/format/parquet"
)

type e2eImage struct {
	Bytes []byte  `parquet:"bytes,optional"`
	Path  *string `parquet:"path,optional"`
}

type e2ePart struct {
	Type  *string   `parquet:"type,optional"`
	Text  *string   `parquet:"text,optional"`
	Image *e2eImage `parquet:"image,optional"`
}

type e2eMessage struct {
	Role    *string   `parquet:"role,optional"`
	Content []e2ePart `parquet:"content,list,optional"`
}

type e2eRow struct {
	Messages []e2eMessage `parquet:"messages,list,optional"`
	Images   []*e2eImage  `parquet:"images,list,optional"`
}

// writeE2EParquet writes rows to a Parquet file at path with parquet-go,
// with the datasets features of e2eRow (Image in the content parts and in
// the images list) as its "huggingface" metadata.
func writeE2EParquet(t *testing.T, path string, rows []e2eRow) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := pq.NewGenericWriter[e2eRow](f, pq.KeyValueMetadata("huggingface",
		`{"info":{"features":{"messages":[{"role":{"dtype":"string","_type":"Value"},"content":[{"type":{"dtype":"string","_type":"Value"},"text":{"dtype":"string","_type":"Value"},"image":{"_type":"Image"}}]}],"images":{"feature":{"_type":"Image"},"_type":"Sequence"}}}}`))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// readE2EParquet reads the n rows of the Parquet file at path with
// parquet-go's own row reader, after checking that its two image bytes
// columns are binary BYTE_ARRAYs (no STRING annotation) and that its
// huggingface metadata still declares both Image features.
func readE2EParquet(t *testing.T, path string, n int) []e2eRow {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := pq.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	for _, col := range [][]string{{"images", "list", "element", "bytes"}, {"messages", "list", "element", "content", "list", "element", "image", "bytes"}} {
		leaf, ok := pf.Schema().Lookup(col...)
		if !ok || leaf.Node.Type().Kind() != pq.ByteArray || leaf.Node.Type().LogicalType() != nil {
			t.Errorf("%s: column %s: %v, want a binary BYTE_ARRAY", path, strings.Join(col, "."), leaf.Node)
		}
	}
	if hf, _ := pf.Lookup("huggingface"); strings.Count(hf, `"_type":"Image"`) != 2 {
		t.Errorf("%s: the huggingface metadata lost its Image features: %s", path, hf)
	}
	got := make([]e2eRow, n+1)
	m, err := pq.NewGenericReader[e2eRow](pf).Read(got)
	if err != nil && err != io.EOF {
		t.Fatal(err)
	}
	if m != n {
		t.Fatalf("%s: %d rows, want %d", path, m, n)
	}
	return got[:n]
}

// TestCompressParquetImageColumn: `trajcompress compress` on a Parquet
// file with datasets Image columns (an images list and images inside
// content parts, struct<bytes: binary, path: string>) whose records are
// under the target writes the image columns back byte for byte, still
// binary, as parquet-go's own row reader sees them.
func TestCompressParquetImageColumn(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	str := func(s string) *string { return &s }
	shot := func(w, h int, seed byte) []byte {
		img := image.NewGray(image.Rect(0, 0, w, h))
		for i := range img.Pix {
			img.Pix[i] = byte(i*7) ^ seed
		}
		var b bytes.Buffer
		if err := png.Encode(&b, img); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	var rows []e2eRow
	for i := range 4 {
		rows = append(rows, e2eRow{
			Messages: []e2eMessage{
				{Role: str("user"), Content: []e2ePart{{Type: str("text"), Text: str("What is on the screen?")},
					{Type: str("image"), Image: &e2eImage{Bytes: shot(64+i, 48, byte(i)), Path: str("s.png")}}}},
				{Role: str("assistant"), Content: []e2ePart{{Type: str("text"), Text: str("A login form.")}}},
			},
			Images: []*e2eImage{{Bytes: shot(32, 32+i, 0x80|byte(i))}, {Bytes: []byte{0xff, 0xfe, 0, 1, 2}, Path: str("odd.bin")}},
		})
	}
	src := filepath.Join(tmp, "train.parquet")
	writeE2EParquet(t, src, rows)

	out := filepath.Join(tmp, "out.parquet")
	outcomes := filepath.Join(tmp, "o.jsonl")
	mustRun(t, "compress", "--quiet", "--input", src, "--output", out, "--target-max-tokens", "100000", "--outcomes", outcomes)
	for _, l := range lines(t, outcomes) {
		if !bytes.Contains(l, []byte(`"outcome":"skipped_under_target"`)) {
			t.Fatalf("want every record unchanged: %s", l)
		}
	}

	got := readE2EParquet(t, out, len(rows))
	for i := range rows {
		a, b := rows[i], got[i]
		same := len(a.Images) == len(b.Images) && len(b.Messages) == 2 && b.Messages[0].Content[1].Image != nil &&
			bytes.Equal(a.Messages[0].Content[1].Image.Bytes, b.Messages[0].Content[1].Image.Bytes) &&
			*b.Messages[0].Content[1].Image.Path == "s.png" && b.Messages[0].Content[0].Image == nil
		for j := range a.Images {
			same = same && b.Images[j] != nil && bytes.Equal(a.Images[j].Bytes, b.Images[j].Bytes) &&
				(a.Images[j].Path == nil) == (b.Images[j].Path == nil)
		}
		if !same {
			t.Errorf("row %d: the image columns changed", i)
		}
	}
	// format/parquet reads the two files as the same records.
	rin, err := parquet.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer rin.Close()
	rout, err := parquet.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer rout.Close()
	for range rows {
		a, _, err := rin.Next()
		if err != nil {
			t.Fatal(err)
		}
		a = bytes.Clone(a)
		b, _, err := rout.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, a[:len(a)-1]) {
			t.Errorf("record read back differs:\n in %.300s\nout %.300s", a, b)
		}
	}
}

// TestCompressParquetLateImagesToArrow: `trajcompress compress --input
// x.parquet --output y.arrow` on a datasets file whose first
// format.SchemaSample rows have no image (the images list empty, every
// content part's image null) types the Image columns of the inferred
// Arrow schema from the huggingface features, struct<bytes: binary,
// path: string>, so the later rows' images are written as their bytes
// instead of failing on a string column (review D2).
func TestCompressParquetLateImagesToArrow(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	str := func(s string) *string { return &s }
	shot := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR not utf-8 \xff\xfe")
	var rows []e2eRow
	for i := range format.SchemaSample + 2 {
		r := e2eRow{Messages: []e2eMessage{
			{Role: str("user"), Content: []e2ePart{{Type: str("text"), Text: str("Which button?")}}},
			{Role: str("assistant"), Content: []e2ePart{{Type: str("text"), Text: str("The blue one.")}}},
		}, Images: []*e2eImage{}}
		if i >= format.SchemaSample {
			r.Messages[0].Content = append(r.Messages[0].Content, e2ePart{Type: str("image"), Image: &e2eImage{Bytes: shot, Path: str("s.png")}})
			r.Images = []*e2eImage{{Bytes: shot}}
		}
		rows = append(rows, r)
	}
	src := filepath.Join(tmp, "x.parquet")
	writeE2EParquet(t, src, rows)

	out := filepath.Join(tmp, "y.arrow")
	mustRun(t, "compress", "--quiet", "--input", src, "--output", out, "--target-max-tokens", "100000")
	r, err := arrow.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	s := r.Schema().Arrow()
	img := garrow.StructOf(garrow.Field{Name: "bytes", Type: garrow.BinaryTypes.Binary, Nullable: true},
		garrow.Field{Name: "path", Type: garrow.BinaryTypes.String, Nullable: true})
	if got := s.Field(s.FieldIndices("images")[0]).Type; !garrow.TypeEqual(got, garrow.ListOf(img)) {
		t.Errorf("images: %v, want %v", got, garrow.ListOf(img))
	}
	part := s.Field(s.FieldIndices("messages")[0]).Type.(*garrow.ListType).Elem().(*garrow.StructType)
	content, _ := part.FieldByName("content")
	image, _ := content.Type.(*garrow.ListType).Elem().(*garrow.StructType).FieldByName("image")
	if !garrow.TypeEqual(image.Type, img) {
		t.Errorf("messages.content.image: %v, want %v", image.Type, img)
	}
	b64 := base64.StdEncoding.EncodeToString(shot)
	n := 0
	for ; ; n++ {
		rec, _, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		if n >= format.SchemaSample {
			want = 2
		}
		if got := bytes.Count(rec, []byte(`"bytes":"`+b64+`"`)); got != want {
			t.Errorf("row %d holds the image %d times, want %d: %.300s", n, got, want, rec)
		}
	}
	if n != len(rows) {
		t.Errorf("%d rows out, %d in", n, len(rows))
	}

	// And back: Arrow → Parquet infers the Parquet schema the same way.
	back := filepath.Join(tmp, "z.parquet")
	mustRun(t, "compress", "--quiet", "--input", out, "--output", back, "--target-max-tokens", "100000")
	got := readE2EParquet(t, back, len(rows))
	if last := got[len(rows)-1]; len(last.Images) != 1 || !bytes.Equal(last.Images[0].Bytes, shot) ||
		len(last.Messages[0].Content) != 2 || last.Messages[0].Content[1].Image == nil || !bytes.Equal(last.Messages[0].Content[1].Image.Bytes, shot) {
		t.Errorf("the last row's images did not come back: %+v", last)
	}
}
