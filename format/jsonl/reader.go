package jsonl

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
)

// Reader reads the lines of a JSONL file.
type Reader struct {
	name string
	f    io.Closer
	gz   *gzip.Reader
	br   *bufio.Reader
	line int64
	buf  []byte
	cnt  *countingReader
}

type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// Open opens a JSONL file, gzip-compressed or not.
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

// NewReader reads JSONL from r; name is used in errors. gzip input is
// detected from its first two bytes.
func NewReader(r io.Reader, name string) (*Reader, error) {
	cnt := &countingReader{r: r}
	br := bufio.NewReaderSize(cnt, 1<<20)
	rd := &Reader{name: name, br: br, cnt: cnt}
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		rd.gz = gz
		rd.br = bufio.NewReaderSize(gz, 1<<20)
	}
	return rd, nil
}

// Next returns the next non-blank line (without its line ending) and its
// 1-based line number, or io.EOF after the last line. The returned slice is
// freshly allocated and owned by the caller. A read or decompression error
// names the file and line.
func (r *Reader) Next() ([]byte, int64, error) {
	for {
		// A line that fits the reader's buffer is copied once, straight
		// out of it; a longer one is gathered in r.buf first.
		line, err := r.br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			r.buf = append(r.buf[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = r.br.ReadSlice('\n')
				r.buf = append(r.buf, line...)
			}
			line = r.buf
		}
		if err != nil && err != io.EOF {
			return nil, 0, fmt.Errorf("%s:%d: %w", r.name, r.line+1, err)
		}
		if len(line) == 0 && err == io.EOF {
			return nil, 0, io.EOF
		}
		r.line++
		line = bytes.TrimRight(line, "\r\n")
		if len(bytes.TrimSpace(line)) == 0 {
			if err == io.EOF {
				return nil, 0, io.EOF
			}
			continue
		}
		return bytes.Clone(line), r.line, nil
	}
}

// BytesRead is how many bytes of the file (compressed bytes, for gzip) have
// been consumed so far; for progress reporting. Unlike the other methods
// it is safe to call from another goroutine.
func (r *Reader) BytesRead() int64 { return r.cnt.n.Load() }

// Close closes the file.
func (r *Reader) Close() error {
	if r.gz != nil {
		r.gz.Close()
	}
	if r.f != nil {
		return r.f.Close()
	}
	return nil
}
