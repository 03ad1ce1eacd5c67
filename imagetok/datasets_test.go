package imagetok

import (
	"path/filepath"
	"testing"

	pq "github.com/parquet-go/parquet-go"

	"github.com/trajcompress/trajcompress/format/parquet"
	"github.com/trajcompress/trajcompress/internal/jsonx"
)

// TestDatasetsImageParquet writes a Parquet file the way Hugging Face
// datasets stores an Image sequence (a list of {bytes: binary, path:
// string} structs), reads it with format/parquet (which renders binary as
// base64), and finds the images from the row's JSON: sizes from the bytes'
// headers, a null bytes falling back to its path.
func TestDatasetsImageParquet(t *testing.T) {
	type img struct {
		Bytes []byte  `parquet:"bytes,optional"`
		Path  *string `parquet:"path,optional"`
	}
	type msg struct {
		Role    string `parquet:"role"`
		Content string `parquet:"content"`
	}
	type row struct {
		Messages []msg `parquet:"messages,list"`
		Images   []img `parquet:"images,list"`
	}
	dir := t.TempDir()
	name := "b.png"
	rows := []row{{
		Messages: []msg{{"user", "<image>Where is the button?"}, {"assistant", "Top left."}, {"user", "<image><image>And now?"}},
		Images:   []img{{Bytes: pngBytes(t, 1920, 1080)}, {Bytes: jpegBytes(t, 1280, 720), Path: &name}, {Path: &name}},
	}}
	path := filepath.Join(dir, "train.parquet")
	if err := pq.WriteFile(path, rows); err != nil {
		t.Fatal(err)
	}
	r, err := parquet.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	obj, _, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	msgs, ok := jsonx.Lookup(obj, "messages")
	if !ok {
		t.Fatalf("no messages in %.200s", obj)
	}
	var turns [][]byte
	for _, el := range jsonx.Elements(msgs, 0) {
		c, _ := jsonx.Lookup(msgs[el[0]:el[1]], "content")
		turns = append(turns, c)
	}
	f := Finder{Dir: dir} // b.png does not exist: the third image is of unknown size
	ims, err := f.Record(turns, RecordImages(obj))
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		turn   int
		src    Source
		format string
		w, h   int
		ref    string
	}
	wants := []want{{0, SourceInline, "png", 1920, 1080, ""}, {2, SourceInline, "jpeg", 1280, 720, "b.png"}, {2, SourceFile, "", 0, 0, "b.png"}}
	if len(ims) != len(wants) {
		t.Fatalf("found %d images in %.300s", len(ims), obj)
	}
	for i, im := range ims {
		if got := (want{im.Turn, im.Source, im.Format, im.Width, im.Height, im.Ref}); got != wants[i] {
			t.Errorf("image %d = %+v, want %+v", i, got, wants[i])
		}
	}
}
