package jsonl

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"sync/atomic"
)

// text is the byte stream of a JSON text file, shared by the line and the
// array reader: the file's bytes counted (for progress), decompressed
// when the stream starts with a compression's magic (gzip, zstd, bzip2,
// xz: see [Compression]), a UTF-8 byte order
// mark at the start skipped, and lines counted the same way by both
// readers (see [text.lineEnd]).
type text struct {
	name string
	cnt  *countingReader
	// dec decompresses a compressed file (nil: not compressed), codec
	// names its compression.
	dec   io.Closer
	codec string
	br    *bufio.Reader
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

// bufSize is the read buffer: lines that fit are copied once, straight
// out of it.
const bufSize = 1 << 20

// bom is the UTF-8 byte order mark, skipped at the start of a file.
var bom = []byte{0xEF, 0xBB, 0xBF}

func newText(r io.Reader, name string) (*text, error) {
	cnt := &countingReader{r: r}
	t := &text{name: name, cnt: cnt, br: bufio.NewReaderSize(cnt, bufSize)}
	dec, codec, err := decompress(t.br, name)
	if err != nil {
		return nil, err
	}
	if codec != "" {
		t.dec, t.codec = dec, codec
		t.br = bufio.NewReaderSize(dec, bufSize)
	}
	head, _ := t.br.Peek(3)
	switch {
	case bytes.HasPrefix(head, bom):
		t.br.Discard(len(bom))
	case bytes.HasPrefix(head, []byte{0xFF, 0xFE}), bytes.HasPrefix(head, []byte{0xFE, 0xFF}):
		return nil, fmt.Errorf("%s: the file is UTF-16 (it starts with the byte order mark %X): JSON text must be UTF-8; convert it first, e.g. iconv -f UTF-16 -t UTF-8", name, head[:2])
	}
	return t, nil
}

// firstNonSpace returns the first byte that is not JSON white space,
// without consuming anything, or 0 when the input holds only white space
// (or the first buffer of it does).
func (t *text) firstNonSpace() byte {
	for n := 64; ; n *= 2 {
		head, err := t.br.Peek(min(n, bufSize))
		for _, c := range head {
			if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
				return c
			}
		}
		if err != nil || len(head) == bufSize {
			return 0
		}
	}
}

// kind tells what the text holds, without consuming anything: see
// [KindOf]. Only the first buffer is looked at.
func (t *text) kind() string {
	switch t.firstNonSpace() {
	case '[':
		return KindArray
	case 0:
		if head, _ := t.br.Peek(bufSize); len(bytes.Trim(head, " \t\r\n")) == 0 {
			return KindEmpty
		}
		return KindLines
	case '{':
		head, _ := t.br.Peek(bufSize)
		for len(head) > 0 {
			i := bytes.IndexAny(head, "\r\n")
			line := head
			if i >= 0 {
				line, head = head[:i], head[i+1:]
			} else {
				head = nil
			}
			if l := bytes.Trim(line, " \t"); len(l) > 0 {
				if len(l) == 1 && i >= 0 { // a lone '{' that its line ends
					return KindValues
				}
				return KindLines
			}
		}
	}
	return KindLines
}

// lineEnd consumes the rest of a line end whose first byte, c, was just
// consumed: LF, CR, or CR LF are one line end each (as Python's universal
// newlines read them), so a CR-only file (classic Mac OS) and a CRLF file
// (Windows) are read line by line like an LF one.
func (t *text) lineEnd(c byte) {
	if c != '\r' {
		return
	}
	if next, err := t.br.Peek(1); err == nil && next[0] == '\n' {
		t.br.Discard(1)
	}
}

func (t *text) bytesRead() int64 { return t.cnt.n.Load() }

func (t *text) close() {
	if t.dec != nil {
		t.dec.Close()
	}
}
