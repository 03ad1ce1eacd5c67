package jsonl

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// Reader reads the lines of a JSONL file.
type Reader struct {
	*text
	f     io.Closer
	line  int64
	index int64 // records returned
	long  gatherer
	// A byte range (OpenRange): base is the file offset of the first byte
	// read, and no line starting at end or after it is read (0: no end).
	// started is set once a line was read or the range starts past byte 0
	// (the first line of a file starts at 0, before its BOM).
	base, end int64
	started   bool
	// max is the longest line read (SetMaxRecordBytes); 0: no limit.
	max int64
}

// SetMaxRecordBytes sets the longest line [Reader.Next] returns: a longer
// one is read past, never held whole, and returned as a *[TooLargeError]
// (the reader goes on with the next line). n <= 0 means no limit.
func (r *Reader) SetMaxRecordBytes(n int64) { r.max = n }

// TooLargeError is the error of Next for a record (a line) longer than the
// limit set with SetMaxRecordBytes: the record was skipped, not read
// whole, and the reader can go on with the next one. It is a per-record
// error, not a failed read.
type TooLargeError struct {
	Name  string
	Line  int64
	Size  int64 // the line's length in bytes, without its line end
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s:%d: the record is %d bytes, over the limit of %d (--max-record-bytes)", e.Name, e.Line, e.Size, e.Limit)
}

// RecordTooLarge returns the record's size and the limit: the method by
// which a reader of records tells this per-record error from a failed
// read without importing this package.
func (e *TooLargeError) RecordTooLarge() (size, limit int64) { return e.Size, e.Limit }

// Open opens a JSONL file, compressed (gzip, zstd, bzip2, xz) or not.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := NewReader(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.f = f
	return r, nil
}

// NewReader reads JSONL from r; name is used in errors. Compressed input
// is detected from its first bytes ([Compression]); a UTF-8 byte order mark at the start
// is skipped, and a UTF-16 one is an error.
func NewReader(r io.Reader, name string) (*Reader, error) {
	t, err := newText(r, name)
	if err != nil {
		return nil, err
	}
	return &Reader{text: t}, nil
}

// Next returns the next non-blank line (without its line ending) and its
// 1-based line number, or io.EOF after the last line. LF, CRLF and a lone
// CR each end a line. The returned slice is freshly allocated and owned by
// the caller. A read or decompression error names the file and line.
func (r *Reader) Next() ([]byte, int64, error) {
	for {
		if r.end > 0 && r.started && r.pos() >= r.end {
			return nil, 0, io.EOF
		}
		line, fresh, end, skipped, err := r.readLine()
		r.started = true
		if err != nil && err != io.EOF {
			return nil, 0, fmt.Errorf("%s:%d: %w", r.name, r.line+1, err)
		}
		if skipped > 0 {
			r.line++
			r.index++
			r.lineEnd(end)
			return nil, r.line, &TooLargeError{Name: r.name, Line: r.line, Size: skipped, Limit: r.max}
		}
		if len(line) == 0 && end == 0 && err == io.EOF {
			return nil, 0, io.EOF
		}
		r.line++
		var out []byte
		if len(bytes.TrimSpace(line)) > 0 {
			out = line
			if !fresh {
				out = bytes.Clone(line) // before lineEnd: a refill may overwrite line
			}
		}
		r.lineEnd(end)
		if out != nil {
			r.index++
			return out, r.line, nil
		}
		if err == io.EOF {
			return nil, 0, io.EOF
		}
	}
}

// readLine reads up to the next LF or CR and returns the line without it,
// and the line end byte it consumed (0 at the end of the input, with
// io.EOF). A line that fits the reader's buffer is returned straight out
// of it, valid until the next read; a longer one is gathered (r.long) and
// returned in a new slice of its length, fresh (the caller's to keep). A
// line longer than r.max is read past, not gathered: skipped is then its
// length (and line nil; err is io.EOF when it ends the input).
func (r *Reader) readLine() (line []byte, fresh bool, end byte, skipped int64, err error) {
	r.long.reset()
	var n int64 // bytes of the line consumed so far
	for {
		if r.br.Buffered() == 0 {
			if _, err := r.br.Peek(1); err != nil {
				if skipped > 0 {
					return nil, false, 0, skipped, err
				}
				if r.long.n > 0 {
					return r.long.bytes(nil), true, 0, 0, err
				}
				return nil, false, 0, 0, err
			}
		}
		w, _ := r.br.Peek(r.br.Buffered())
		// The first LF, then a CR before it (CR is rare in JSONL: JSON
		// strings cannot hold one raw), each found with a vectorised scan.
		i := bytes.IndexByte(w, '\n')
		lim := i
		if i < 0 {
			lim = len(w)
		}
		if j := bytes.IndexByte(w[:lim], '\r'); j >= 0 {
			i = j
		}
		take := i
		if i < 0 {
			take = len(w)
		}
		if n += int64(take); r.max > 0 && n > r.max {
			// Too long: the rest of the line is read past, not kept.
			skipped = n
			r.long.reset()
			if i < 0 {
				r.br.Discard(len(w))
				continue
			}
			end = w[i]
			r.br.Discard(i + 1)
			return nil, false, end, skipped, nil
		}
		if i < 0 {
			r.long.write(w)
			r.br.Discard(len(w))
			continue
		}
		end = w[i]
		if r.long.n > 0 {
			line, fresh = r.long.bytes(w[:i]), true
		} else {
			line = w[:i]
		}
		r.br.Discard(i + 1)
		return line, fresh, end, 0, nil
	}
}

// gatherer holds a line longer than the read buffer while it is read, in
// chunks of the buffer's size that later lines reuse; bytes then copies
// it out once, at its length. (Appending to one slice would copy a line
// of tens of MB again at each growth: about five times its length for the
// first such line of a file, when append grows large slices by a
// quarter.)
type gatherer struct {
	chunks [][]byte // each bufSize long
	n      int      // bytes gathered
}

func (g *gatherer) reset() { g.n = 0 }

func (g *gatherer) write(p []byte) {
	for len(p) > 0 {
		k, off := g.n/bufSize, g.n%bufSize
		if k == len(g.chunks) {
			g.chunks = append(g.chunks, make([]byte, bufSize))
		}
		c := copy(g.chunks[k][off:], p)
		p = p[c:]
		g.n += c
	}
}

// bytes returns the bytes gathered followed by tail, in a new slice of
// exactly their length.
func (g *gatherer) bytes(tail []byte) []byte {
	out := make([]byte, g.n+len(tail))
	for k, off := 0, 0; off < g.n; k, off = k+1, off+bufSize {
		copy(out[off:min(off+bufSize, g.n)], g.chunks[k])
	}
	copy(out[g.n:], tail)
	return out
}

// Close closes the file.
func (r *Reader) Close() error {
	r.text.close()
	if r.f != nil {
		return r.f.Close()
	}
	return nil
}

// BytesRead is how many bytes of the file (compressed bytes, for gzip) have
// been consumed so far; for progress reporting. Unlike the other methods
// it is safe to call from another goroutine.
func (r *Reader) BytesRead() int64 { return r.bytesRead() }
