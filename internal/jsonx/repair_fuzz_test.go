package jsonx_test

import (
	"bytes"
	"fmt"
	"testing"
	"unicode/utf8"

	"github.com/trajcompress/trajcompress/internal/jsontest"
	"github.com/trajcompress/trajcompress/internal/jsonx"
	"github.com/trajcompress/trajcompress/internal/testenv"
)

// FuzzRepairUTF8JSON: for a line that is valid JSON but for ill-formed
// UTF-8 in its strings, RepairUTF8's output is valid UTF-8 and valid JSON
// of the same structure, recursively into the strings that hold JSON,
// each string (and key) being its text as read with the ill-formed
// sequences replaced.
func FuzzRepairUTF8JSON(f *testing.F) {
	lines, err := testenv.RealLines(32<<10, 2, nil)
	if err != nil {
		f.Fatal(err)
	}
	bad := []string{"\xff", "\xe2\x82", "\xf0\x9f\x98", "\xed\xa0\x80", "\xc0\xaf"}
	for i, l := range lines {
		f.Add(l)
		// Ill-formed bytes in the first string value, and in a string held
		// by one (a JSON-encoded argument: after `\"`).
		b := bytes.Replace(l, []byte(`": "`), []byte(`": "`+bad[i%len(bad)]), 1)
		f.Add(bytes.Replace(b, []byte(`\": \"`), []byte(`\": \"`+bad[(i+1)%len(bad)]), 1))
	}
	for _, s := range jsontest.Tricky() {
		f.Add([]byte(s))
		f.Add(bytes.ReplaceAll([]byte(s), []byte("😀"), []byte("\xf0\x9f\x98")))
	}
	f.Add([]byte("{\"k\xff\":\"{\\\"k\xe2\x82\\\":\\\"\\\\\\\"\xf0\\\\\\\"\\\"}\"}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if !jsonx.Valid(b) {
			return
		}
		got, _ := jsonx.RepairUTF8(b)
		if !utf8.Valid(got) {
			t.Fatalf("RepairUTF8(%q) = %q: not valid UTF-8", b, got)
		}
		repaired := func(_ jsontest.Path, a, c string) error {
			if want, _ := jsonx.RepairUTF8([]byte(a)); string(want) != c {
				return fmt.Errorf("%q became %q, want %q", a, c, want)
			}
			return nil
		}
		if err := jsontest.Compare(b, got, jsontest.Options{Leaf: repaired, Key: repaired}); err != nil {
			t.Fatalf("RepairUTF8(%q) = %q: %v", b, got, err)
		}
	})
}
