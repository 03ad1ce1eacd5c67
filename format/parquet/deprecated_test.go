package parquet

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	pq "github.com/parquet-go/parquet-go"
)

// TestGenericWriterStillPanicsOnMaps pins why writer.go keeps the
// deprecated pq.Writer: its replacement, GenericWriter[any], panics when
// made for the schema Create builds from a file with a MAP column (as
// TestMapsAndBareRepeated rewrites). When this test fails, parquet-go has
// fixed that: switch Create to pq.NewGenericWriter[any] (the same Writer
// underneath, so the same bytes) and delete this test.
func TestGenericWriterStillPanicsOnMaps(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in.parquet")
	f, err := os.Create(in)
	if err != nil {
		t.Fatal(err)
	}
	w := pq.NewGenericWriter[mapRow](f)
	if _, err := w.Write([]mapRow{{Attrs: map[string]int64{"k": 1}}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	_, schema := readAll(t, in)
	out, _, err := schema.withExtraColumn(Column{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if recover() == nil {
			t.Error("pq.NewGenericWriter[any] takes a MAP schema now: replace the deprecated pq.Writer in writer.go")
		}
	}()
	pq.NewGenericWriter[any](io.Discard, pq.NewSchema("schema", out.root))
}
