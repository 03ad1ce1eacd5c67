package main

import (
	"bytes"
	"image"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	pq "github.com/parquet-go/parquet-go"

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

// TestCompressParquetImageColumn: `trajcompress compress` on a Parquet
// file with datasets Image columns (an images list and images inside
// content parts, struct<bytes: binary, path: string>) whose records are
// under the target writes the image columns back byte for byte, still
// binary, as parquet-go's own row reader sees them.
func TestCompressParquetImageColumn(t *testing.T) {
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
	f, err := os.Create(src)
	if err != nil {
		t.Fatal(err)
	}
	w := pq.NewGenericWriter[e2eRow](f, pq.KeyValueMetadata("huggingface",
		`{"info":{"features":{"messages":[{"role":{"dtype":"string","_type":"Value"},"content":[{"type":{"dtype":"string","_type":"Value"},"text":{"dtype":"string","_type":"Value"},"image":{"_type":"Image"}}]}],"images":{"feature":{"_type":"Image"},"_type":"Sequence"}}}}`))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()

	out := filepath.Join(tmp, "out.parquet")
	outcomes := filepath.Join(tmp, "o.jsonl")
	mustRun(t, "compress", "--quiet", "--input", src, "--output", out, "--target-max-tokens", "100000", "--outcomes", outcomes)
	for _, l := range lines(t, outcomes) {
		if !bytes.Contains(l, []byte(`"outcome":"skipped_under_target"`)) {
			t.Fatalf("want every record unchanged: %s", l)
		}
	}

	g, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	st, _ := g.Stat()
	pf, err := pq.OpenFile(g, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range pf.Metadata().RowGroups[0].Columns {
		if p := strings.Join(c.MetaData.PathInSchema, "."); strings.HasSuffix(p, ".bytes") {
			leaf, _ := pf.Schema().Lookup(c.MetaData.PathInSchema...)
			if leaf.Node.Type().Kind() != pq.ByteArray || leaf.Node.Type().LogicalType() != nil {
				t.Errorf("column %s is %v, want a binary BYTE_ARRAY", p, leaf.Node.Type())
			}
		}
	}
	if hf, _ := pf.Lookup("huggingface"); strings.Count(hf, `"_type":"Image"`) != 2 {
		t.Errorf("the huggingface metadata lost its Image features: %s", hf)
	}
	got := make([]e2eRow, len(rows)+1)
	n, err := pq.NewGenericReader[e2eRow](pf).Read(got)
	if err != nil && err != io.EOF {
		t.Fatal(err)
	}
	if n != len(rows) {
		t.Fatalf("%d rows out, %d in", n, len(rows))
	}
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
