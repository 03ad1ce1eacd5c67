package roundtrip

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	farrow "github.com/trajcompress/trajcompress/format/arrow"
	"github.com/trajcompress/trajcompress/format/parquet"
)

// benchImageMB is the size of the image in BenchmarkImageRow: a 20 MB
// screenshot, the size of a full-resolution browser screenshot.
const benchImageMB = 20

// BenchmarkImageRow reads and writes one row holding a 20 MB image in a
// datasets Image column (struct<bytes: binary, path: string> in a list),
// through format/parquet and format/arrow. Each op is a whole file: open,
// one Next (the row as JSON, the bytes as 26.7 MB of base64) and close;
// or create, one Write of that JSON and close. "x-image" is B/op over the
// image's size: what the row costs in allocations, in images. The figures
// are in bench/README.md ("Images").
//
//	go test ./format/internal/roundtrip -run XXX -bench ImageRow -benchmem
func BenchmarkImageRow(b *testing.B) {
	raw := make([]byte, benchImageMB<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range raw {
		raw[i] = byte(rng.Uint32())
	}
	rec := fmt.Sprintf(`{"id":"big","messages":[{"role":"user","content":[{"type":"image","text":null,"image":{"bytes":"%s","path":"shot.png"}}]}],"images":[]}`,
		base64.StdEncoding.EncodeToString(raw))
	recs, recB := []string{rec}, []byte(rec)
	dir := b.TempDir()
	pqIn, arIn := filepath.Join(dir, "in.parquet"), filepath.Join(dir, "in.arrow")
	writeImageParquet(b, pqIn, recs)
	writeImageArrow(b, arIn, recs)
	report := func(b *testing.B, f func()) {
		b.ReportAllocs()
		b.SetBytes(int64(len(raw)))
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		n := 0
		for b.Loop() {
			f()
			n++
		}
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(n)/float64(len(raw)), "x-image")
	}
	out := filepath.Join(dir, "out")
	type file interface {
		Next() ([]byte, int64, error)
		Close() error
	}
	type writer interface {
		Write([]byte) error
		Close() error
	}
	for _, c := range []struct {
		name string
		open func() (file, error)
		// create writes out+ext with the schema of the file f.
		create func(f file) (writer, error)
	}{
		{"parquet", func() (file, error) { return parquet.Open(pqIn) },
			func(f file) (writer, error) {
				return parquet.Create(out+".parquet", f.(*parquet.Reader).Schema(), parquet.WriterOptions{})
			}},
		{"arrow", func() (file, error) { return farrow.Open(arIn) },
			func(f file) (writer, error) {
				return farrow.Create(out+".arrow", f.(*farrow.Reader).Schema(), farrow.WriterOptions{})
			}},
	} {
		b.Run(c.name+"/read", func(b *testing.B) {
			report(b, func() {
				r, err := c.open()
				if err != nil {
					b.Fatal(err)
				}
				obj, _, err := r.Next()
				if err != nil || len(obj) < len(rec) {
					b.Fatalf("%v, %d bytes", err, len(obj))
				}
				r.Close()
			})
		})
		b.Run(c.name+"/write", func(b *testing.B) {
			r, err := c.open()
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			report(b, func() {
				w, err := c.create(r)
				if err != nil {
					b.Fatal(err)
				}
				if err := w.Write(recB); err != nil {
					b.Fatal(err)
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
	os.Remove(out + ".parquet")
	os.Remove(out + ".arrow")
}
