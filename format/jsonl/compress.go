package jsonl

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// The compressions a JSON text file may be read through, each told by its
// magic bytes whatever the file's name (see [Compression]).
const (
	Gzip  = "gzip"
	Zstd  = "zstd"
	Bzip2 = "bzip2"
	XZ    = "xz"
)

// magic is each compression's first bytes. None can start JSON text (nor
// a byte order mark): 0x1f and 0xfd are not text, '(' and 'B' start no
// JSON value.
var magic = []struct {
	name  string
	bytes []byte
}{
	{Gzip, []byte{0x1f, 0x8b}},
	{Zstd, []byte{0x28, 0xb5, 0x2f, 0xfd}},
	{Bzip2, []byte("BZh")}, // and a digit: see Compression
	{XZ, []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}},
}

// MagicLen is how many first bytes of a file [Compression] needs.
const MagicLen = 6

// Compression names the compression whose magic bytes head starts with
// (Gzip, Zstd, Bzip2 or XZ), or "" for none.
func Compression(head []byte) string {
	for _, m := range magic {
		if bytes.HasPrefix(head, m.bytes) {
			if m.name == Bzip2 && (len(head) < 4 || head[3] < '1' || head[3] > '9') {
				continue // "BZh" is followed by the block size, '1' to '9'
			}
			return m.name
		}
	}
	return ""
}

// decompress returns the decompressed stream of br when it starts with a
// compression's magic bytes, and that compression's name; br itself and
// "" otherwise. Every decompressor reads concatenated members (gzip),
// frames (zstd) or streams (bzip2, xz) as one stream, and none starts a
// goroutine. Closing the returned reader releases the decompressor, not
// the file.
func decompress(br *bufio.Reader, name string) (io.ReadCloser, string, error) {
	head, _ := br.Peek(MagicLen)
	c := Compression(head)
	var r io.ReadCloser
	var err error
	switch c {
	case "":
		return io.NopCloser(br), "", nil
	case Gzip:
		r, err = gzip.NewReader(br)
	case Zstd:
		var d *zstd.Decoder
		// Concurrency 1 decodes in the caller's goroutine.
		if d, err = zstd.NewReader(br, zstd.WithDecoderConcurrency(1)); err == nil {
			r = zstdCloser{d}
		}
	case Bzip2:
		r = io.NopCloser(bzip2.NewReader(br))
	case XZ:
		var x *xz.Reader
		if x, err = xz.NewReader(br); err == nil {
			r = io.NopCloser(x)
		}
	}
	if err != nil {
		return nil, c, fmt.Errorf("%s: %s: %w", name, c, err)
	}
	return r, c, nil
}

type zstdCloser struct{ *zstd.Decoder }

func (z zstdCloser) Close() error {
	z.Decoder.Close()
	return nil
}
