package jsonl

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

type rangeRec struct {
	line int64
	text string
}

func readRange(t testing.TB, r interface {
	Next() ([]byte, int64, error)
}) []rangeRec {
	var out []rangeRec
	for {
		b, line, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rangeRec{line, string(b)})
	}
}

// checkRanges tiles the file at path with ranges of size step and checks
// that they read exactly what one Reader over the whole file reads, with
// the same line numbers (each range's firstLine the lines before it), and
// that their hashes together see every byte once.
func checkRanges(t testing.TB, path string, data []byte, step int64) {
	whole, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	want := readRange(t, whole)
	whole.Close()
	var got []rangeRec
	var hashed bytes.Buffer
	lines := int64(0)
	for start := int64(0); start < int64(len(data)) || start == 0; start += step {
		end := min(start+step, int64(len(data)))
		r, err := OpenRange(path, start, end, lines, &hashed)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, readRange(t, r)...)
		lines = r.Lines()
		r.Close()
		if len(data) == 0 {
			break
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("step %d over %q:\nranges %v\nwhole  %v", step, data, got, want)
	}
	if !bytes.Equal(hashed.Bytes(), data) {
		t.Fatalf("step %d over %q: the hashes saw %q", step, data, hashed.Bytes())
	}
}

func TestRangesTileTheFile(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	ends := []string{"\n", "\r\n", "\r", "\n\n", "\r\r\n", " \n"}
	dir := t.TempDir()
	trials := 200
	if testing.Short() {
		trials = 50 // the first 50 of the same random files
	}
	for trial := range trials {
		var b bytes.Buffer
		if trial%5 == 0 {
			b.Write(bom)
		}
		for range r.IntN(12) {
			fmt.Fprintf(&b, `{"k":%q}`, bytes.Repeat([]byte("x"), r.IntN(30)))
			b.WriteString(ends[r.IntN(len(ends))])
		}
		if r.IntN(2) == 0 { // a last line without an end
			b.WriteString(`{"last":1}`)
		}
		path := filepath.Join(dir, fmt.Sprintf("f%d.jsonl", trial))
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, step := range []int64{1, 2, 3, 7, 16, 1 + r.Int64N(64), 1 << 20} {
			checkRanges(t, path, b.Bytes(), step)
		}
	}
}

func FuzzRanges(f *testing.F) {
	f.Add([]byte("{\"a\":1}\r\n\r{\"b\":2}\n\n{\"c\":3}"), uint8(3))
	f.Add([]byte("\xef\xbb\xbf{}\r{}\r\n{}"), uint8(1))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, step uint8) {
		if bytes.HasPrefix(data, []byte{0x1f, 0x8b}) || bytes.HasPrefix(data, []byte{0xFF, 0xFE}) || bytes.HasPrefix(data, []byte{0xFE, 0xFF}) {
			return // gzip and UTF-16 are not read by range
		}
		path := filepath.Join(dir, "f.jsonl")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		checkRanges(t, path, data, int64(step)+1)
	})
}

// TestRangeInsideALongLineStopsAtItsEnd: a range that starts inside a line
// (of the range before) and ends before the line does holds no record, and
// reads no further than its own end (plus a buffer), not the rest of the
// line: a 64 MB record cut into 1 MiB ranges must not make each of them read
// (or hold) the rest of the record.
func TestRangeInsideALongLineStopsAtItsEnd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "long.jsonl")
	line := append(append([]byte(`{"k":"`), bytes.Repeat([]byte("x"), 64<<20)...), "\"}\n{\"next\":1}\n"...)
	if err := os.WriteFile(path, line, 0o644); err != nil {
		t.Fatal(err)
	}
	start, end := int64(8<<20), int64(9<<20)
	r, err := OpenRange(path, start, end, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := readRange(t, r); len(got) != 0 {
		t.Fatalf("records %v; want none", got)
	}
	n := r.BytesRead()
	if n > (end-start)+2*bufSize {
		t.Errorf("read %d bytes for a range of %d", n, end-start)
	}
	t.Logf("read %d bytes for a range of %d inside a line of %d", n, end-start, len(line))
}
