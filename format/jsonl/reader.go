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
	buf   []byte
	// A byte range (OpenRange): base is the file offset of the first byte
	// read, and no line starting at end or after it is read (0: no end).
	// started is set once a line was read or the range starts past byte 0
	// (the first line of a file starts at 0, before its BOM).
	base, end int64
	started   bool
}

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
		line, end, err := r.readLine()
		r.started = true
		if err != nil && err != io.EOF {
			return nil, 0, fmt.Errorf("%s:%d: %w", r.name, r.line+1, err)
		}
		if len(line) == 0 && end == 0 && err == io.EOF {
			return nil, 0, io.EOF
		}
		r.line++
		var out []byte
		if len(bytes.TrimSpace(line)) > 0 {
			out = bytes.Clone(line) // before lineEnd: a refill may overwrite line
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
// io.EOF). The line is valid until the next read: a line that fits the
// reader's buffer is returned straight out of it, a longer one is gathered
// in r.buf.
func (r *Reader) readLine() (line []byte, end byte, err error) {
	gathered := false
	r.buf = r.buf[:0]
	for {
		if r.br.Buffered() == 0 {
			if _, err := r.br.Peek(1); err != nil {
				return r.buf, 0, err
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
		if i < 0 {
			r.buf = append(r.buf, w...)
			r.br.Discard(len(w))
			gathered = true
			continue
		}
		end = w[i]
		if gathered {
			r.buf = append(r.buf, w[:i]...)
			line = r.buf
		} else {
			line = w[:i]
		}
		r.br.Discard(i + 1)
		return line, end, nil
	}
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
