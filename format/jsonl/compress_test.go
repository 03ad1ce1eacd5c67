package jsonl

import (
	"io"
	"os"
	"strings"
	"testing"
)

// TestTruncatedCompressedIsAnError: a compressed file cut short is a read
// error naming the file and line, never a silent end (gzip, zstd, bzip2
// and xz alike).
func TestTruncatedCompressedIsAnError(t *testing.T) {
	for _, ext := range []string{"gz", "zst", "bz2", "xz"} {
		b, err := os.ReadFile("../testdata/compressed/records.jsonl." + ext)
		if err != nil {
			t.Fatal(err)
		}
		name := "runs/x.jsonl." + ext
		r, err := NewReader(strings.NewReader(string(b[:len(b)*2/3])), name)
		if err != nil {
			t.Fatalf("%s: %v", ext, err)
		}
		n := 0
		for {
			_, _, err = r.Next()
			if err != nil {
				break
			}
			n++
		}
		if err == io.EOF || !strings.HasPrefix(err.Error(), name+":") {
			t.Errorf("%s: after %d records: err = %v, want a read error naming the file", ext, n, err)
		}
		r.Close()
	}
}
