package redact

import (
	"bufio"
	"os"
	"testing"
)

// BenchmarkRedactLineFile runs RedactLine over every line of the file
// named by REDACT_LINES (e.g. the first lines of bench/e2e's corpus);
// skipped when unset. SetBytes makes -bench report MB/s of lines.
func BenchmarkRedactLineFile(b *testing.B) {
	path := os.Getenv("REDACT_LINES")
	if path == "" {
		b.Skip("REDACT_LINES not set")
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var lines [][]byte
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<30)
	for sc.Scan() {
		lines = append(lines, append([]byte(nil), sc.Bytes()...))
		n += len(sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	r := Default()
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		for _, l := range lines {
			r.RedactLine(l)
		}
	}
}
