package jsonval

import (
	"strings"
	"testing"
)

// BenchmarkDecode decodes a chat record whose texts hold escapes (new
// lines, quotes), as most trajectory texts do.
func BenchmarkDecode(b *testing.B) {
	turn := `{"role":"assistant","content":"` + strings.Repeat(`Line one of the answer,\n\"quoted\" and a tab\there. `, 40) + `"}`
	rec := []byte(`{"id":"r1","messages":[` + strings.Repeat(turn+",", 15) + turn + `]}`)
	b.SetBytes(int64(len(rec)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(rec); err != nil {
			b.Fatal(err)
		}
	}
}
