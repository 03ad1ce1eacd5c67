package imagetok

import (
	"encoding/base64"
	"image"
	_ "image/gif"  // register GIF for image.DecodeConfig
	_ "image/jpeg" // register JPEG
	_ "image/png"  // register PNG
	"io"
	"strings"

	_ "golang.org/x/image/webp" // register WebP

	"github.com/trajcompress/trajcompress/internal/jsonx"
)

// MaxHeader is the most bytes of an image that are decoded or read to
// learn its size. PNG, GIF and WebP keep their size in the first 30 bytes;
// JPEG keeps it in the frame header (SOF), which follows the APP segments
// (EXIF, ICC profile) and tables: 128 KiB holds one APP segment of the
// largest size (64 KiB) and the rest. The decoders read as they go, so a
// PNG costs a few KB; an image whose size is not found within MaxHeader
// bytes is of unknown size.
const MaxHeader = 128 << 10

// Config reads an image's format and size from the start of r, reading at
// most [MaxHeader] bytes: the image is never decoded. ok is false when the
// header is not one of PNG, JPEG, GIF or WebP, or is damaged.
func Config(r io.Reader) (format string, width, height int, ok bool) {
	c, format, err := image.DecodeConfig(io.LimitReader(r, MaxHeader))
	if err != nil || c.Width <= 0 || c.Height <= 0 {
		return "", 0, 0, false
	}
	return format, c.Width, c.Height, true
}

// stringReader reads the decoded bytes of a raw JSON string literal
// (opening quote included) without decoding the rest of it: it stops at
// the closing quote. Escapes of ASCII characters are decoded (\/, \n,
// \u002b …); any other escape ends the string, since what it reads is
// base64 or a data URL's header, which are ASCII. n counts the raw bytes
// consumed.
type stringReader struct {
	raw []byte
	i   int
}

func newStringReader(raw []byte) *stringReader {
	r := &stringReader{raw: raw}
	if len(raw) > 0 && raw[0] == '"' {
		r.i = 1
	} else {
		r.i = len(raw)
	}
	return r
}

func (r *stringReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && r.i < len(r.raw) {
		c := r.raw[r.i]
		switch {
		case c == '"':
			r.i = len(r.raw)
		case c != '\\':
			p[n] = c
			n++
			r.i++
		default:
			d, w := jsonx.EscapeASCII(r.raw[r.i:])
			if w == 0 {
				r.i = len(r.raw)
				break
			}
			p[n] = d
			n++
			r.i += w
		}
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

// prefix returns the first n decoded bytes of the raw JSON string s (or
// fewer, when it is shorter).
func prefix(s []byte, n int) []byte {
	buf := make([]byte, n)
	k, _ := io.ReadFull(newStringReader(s), buf)
	return buf[:k]
}

// isDataURL reports whether the raw JSON string s starts with "data:".
func isDataURL(s []byte) bool {
	return len(s) >= 6 && strings.EqualFold(string(prefix(s, 5)), "data:")
}

// base64Config reads the size of the image whose base64 text starts at
// raw offset at of the JSON string literal s (at = 1 for a whole string):
// only as much of it is decoded as the image header needs, at most
// [MaxHeader] bytes; nothing is copied. URL-safe base64 is tried when the
// standard alphabet fails. used is the most raw bytes of s either attempt
// consumed past at.
func base64Config(s []byte, at int) (format string, w, h, used int, ok bool) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		r := &stringReader{raw: s, i: at}
		format, w, h, ok = Config(base64.NewDecoder(enc, r))
		used = max(used, r.i-at)
		if ok {
			return
		}
	}
	return "", 0, 0, used, false
}
