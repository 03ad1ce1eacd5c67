package jsonl

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

type line struct {
	text string
	no   int64
}

func readAll(t *testing.T, r *Reader) []line {
	t.Helper()
	var out []line
	for {
		b, n, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, line{string(b), n})
	}
}

func TestReader(t *testing.T) {
	long := strings.Repeat("x", 5<<20) // far beyond bufio.Scanner's 64 KiB
	input := "{\"a\":1}\r\n\n   \n{\"b\":2}\n" + long + "\n{\"c\":3}"
	want := []line{{`{"a":1}`, 1}, {`{"b":2}`, 4}, {long, 5}, {`{"c":3}`, 6}}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(input))
	zw.Close()
	cases := map[string]io.Reader{
		"plain":    strings.NewReader(input),
		"onebyte":  iotest.OneByteReader(strings.NewReader(input)),
		"half":     iotest.HalfReader(strings.NewReader(input)),
		"dataerr":  iotest.DataErrReader(strings.NewReader(input)),
		"gzip":     bytes.NewReader(gz.Bytes()),
		"gzip1byt": iotest.OneByteReader(bytes.NewReader(gz.Bytes())),
	}
	for name, src := range cases {
		t.Run(name, func(t *testing.T) {
			r, err := NewReader(src, name)
			if err != nil {
				t.Fatal(err)
			}
			got := readAll(t, r)
			if len(got) != len(want) {
				t.Fatalf("%d lines, want %d", len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("line %d: got (%.20q, %d), want (%.20q, %d)", i, got[i].text, got[i].no, want[i].text, want[i].no)
				}
			}
		})
	}
}

func TestReaderErrorNamesFileAndLine(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("{\"a\":1}\n{\"b\":2}\n"))
	zw.Close()
	truncated := gz.Bytes()[:gz.Len()-6]
	r, err := NewReader(bytes.NewReader(truncated), "runs/x.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	for {
		_, _, err = r.Next()
		if err != nil {
			break
		}
	}
	if err == io.EOF || !strings.HasPrefix(err.Error(), "runs/x.jsonl.gz:") {
		t.Fatalf("err = %v, want an error naming the file", err)
	}
}

func TestWriterAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.jsonl")
	os.WriteFile(path, []byte("old\n"), 0o644)

	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte(`{"a":1}`))
	if b, _ := os.ReadFile(path); string(b) != "old\n" {
		t.Fatalf("target changed before Close: %q", b)
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old\n" {
		t.Fatalf("Abort touched the target: %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("temp file left behind: %v", ents)
	}

	w, _ = Create(path)
	w.Write([]byte(`{"a":1}`))
	w.Write([]byte(`{"b":2}`))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "{\"a\":1}\n{\"b\":2}\n" {
		t.Fatalf("got %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("temp file left behind: %v", ents)
	}
}

func TestWriterStickyError(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(filepath.Join(dir, "o.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	w.err = errors.New("disk full")
	if err := w.Write([]byte("x")); err == nil {
		t.Fatal("sticky error not returned")
	}
	if err := w.Close(); err == nil {
		t.Fatal("Close succeeded after a write error")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("failed Close left files: %v", ents)
	}
}

// TestReaderErrorAfterGoodLines: lines read before a read error are all
// returned, and the error names the line being read when it happened.
func TestReaderErrorAfterGoodLines(t *testing.T) {
	good := strings.Repeat("{\"a\":1}\n", 10)
	src := io.MultiReader(strings.NewReader(good+"{\"partial"), iotest.ErrReader(errors.New("disk gone")))
	r, err := NewReader(src, "f.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		_, _, err = r.Next()
		if err != nil {
			break
		}
		n++
	}
	if n != 10 || err == io.EOF || !strings.HasPrefix(err.Error(), "f.jsonl:11: ") {
		t.Fatalf("%d lines then %v; want 10 lines then an error at f.jsonl:11", n, err)
	}
}
