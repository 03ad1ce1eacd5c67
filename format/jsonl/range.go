package jsonl

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
)

// OpenRange opens the byte range [start, end) of an uncompressed JSON
// Lines file: the lines that START in it, as Hadoop's and Beam's text
// sources split files, so that every line of the file belongs to exactly
// one of a set of ranges that tile it, whatever their sizes. A line that
// starts before start and runs into the range belongs to the range before;
// the last line that starts before end is read to its end, past end. A
// line starts at byte 0 and after each line end (LF, CR LF, or a lone CR,
// as [Reader] reads them): at start when the byte before it is LF, or CR
// not followed by LF.
//
// Line numbers count from firstLine+1: the number of lines before start,
// when the caller knows it, or 0 for numbers relative to the range. A BOM
// is skipped only at byte 0. When hash is not nil it receives exactly the
// bytes [start, end) of the file, in order, as they are read (once Next
// has returned io.EOF, all of them). [Reader.Lines] is the number of lines
// read (blank ones included), the count the next range adds to its
// firstLine.
func OpenRange(path string, start, end, firstLine int64, hash io.Writer) (_ *Reader, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	if start < 0 || end < start {
		return nil, fmt.Errorf("%s: bad range [%d, %d)", path, start, end)
	}
	from := max(start-1, 0) // the byte before start says whether a line starts there
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return nil, err
	}
	var src io.Reader = f
	if hash != nil {
		src = &window{r: f, off: from, start: start, end: end, w: hash}
	}
	r := &Reader{f: f, line: firstLine, base: from, end: end, started: start > 0}
	if start == 0 {
		if r.text, err = newText(src, path); err != nil {
			return nil, err
		}
		if r.codec != "" {
			return nil, fmt.Errorf("%s: %s input cannot be read by byte range", path, r.codec)
		}
		return r, nil
	}
	cnt := &countingReader{r: src}
	// A short range (tests, tiny files) needs no 1 MiB buffer: lines longer
	// than the buffer are gathered anyway.
	r.text = &text{name: path, cnt: cnt, br: bufio.NewReaderSize(cnt, int(min(bufSize, max(4096, end-from+1))))}
	prev, err := r.br.ReadByte()
	if err != nil {
		return nil, fmt.Errorf("%s: range [%d, %d) starts past the end of the file", path, start, end)
	}
	if prev == '\n' {
		return r, nil
	}
	if prev == '\r' {
		if next, err := r.br.Peek(1); err != nil || next[0] != '\n' {
			return r, nil // a lone CR ended the line before start
		}
		r.br.Discard(1) // start is the LF of a CR LF: the next line starts after it
		return r, nil
	}
	// start is inside a line that belongs to the range before: skip to its end.
	r.skipLine()
	return r, nil
}

// skipLine consumes the rest of the line the range starts inside (it
// belongs to the range before) without keeping it, and stops as soon as
// it has read to the range's end: a line that runs past the end starts no
// line in the range, and reading it all (a 500 MB record cut into many
// ranges) would cost each range the rest of the record, in time and, had
// it been gathered, in memory.
func (r *Reader) skipLine() {
	for r.pos() < r.end {
		if r.br.Buffered() == 0 {
			if _, err := r.br.Peek(1); err != nil {
				return // the end of the file
			}
		}
		w, _ := r.br.Peek(r.br.Buffered())
		i := bytes.IndexAny(w, "\r\n")
		if i < 0 {
			r.br.Discard(len(w))
			continue
		}
		c := w[i]
		r.br.Discard(i + 1)
		r.lineEnd(c)
		return
	}
}

// window passes the bytes it reads to w when their offset in the file is
// in [start, end); off is the offset of the next byte read.
type window struct {
	r               io.Reader
	off, start, end int64
	w               io.Writer
}

func (t *window) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if lo, hi := max(t.off, t.start), min(t.off+int64(n), t.end); hi > lo {
		t.w.Write(p[lo-t.off : hi-t.off]) //nolint:errcheck // a hash: its Write never fails
	}
	t.off += int64(n)
	return n, err
}

// pos is the file offset of the next byte Next would read.
func (r *Reader) pos() int64 { return r.base + r.cnt.n.Load() - int64(r.br.Buffered()) }

// Lines returns the number of physical lines read so far, blank ones
// included, plus the firstLine of [OpenRange].
func (r *Reader) Lines() int64 { return r.line }
