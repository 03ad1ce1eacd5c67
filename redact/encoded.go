package redact

import (
	"bytes"
	"slices"
	"sync"
	"unsafe"

	"github.com/trajcompress/trajcompress/internal/jsonx"
)

// RedactLine redacts one input line, a JSON text such as a record: every
// string value in it (at any depth; every byte outside strings is kept)
// as [Redactor.Redact] would, and, for the value of an object member, also
// what Redact finds inside the value when it reads the member as written,
// "key": "value" (a secret known by its key, such as {"db_password": "…"}
// in a tool call's arguments given as an object); every object key as a
// text too, the keys of an object kept distinct (keys.go: a marker that
// would repeat another key of its object is numbered, "[REDACTED:kind#2]"); a
// line that is not JSON (a line a reader will reject) in its bytes as
// they are, escapes read as the characters they stand for. It returns line
// itself and nil counts when nothing is found.
//
// The strings of a JSON line that hold an image's bytes inline
// (jsonx.InlineImages: a base64 data:image/… URL, an Anthropic base64
// image source's data, a datasets Image's bytes, each only when its
// payload is strict base64 that starts with an image or audio file's
// signature; see the package doc) are never redacted: a screenshot's
// base64 that happens to match a rule is kept byte for byte, and is never
// decoded or copied. A string of that shape whose payload is anything
// else (text after a data:image/… header) is redacted as a text.
//
// The line is scanned as it is encoded ([Redactor.RedactEncoded]): in the
// common case, nothing found, nothing is decoded. When the scan finds
// something, or meets an escape it cannot read in place, a JSON line has
// its strings decoded and redacted one by one (jsonx.MapTexts: see
// [Redactor.memberFunc]), which is the exact answer the scan stands in for.
func (r *Redactor) RedactLine(line []byte) ([]byte, Counts) {
	f, sc, mixed := r.scanEncoded(line)
	if (len(f) > 0 || mixed) && jsonx.Valid(line) {
		r.release(sc)
		return r.exactLine(line)
	}
	// Nothing found, or not JSON: the findings replaced in the bytes.
	out, counts := line, Counts(nil)
	if len(f) > 0 {
		out, counts = r.apply(nil, unsafe.String(unsafe.SliceData(line), len(line)), f)
	}
	r.release(sc)
	return out, counts
}

// exactLine redacts the JSON text line string by string and key by key
// (mapJSON), leaving inline images alone: the answer [Redactor.RedactLine]
// gives.
func (r *Redactor) exactLine(line []byte) ([]byte, Counts) {
	counts := Counts{}
	out, changed := r.mapJSON(line, counts)
	if !changed {
		return line, nil
	}
	return out, counts
}

// memberFunc redacts one string of a JSON text, as jsonx.MapMembers
// passes it, adding what it redacted to counts: the string on its own,
// then, for a member's value, the findings of the member as written
// ("key" sep "value") that lie inside the value.
//
// A string that holds JSON (an object, an array or a string: holdsJSON)
// keeps its shape and its images: when what is found in it as one text
// would change its shape (a span across two of its strings, a key), or
// when it holds an inline image (jsonx.InlineImages), its own strings are
// redacted one by one instead, as the line's are (mapJSON: its keys
// too, kept distinct), at any depth.
func (r *Redactor) memberFunc(counts Counts) func(key, sep, s string) (string, bool) {
	return func(key, sep, s string) (string, bool) {
		out, c := r.redactMember(key, sep, s)
		if c == nil {
			return s, false
		}
		sb := unsafe.Slice(unsafe.StringData(s), len(s)) // read only
		if holdsJSON(s) && (!sameShape(sb, unsafe.Slice(unsafe.StringData(out), len(out))) || jsonx.InlineImages(sb) != nil) {
			c = Counts{}
			b, changed := r.mapJSON(sb, c)
			if !changed {
				return s, false
			}
			out = string(b)
		}
		counts.Add(c)
		return out, true
	}
}

// redactMember redacts s, the value of member key (key "" for an array
// element or a whole text) as memberFunc describes, without the shape
// guard; nil counts when nothing is found.
func (r *Redactor) redactMember(key, sep, s string) (string, Counts) {
	out, c := r.RedactString(s)
	if key != "" {
		ctx := `"` + key + `"` + sep + `"`
		text := ctx + out + `"`
		if f, sc := r.find(text); sc != nil {
			var in []finding
			for _, x := range f {
				if x.start >= len(ctx) && x.end <= len(text)-1 {
					in = append(in, finding{x.start - len(ctx), x.end - len(ctx), x.rule})
				}
			}
			r.scratch.Put(sc)
			if in, _ = narrow(out, in); len(in) > 0 {
				b, c2 := r.apply(nil, out, in)
				out = string(b)
				if c == nil {
					c = Counts{}
				}
				c.Add(c2)
			}
		}
	}
	return out, c
}

// RedactEncoded redacts a JSON text as it is encoded — a record's line —
// finding what [Redactor.Redact] finds in its decoded strings without
// decoding them. It scans a view of line of the same length in which each
// escape \n, \t, \r, \b and \f stands as a backslash and the control byte
// it encodes, and each \uXXXX of a non-ASCII character as six bytes that
// are, like the character to the rules, neither a word nor a space
// character; so what the rules see at a secret's edges (a line start, a
// word boundary) is what they see in the decoded text, and the offsets
// found are line's. The markers need no escaping, so the output is JSON
// again when a secret lies inside one string.
//
// Two escapes cannot be stood for: \/ and \u of an ASCII character (which
// may spell part of a keyword or a secret). mixed reports them: the caller
// must then decode the strings (as [Redactor.RedactLine] does) for the
// exact answer, as it should for a line with a finding at all when the
// line is valid JSON, since object keys and the syntax are scanned too.
//
// It reads line as bytes, not as JSON, so it does not know inline images:
// a finding inside one is replaced here like any other; RedactLine, which
// decodes a JSON line with a finding, keeps them.
//
// It returns line itself and nil counts when nothing is found (the common
// case, without allocating); otherwise line with the findings replaced,
// appended to dst[:0]. line is never modified.
func (r *Redactor) RedactEncoded(dst, line []byte) (out []byte, counts Counts, mixed bool) {
	f, sc, mixed := r.scanEncoded(line)
	out = line
	if len(f) > 0 {
		out, counts = r.apply(dst[:0], unsafe.String(unsafe.SliceData(line), len(line)), f)
	}
	r.release(sc)
	return out, counts, mixed
}

// release puts sc, a scratch of [Redactor.find] or nil, back in the pool.
func (r *Redactor) release(sc *scratch) {
	if sc != nil {
		r.scratch.Put(sc)
	}
}

// scanEncoded finds what [Redactor.RedactEncoded] replaces: the findings
// in line, narrowed (offsets into line), and the scratch holding them (nil
// when no keyword matched; the caller puts it back after using f), and
// mixed.
func (r *Redactor) scanEncoded(line []byte) (f []finding, sc *scratch, mixed bool) {
	if len(line) == 0 {
		return nil, nil, false
	}
	view := unsafe.String(unsafe.SliceData(line), len(line))
	if i := bytes.IndexByte(line, '\\'); i >= 0 {
		bp := viewPool.Get().(*[]byte)
		defer viewPool.Put(bp)
		buf := (*bp)[:0]
		if r.kw.kern.avx512 {
			buf = slices.Grow(buf, len(line))[:len(line)]
			flags := unescapeBlocks(&line[0], &buf[0], len(line))
			mixed = flags&2 != 0
			if flags&1 != 0 { // an escaped 'u': read one by one
				copy(buf, line)
				mixed = unescapeView(buf, i, r.kw.kern.avx2)
			}
		} else {
			buf = append(buf, line...)
			mixed = unescapeView(buf, i, r.kw.kern.avx2)
		}
		*bp = buf
		view = unsafe.String(unsafe.SliceData(buf), len(buf))
	}
	f, sc = r.find(view)
	if sc == nil {
		return nil, nil, mixed
	}
	ls := unsafe.String(unsafe.SliceData(line), len(line))
	f, dropped := narrow(ls, f)
	// A finding narrowed away (all escapes) is still a finding: the
	// caller must look at the decoded strings (mixed).
	return f, sc, mixed || dropped
}

var viewPool = sync.Pool{New: func() any { return new([]byte) }}

// viewByte is what a \uXXXX escape of a non-ASCII character becomes in the
// view, six times: a byte that starts no UTF-8 sequence, so the rules read
// it as U+FFFD, which is neither a word nor a space character.
const viewByte = 0x80

// unescapeView rewrites, in place, the escapes of buf from its first
// backslash at i on, as [Redactor.RedactEncoded] describes, and reports
// whether it met one it cannot stand for; avx2 as for eachPosition.
func unescapeView(buf []byte, i int, avx2 bool) (mixed bool) {
	view := unsafe.String(unsafe.SliceData(buf), len(buf))
	next := i // the first byte not part of an escape already read
	eachPosition(avx2, view, i, 0, '\\', false, func(i int) bool {
		if i < next || i+1 >= len(buf) {
			return true // the second backslash of an escaped one, or the last byte
		}
		next = i + 2
		switch buf[i+1] {
		case 'n':
			buf[i+1] = '\n'
		case 't':
			buf[i+1] = '\t'
		case 'r':
			buf[i+1] = '\r'
		case 'b':
			buf[i+1] = '\b'
		case 'f':
			buf[i+1] = '\f'
		case '/':
			mixed = true
		case 'u':
			cp, ok := hex4(buf[i+2:])
			switch {
			case !ok:
			case cp < 0x80:
				mixed = true
				next = i + 6
			default:
				for k := i; k < i+6; k++ {
					buf[k] = viewByte
				}
				next = i + 6
			}
		}
		return true
	})
	return mixed
}

// hex4 reads four hex digits at the start of b.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var v rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			v = v<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			v = v<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			v = v<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}
