package jsonx

import (
	"bytes"
	"strings"
)

// The shapes a record keeps an image's bytes in, inline: what packages
// that must leave those bytes alone (redact) and those that read them
// (imagetok) agree on. [DataURL], [IsImageDataURL] and [ImageMember] read
// the shape only (the header, the members); [InlineImages] and
// [MapTexts] also check the payload (see [InlineImages]).

// maxDataURLHeader is the most characters of a data: URL's header (the
// text before its comma) [DataURL] reads.
const maxDataURLHeader = 256

// DataURL reads the header of a data: URL held in the raw JSON string s
// (its opening quote included): the media type (lower case, white space
// trimmed), whether one of its parameters is base64, and the offset in s
// where the data begins (just past the comma). Escapes of ASCII characters
// in the header are read as the characters they stand for ("image\/png");
// ok is false when s does not start with "data:" (in any case), has no
// comma within its first 256 characters, or holds another escape or the
// closing quote before it.
func DataURL(s []byte) (media string, base64 bool, dataAt int, ok bool) {
	var buf [maxDataURLHeader]byte
	head, at, ok := dataURLHeader(s, &buf)
	if !ok {
		return "", false, 0, false
	}
	m, b64 := splitDataURL(head)
	return strings.ToLower(string(m)), b64, at, true
}

// IsImageDataURL reports whether the raw JSON string s holds an image
// inline as a data: URL: [DataURL] reads it, its media type starts with
// "image/" and it is base64 ("data:image/png;base64,iVBOR…"). It allocates
// nothing and reads at most the header.
func IsImageDataURL(s []byte) bool {
	_, ok := imageDataAt(s)
	return ok
}

// imageDataAt is [IsImageDataURL], with the offset in s where the data
// begins.
func imageDataAt(s []byte) (at int, ok bool) {
	if len(s) < 2 || s[0] != '"' || s[1]|0x20 != 'd' && s[1] != '\\' {
		return 0, false // the common case: not "d…"
	}
	var buf [maxDataURLHeader]byte
	head, at, ok := dataURLHeader(s, &buf)
	if !ok {
		return 0, false
	}
	m, b64 := splitDataURL(head)
	return at, b64 && hasPrefixFold(m, "image/")
}

// dataURLHeader decodes into buf the header of the data: URL in the raw
// JSON string s, the text before its first comma, "data:" checked and cut
// off, and returns the raw offset just past the comma.
func dataURLHeader(s []byte, buf *[maxDataURLHeader]byte) (head []byte, at int, ok bool) {
	if len(s) == 0 || s[0] != '"' {
		return nil, 0, false
	}
	n := 0
	for i := 1; i < len(s); {
		c := s[i]
		w := 1
		switch c {
		case '"':
			return nil, 0, false
		case '\\':
			c, w = EscapeASCII(s[i:])
			if w == 0 {
				return nil, 0, false
			}
		}
		i += w
		if n == 5 && !hasPrefixFold(buf[:5], "data:") || n == len(buf) {
			return nil, 0, false
		}
		if c == ',' {
			if n < 5 {
				return nil, 0, false
			}
			return buf[5:n], i, true
		}
		buf[n] = c
		n++
	}
	return nil, 0, false
}

// EscapeASCII decodes the escape at the start of s (s[0] == '\\') when it
// stands for an ASCII byte, returning the byte and the escape's width;
// width 0 otherwise.
func EscapeASCII(s []byte) (byte, int) {
	if len(s) < 2 {
		return 0, 0
	}
	switch s[1] {
	case '"', '\\', '/':
		return s[1], 2
	case 'b':
		return '\b', 2
	case 'f':
		return '\f', 2
	case 'n':
		return '\n', 2
	case 'r':
		return '\r', 2
	case 't':
		return '\t', 2
	case 'u':
		if r, ok := hex4(s, 2); ok && r < 0x80 {
			return byte(r), 6
		}
	}
	return 0, 0
}

// splitDataURL splits a data: URL's header (after "data:") into its media
// type, white space trimmed, and whether a parameter is base64.
func splitDataURL(head []byte) (media []byte, b64 bool) {
	media, params, _ := bytes.Cut(head, []byte(";"))
	for len(params) > 0 {
		var p []byte
		p, params, _ = bytes.Cut(params, []byte(";"))
		if bytes.EqualFold(bytes.TrimSpace(p), []byte("base64")) {
			b64 = true
		}
	}
	return bytes.TrimSpace(media), b64
}

func hasPrefixFold[T string | []byte](s T, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := range len(prefix) {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != prefix[i] {
			return false
		}
	}
	return true
}

// ImageMember returns the index in ms, the members of an object of b, of
// the member whose string value holds an image's bytes inline, by the
// object's shape; -1 when it has none:
//
//   - "data" of an Anthropic base64 source, {"type": "base64",
//     "media_type": "image/…", "data": "…"} (the media type starting with
//     "image/", in any case; a document's source, "application/pdf", is
//     not an image);
//   - "bytes" of a Hugging Face datasets Image value, an object of exactly
//     the two members "bytes" (a string: base64, as format/parquet and
//     format/arrow write binary in JSON) and "path" (a string or null).
//     datasets' Audio values have the same shape.
//
// When a key repeats, the last one counts, as in [Find]. It looks at the
// shape only: the value may be any string.
func ImageMember(b []byte, ms []Member) int {
	if len(ms) == 2 {
		k, p := 0, 1
		if !KeyIs(ms[k].Key, "bytes") {
			k, p = 1, 0
		}
		if KeyIs(ms[k].Key, "bytes") && KeyIs(ms[p].Key, "path") && b[ms[k].Start] == '"' &&
			(b[ms[p].Start] == '"' || b[ms[p].Start] == 'n') {
			return k
		}
	}
	if len(ms) < 3 {
		return -1
	}
	d := -1
	for i := len(ms) - 1; i >= 0; i-- {
		if KeyIs(ms[i].Key, "data") {
			d = i
			break
		}
	}
	if d < 0 || b[ms[d].Start] != '"' {
		return -1
	}
	t, ok := Find(ms, "type")
	if !ok || b[t.Start] != '"' {
		return -1
	}
	if s, _ := Unquote(b[t.Start:t.End]); s != "base64" {
		return -1
	}
	m, ok := Find(ms, "media_type")
	if !ok || b[m.Start] != '"' {
		return -1
	}
	if s, _ := Unquote(b[m.Start:m.End]); !hasPrefixFold(strings.TrimSpace(s), "image/") {
		return -1
	}
	return d
}

// InlineImages returns the spans (quotes included) of the strings of the
// valid JSON value v, at any depth, that hold an image's bytes inline: a
// string that [IsImageDataURL], and the member of an object that
// [ImageMember] names, each only when its payload (the data URL's data,
// the member's whole value) is the base64 of an image or audio file:
// strict base64 (the standard alphabet, "\/" the only escape, no white
// space, at most two '=' and only at the end) whose first decoded bytes
// are the signature of a PNG, JPEG, GIF, WebP, BMP, TIFF, ISO BMFF (an
// ftyp box: AVIF, HEIC, MP4/M4A), WAV, FLAC, MP3 with an ID3 tag or Ogg
// file. A string of the shape but not of that payload (text after a
// data:image/… header, a token as a datasets value's bytes, an SVG's
// base64, base64 broken into lines) is not one: it is a text. The payload
// is read once, without copying. Strings inside strings (JSON held in a
// string) are not looked into. nil when there is none.
func InlineImages(v []byte) [][2]int {
	var spans [][2]int
	walkStrings(v, nil, func(start, end int) {
		spans = append(spans, [2]int{start, end})
	})
	return spans
}

// MapTexts is [MapMembers] except that the strings that hold an image's
// bytes inline (those [InlineImages] returns) are never decoded nor passed
// to f: they are kept byte for byte. Redaction goes through it, so that a
// screenshot's base64 that happens to match a secret's pattern is never
// changed, while a text shaped like an image (whose payload is not an
// image file's base64) is passed to f like any other.
func MapTexts(v []byte, f func(key, sep, s string) (string, bool)) (out []byte, changed bool) {
	return mapMembers(v, f, true)
}

// b64Val maps a byte to its value in the standard base64 alphabet (0-63),
// '\\' to b64Esc and every other byte (padding included) to b64Bad; so
// that bytes OR-ed together are all in the alphabet or backslashes when
// the result has its top bit clear.
var b64Val = func() (t [256]byte) {
	for i := range t {
		t[i] = b64Bad
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for i := range len(alphabet) {
		t[alphabet[i]] = byte(i)
	}
	t['\\'] = b64Esc
	return t
}()

const (
	b64Esc = 0x40
	b64Bad = 0x80
)

// headLen is how many decoded bytes [isMediaBase64] checks a signature in.
const headLen = 12

// isMediaBase64 reports whether the raw JSON string s (its quotes
// included), from raw offset at to its closing quote, is the base64 of an
// image or audio file: strict base64 (the standard alphabet, "\/" read as
// '/', no other escape, no white space, at most two '=' and only at the
// end, at least one character) whose first decoded bytes are such a file's
// signature ([mediaSignature]). That is what a screenshot's base64 is and
// what a text (a secret, "token=…", a command line) is not: '_', '-', '.',
// ':', white space and '=' before the end are not base64. It reads the
// payload once (eight bytes a step) and its backslashes once more
// (bytes.IndexByte), and allocates nothing.
func isMediaBase64(s []byte, at int) bool {
	if at <= 0 || at >= len(s)-1 {
		return false
	}
	body := s[at : len(s)-1]
	pad := 0
	for pad < 2 && len(body) > 0 && body[len(body)-1] == '=' {
		body = body[:len(body)-1]
		pad++
	}
	i := 0
	for ; i+8 <= len(body); i += 8 {
		b := body[i : i+8 : i+8]
		if (b64Val[b[0]]|b64Val[b[1]]|b64Val[b[2]]|b64Val[b[3]]|
			b64Val[b[4]]|b64Val[b[5]]|b64Val[b[6]]|b64Val[b[7]])&b64Bad != 0 {
			return false
		}
	}
	for ; i < len(body); i++ {
		if b64Val[body[i]]&b64Bad != 0 {
			return false
		}
	}
	// Every backslash starts "\/".
	esc := 0
	for j := 0; ; {
		k := bytes.IndexByte(body[j:], '\\')
		if k < 0 {
			break
		}
		j += k + 1
		if j == len(body) || body[j] != '/' {
			return false
		}
		j++
		esc++
	}
	chars := len(body) - esc
	if chars == 0 || pad > 0 && (chars+pad)%4 != 0 {
		return false
	}
	var head [headLen]byte
	var acc uint32
	n, bits := 0, 0
	for i := 0; i < len(body) && n < headLen; i++ {
		v := b64Val[body[i]]
		if v == b64Esc {
			v = 63 // "\/"
			i++
		}
		acc = acc<<6 | uint32(v)
		if bits += 6; bits >= 8 {
			bits -= 8
			head[n] = byte(acc >> bits)
			n++
		}
	}
	return mediaSignature(head[:n])
}

// mediaSignature reports whether h, the first bytes of a file (up to
// headLen), starts with the signature of an image or audio format a record
// holds inline: PNG, JPEG, GIF, WebP, BMP, TIFF, ISO BMFF (an ftyp box:
// AVIF, HEIC, MP4/M4A audio), and, for datasets' Audio values, WAV, FLAC,
// MP3 with an ID3 tag and Ogg.
func mediaSignature(h []byte) bool {
	has := func(off int, sig string) bool {
		return len(h) >= off+len(sig) && string(h[off:off+len(sig)]) == sig
	}
	switch {
	case has(0, "\x89PNG\r\n\x1a\n"), has(0, "\xff\xd8\xff"), has(0, "GIF87a"), has(0, "GIF89a"),
		has(0, "II*\x00"), has(0, "MM\x00*"):
		return true
	case has(0, "RIFF"):
		return has(8, "WEBP") || has(8, "WAVE")
	case has(0, "BM"): // then the file's size and 4 reserved bytes, zero
		return has(6, "\x00\x00\x00\x00")
	case has(4, "ftyp"): // a box of under 64 KiB
		return h[0] == 0 && h[1] == 0
	}
	return has(0, "fLaC") || has(0, "ID3") || has(0, "OggS")
}

// isImageDataURLBase64 reports whether the raw JSON string s is an
// [IsImageDataURL] whose data is an image's base64 ([isMediaBase64]).
func isImageDataURLBase64(s []byte) bool {
	at, ok := imageDataAt(s)
	return ok && isMediaBase64(s, at)
}
