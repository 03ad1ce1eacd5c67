package jsonl

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
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

// TestReaderLongLines: lines longer than the read buffer, gathered in
// chunks of its size, come back whole and in order: at and around a
// chunk's end, a shorter one after a longer one (the chunks reused hold
// stale bytes past it), and the last line cut by the end of the input,
// through reads of every size. Each is returned at its length, and lines
// of 5 MiB cost about their length each in allocations (appending to one
// buffer cost five times the first one's).
func TestReaderLongLines(t *testing.T) {
	mk := func(n int, seed byte) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = 'a' + byte((i*7+int(seed))%26) // no two chunks alike
		}
		return string(b)
	}
	lens := []int{bufSize - 1, bufSize, bufSize + 1, 3*bufSize + 7, 2*bufSize - 3, bufSize + 5}
	var want []line
	var in strings.Builder
	for i, n := range lens {
		l := mk(n, byte(i))
		want = append(want, line{l, int64(i + 1)})
		in.WriteString(l)
		if i < len(lens)-1 {
			in.WriteString("\n")
		}
	}
	for name, wrap := range map[string]func(io.Reader) io.Reader{
		"plain": func(r io.Reader) io.Reader { return r },
		"half":  iotest.HalfReader,
		"odd":   func(r io.Reader) io.Reader { return bufio.NewReaderSize(r, 4099) },
	} {
		r, err := NewReader(wrap(strings.NewReader(in.String())), "f.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range want {
			b, no, err := r.Next()
			if err != nil || no != w.no || string(b) != w.text || cap(b) != len(b) && len(b) >= bufSize {
				t.Fatalf("%s: line %d: %d bytes (cap %d), %d, %v; want %d", name, i+1, len(b), cap(b), no, err, len(w.text))
			}
		}
		if _, _, err := r.Next(); err != io.EOF {
			t.Fatalf("%s: after the last line: %v", name, err)
		}
	}
	long := mk(5<<20, 0)
	three := long + "\n" + long + "\n" + long + "\n"
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r, err := NewReader(strings.NewReader(three), "f.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if b, _, err := r.Next(); err != nil || len(b) != len(long) {
			t.Fatal(len(b), err)
		}
	}
	runtime.ReadMemStats(&after)
	// The three lines, the chunks once, the read buffer.
	if got, bound := after.TotalAlloc-before.TotalAlloc, uint64(4*len(long)+2*bufSize); got > bound {
		t.Errorf("reading three lines of %d bytes allocated %d, over %d", len(long), got, bound)
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

// TestReaderLineEnds: LF, CRLF and a lone CR each end a line, line
// numbers count every physical line, and a UTF-8 BOM at the start is
// skipped, plain or gzip, whatever the read sizes.
func TestReaderLineEnds(t *testing.T) {
	cases := []struct {
		name, in string
		want     []line
	}{
		{"lf", "{\"a\":1}\n{\"b\":2}\n", []line{{`{"a":1}`, 1}, {`{"b":2}`, 2}}},
		{"crlf", "{\"a\":1}\r\n\r\n{\"b\":2}\r\n", []line{{`{"a":1}`, 1}, {`{"b":2}`, 3}}},
		{"cr only", "{\"a\":1}\r\r{\"b\":2}\r{\"c\":3}", []line{{`{"a":1}`, 1}, {`{"b":2}`, 3}, {`{"c":3}`, 4}}},
		{"mixed", "{\"a\":1}\r\n{\"b\":2}\r{\"c\":3}\n\r\n{\"d\":4}", []line{{`{"a":1}`, 1}, {`{"b":2}`, 2}, {`{"c":3}`, 3}, {`{"d":4}`, 5}}},
		{"cr cr lf", "{\"a\":1}\r\r\n{\"b\":2}", []line{{`{"a":1}`, 1}, {`{"b":2}`, 3}}},
		{"bom", "\xef\xbb\xbf{\"a\":1}\n", []line{{`{"a":1}`, 1}}},
		{"bom crlf", "\xef\xbb\xbf{\"a\":1}\r\n{\"b\":2}\r\n", []line{{`{"a":1}`, 1}, {`{"b":2}`, 2}}},
		{"bom only once", "\xef\xbb\xbf\n\xef\xbb\xbf{\"a\":1}\n", []line{{"\xef\xbb\xbf{\"a\":1}", 2}}},
		{"bom alone", "\xef\xbb\xbf", nil},
		{"invalid utf-8 kept", "{\"a\":\"\xe9\"}\n", []line{{"{\"a\":\"\xe9\"}", 1}}},
	}
	for _, c := range cases {
		for kind, src := range sources(c.in) {
			t.Run(c.name+"/"+kind, func(t *testing.T) {
				r, err := NewReader(src(), "f.jsonl")
				if err != nil {
					t.Fatal(err)
				}
				same(t, readAll(t, r), c.want)
			})
		}
	}
}

// sources gives in as a plain reader, a one-byte-at-a-time reader and a
// gzip stream, each made anew by its function.
func sources(in string) map[string]func() io.Reader {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(in))
	zw.Close()
	return map[string]func() io.Reader{
		"plain":   func() io.Reader { return strings.NewReader(in) },
		"onebyte": func() io.Reader { return iotest.OneByteReader(strings.NewReader(in)) },
		"gzip":    func() io.Reader { return bytes.NewReader(gz.Bytes()) },
	}
}

// same fails the test unless got and want hold the same elements.
func same[T comparable](t testing.TB, got, want []T) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("element %d: got %v, want %v (all: %v)", i, got[i], want[i], got)
		}
	}
}

// TestReaderCRLFAcrossBuffers: a CR at the very end of the read buffer and
// its LF at the start of the next fill are one line end.
func TestReaderCRLFAcrossBuffers(t *testing.T) {
	rec := `{"a":"` + strings.Repeat("x", bufSize-10) + `"}`
	in := rec + "\r\n" + rec + "\r\n" + `{"b":2}` + "\r\n"
	for _, off := range []int{-2, -1, 0, 1} {
		pad := strings.Repeat(" ", 8+off) // moves the CRLF across the buffer's end
		r, err := NewReader(strings.NewReader(pad+in), "f.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		got := readAll(t, r)
		if len(got) != 3 || got[2] != (line{`{"b":2}`, 3}) || got[1].no != 2 {
			t.Fatalf("offset %d: %d lines, last %.20q", off, len(got), got[len(got)-1].text)
		}
	}
}

func TestReaderUTF16Refused(t *testing.T) {
	for _, head := range []string{"\xff\xfe{\x00", "\xfe\xff\x00{"} {
		_, err := NewReader(strings.NewReader(head), "u.jsonl")
		if err == nil || !strings.Contains(err.Error(), "u.jsonl: the file is UTF-16") {
			t.Errorf("%x: err = %v, want a UTF-16 error naming the file", head, err)
		}
	}
}

// splitSpec is the reader's line rule, stated simply: skip a leading BOM,
// split on CRLF, CR or LF, number the pieces from 1, drop the blank ones
// and a last empty piece.
func splitSpec(in string) []line {
	in = strings.TrimPrefix(in, "\xef\xbb\xbf")
	in = strings.ReplaceAll(in, "\r\n", "\n")
	in = strings.ReplaceAll(in, "\r", "\n")
	var out []line
	for i, l := range strings.Split(in, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, line{l, int64(i + 1)})
		}
	}
	return out
}

func FuzzReader(f *testing.F) {
	f.Add([]byte("\xef\xbb\xbf{\"a\":1}\r\n\r{\"b\":2}\n\n x \r"), uint8(0))
	f.Add([]byte("a\rb\r\nc\n"), uint8(1))
	f.Fuzz(func(t *testing.T, in []byte, chunk uint8) {
		if bytes.HasPrefix(in, []byte{0x1f, 0x8b}) || bytes.HasPrefix(in, []byte{0xff, 0xfe}) || bytes.HasPrefix(in, []byte{0xfe, 0xff}) {
			return // gzip and UTF-16 have their own tests
		}
		var src io.Reader = bytes.NewReader(in)
		if chunk%2 == 1 {
			src = iotest.OneByteReader(src)
		}
		r, err := NewReader(src, "f")
		if err != nil {
			t.Fatal(err)
		}
		var got []line
		for {
			b, n, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, line{string(b), n})
		}
		same(t, got, splitSpec(string(in)))
	})
}

// TestReaderMaxRecordBytes: a line longer than the limit is a
// *TooLargeError with its line and size, read past without being held
// (the reader's gathering buffer stays small for a 3 MiB line, across
// buffer refills and through one-byte reads), and reading goes on with the
// next line; a line at the limit is read.
func TestReaderMaxRecordBytes(t *testing.T) {
	big := `{"a":"` + strings.Repeat("x", 3<<20) + `"}`
	in := "{\"n\":1}\r\n" + big + "\r\n\n" + `{"n":2}` + "\n" + big
	for name, wrap := range map[string]func(io.Reader) io.Reader{
		"plain": func(r io.Reader) io.Reader { return r },
		"half":  iotest.HalfReader,
	} {
		t.Run(name, func(t *testing.T) {
			r, err := NewReader(wrap(strings.NewReader(in)), "f.jsonl")
			if err != nil {
				t.Fatal(err)
			}
			r.SetMaxRecordBytes(7)
			type got struct {
				rec  string
				line int64
				size int64
			}
			var all []got
			for {
				b, line, err := r.Next()
				if err == io.EOF {
					break
				}
				var tl *TooLargeError
				if errors.As(err, &tl) {
					if b != nil || tl.Line != line || tl.Limit != 7 || !strings.Contains(err.Error(), "f.jsonl:") {
						t.Fatalf("too large: %v, %q", err, b)
					}
					all = append(all, got{"", line, tl.Size})
					if c := len(r.long.chunks) * bufSize; c > 2<<20 {
						t.Fatalf("the skipped line was gathered: buffer of %d bytes", c)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				all = append(all, got{string(b), line, 0})
			}
			want := []got{{`{"n":1}`, 1, 0}, {"", 2, int64(len(big))}, {`{"n":2}`, 4, 0}, {"", 5, int64(len(big))}}
			if len(all) != len(want) {
				t.Fatalf("got %+v", all)
			}
			for i := range want {
				if all[i] != want[i] {
					t.Errorf("record %d: %+v, want %+v", i, all[i], want[i])
				}
			}
		})
	}
}
