package jsonl

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// ArrayReader streams the elements of a file holding one JSON array of
// records (a LLaMA-Factory dataset, datasets' to_json(lines=False)): one
// element at a time, so memory is one record, never the array.
//
// Each element is returned compacted: white space between its tokens is
// removed (strings and numbers keep their bytes), so that it is one line
// of JSON like a JSONL record, whatever indentation the file used. White
// space is kept, as one space, only where removing it would join two
// tokens (`tr ue`), so an element that is not valid JSON stays invalid and
// is rejected by the record path like a bad JSONL line. The array itself
// must be well formed: a missing comma between elements, a trailing comma,
// data after the closing bracket or a file that ends inside the array is
// an error naming the file, the line and the record.
type ArrayReader struct {
	*text
	f     io.Closer
	line  int64 // line of the next byte
	cr    bool  // the last byte was a CR: a LF right after it ends no line
	index int64 // records returned
	begun bool
	done  bool
	// values: the file is JSON values one after another, not an array
	// (a pretty-printed object; see [NewJSON]).
	values bool
	buf    []byte
	open   []byte // the brackets open in the element being read
	err    error  // sticky
}

// Records is what [NewJSON] returns: a [Reader] or an [ArrayReader].
type Records interface {
	// Next returns the next record, the 1-based line where it starts, or
	// io.EOF after the last one.
	Next() ([]byte, int64, error)
	// Record is the 1-based index in the file of the record Next returned
	// last.
	Record() int64
	// BytesRead is how far into the file reading has come (compressed
	// bytes for gzip); safe to call from another goroutine.
	BytesRead() int64
	Close() error
}

// Kinds of JSON text, as [NewJSON] tells them apart.
const (
	// KindLines is JSON Lines: one record per line.
	KindLines = "lines"
	// KindArray is one JSON array of records.
	KindArray = "array"
	// KindValues is JSON values spread over lines (the first line is a
	// lone "{"): a pretty-printed object, json.dump(obj, indent=2).
	KindValues = "values"
	// KindEmpty is nothing but white space.
	KindEmpty = "empty"
)

// NewJSON reads r as JSON text of records, choosing by content (see
// [KindOf]): a JSON array, or JSON values spread over lines, by an
// [ArrayReader]; JSON Lines by a [Reader] otherwise — a ".json" file is
// often JSON Lines under another name.
func NewJSON(r io.Reader, name string) (Records, error) {
	t, err := newText(r, name)
	if err != nil {
		return nil, err
	}
	switch t.kind() {
	case KindArray:
		return &ArrayReader{text: t, line: 1}, nil
	case KindValues:
		return &ArrayReader{text: t, line: 1, values: true, begun: true}, nil
	}
	return &Reader{text: t}, nil
}

// KindOf tells what JSON text r holds, by its first bytes (after a byte
// order mark, inside gzip): [KindArray] when the first byte that is not
// white space is '['; [KindValues] when the first line that is not blank
// is a lone '{' (the way pretty-printers open an object: a JSON Lines
// record never ends its line there); [KindEmpty] for white space only;
// [KindLines] otherwise.
func KindOf(r io.Reader) (string, error) {
	t, err := newText(r, "")
	if err != nil {
		return "", err
	}
	defer t.close()
	return t.kind(), nil
}

// IsArray reports whether r holds what [NewJSON] reads with an
// [ArrayReader]: a JSON array, or JSON values spread over lines.
func IsArray(r io.Reader) (bool, error) {
	k, err := KindOf(r)
	return k == KindArray || k == KindValues, err
}

// Next returns the next element, compacted, the 1-based line where it
// starts, and io.EOF after the last one. The bytes are the caller's.
func (r *ArrayReader) Next() ([]byte, int64, error) {
	if r.err != nil {
		return nil, 0, r.err
	}
	b, line, err := r.next()
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			if r.values {
				err = fmt.Errorf("the file ends inside record %d: truncated?", r.index+1)
			} else {
				err = fmt.Errorf("the file ends inside the array, after record %d: truncated? (a JSON array ends with ])", r.index)
			}
		}
		if err != io.EOF {
			err = fmt.Errorf("%s:%d: %w", r.name, r.line, err)
		}
		r.err = err
		return nil, 0, err
	}
	return b, line, nil
}

func (r *ArrayReader) next() ([]byte, int64, error) {
	if r.done {
		return nil, 0, io.EOF
	}
	c, err := r.nonSpace()
	if r.values && err == io.ErrUnexpectedEOF {
		r.done = true
		return nil, 0, io.EOF
	}
	if err != nil {
		return nil, 0, err
	}
	switch {
	case r.values:
		// Values one after another: white space between them.
	case !r.begun:
		if c != '[' {
			return nil, 0, fmt.Errorf("not a JSON array: it starts with %q", c)
		}
		r.begun = true
		if c, err = r.nonSpace(); err != nil {
			return nil, 0, err
		}
		if c == ']' {
			return nil, 0, r.end()
		}
	case c == ']':
		return nil, 0, r.end()
	case c != ',':
		return nil, 0, fmt.Errorf("after record %d: want , or ] between records, got %q", r.index, c)
	default:
		if c, err = r.nonSpace(); err != nil {
			return nil, 0, err
		}
		if c == ']' {
			return nil, 0, fmt.Errorf("after record %d: a comma before ] (JSON has no trailing comma)", r.index)
		}
	}
	start := r.line
	if err := r.element(c); err != nil {
		return nil, 0, err
	}
	r.index++
	return bytes.Clone(r.buf), start, nil
}

// end checks that nothing but white space follows the closing bracket.
func (r *ArrayReader) end() error {
	c, err := r.nonSpace()
	if err == io.ErrUnexpectedEOF {
		r.done = true
		return io.EOF
	}
	if err != nil {
		return err
	}
	return fmt.Errorf("data after the array's closing ] (%q): one JSON array per file", c)
}

// nonSpace consumes white space, counting lines, and returns the next
// byte, consumed; io.ErrUnexpectedEOF at the end of the input.
func (r *ArrayReader) nonSpace() (byte, error) {
	for {
		c, err := r.br.ReadByte()
		if err == io.EOF {
			return 0, io.ErrUnexpectedEOF
		}
		if err != nil {
			return 0, err
		}
		if !r.space(c) {
			r.cr = false
			return c, nil
		}
	}
}

// space reports whether c is JSON white space, counting it if it ends a
// line (LF, CR, or CR LF as one).
func (r *ArrayReader) space(c byte) bool {
	switch c {
	case '\n':
		if !r.cr {
			r.line++
		}
		r.cr = false
		return true
	case '\r':
		r.line++
		r.cr = true
		return true
	case ' ', '\t':
		r.cr = false
		return true
	}
	return false
}

// scalar reports whether c can be part of a literal or a number: two such
// bytes with white space between must stay apart.
func scalar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.'
}

// element reads the element starting with c (consumed) into r.buf,
// compacted. It ends after the closing bracket of an object or array at
// depth 0, after a string, or, for a scalar, before the white space, ','
// or ']' that follows it (left unread). A closing bracket that does not
// match the innermost open one (`[1,2}`) ends the element there: it is
// not valid JSON, so the record path rejects it, and the next element is
// read from what follows, not swallowed into this one.
func (r *ArrayReader) element(c byte) error {
	r.buf = r.buf[:0]
	r.open = r.open[:0]
	depth := 0
	gap := false // white space seen since the last byte kept
	for {
		switch {
		case c == '"':
			gap = false // a quote never joins a neighbouring token
			r.buf = append(r.buf, '"')
			if err := r.str(); err != nil {
				return err
			}
			if depth == 0 {
				return nil
			}
		case r.space(c):
			if depth == 0 {
				return nil // a scalar ended
			}
			gap = true
		case depth == 0 && (c == ',' || c == ']') && len(r.buf) > 0:
			return r.br.UnreadByte() // a scalar ended
		default:
			r.cr = false
			if gap && scalar(c) && len(r.buf) > 0 && scalar(r.buf[len(r.buf)-1]) {
				r.buf = append(r.buf, ' ')
			}
			gap = false
			r.buf = append(r.buf, c)
			switch c {
			case '{', '[':
				r.open = append(r.open, c)
				depth++
			case '}', ']':
				if depth == 0 || r.open[depth-1] != c-2 { // '{'+2 == '}', '['+2 == ']'
					return nil // a stray or mismatched closer ends the (invalid) element
				}
				r.open = r.open[:depth-1]
				depth--
				if depth == 0 {
					return nil
				}
			}
		}
		var err error
		if c, err = r.br.ReadByte(); err != nil {
			if err == io.EOF {
				return io.ErrUnexpectedEOF
			}
			return err
		}
	}
}

// str copies the rest of a string (its opening quote already in r.buf)
// up to and including the closing quote, a buffered window at a time.
// Raw line ends inside it (invalid JSON, rejected later) are counted.
func (r *ArrayReader) str() error {
	open := len(r.buf)
	for {
		if r.br.Buffered() == 0 {
			if _, err := r.br.Peek(1); err != nil {
				if err == io.EOF {
					return io.ErrUnexpectedEOF
				}
				return err
			}
		}
		w, _ := r.br.Peek(r.br.Buffered())
		i := bytes.IndexByte(w, '"')
		if i < 0 {
			r.countLines(w)
			r.buf = append(r.buf, w...)
			r.br.Discard(len(w))
			continue
		}
		r.countLines(w[:i])
		r.buf = append(r.buf, w[:i+1]...)
		r.br.Discard(i + 1)
		// The quote is escaped when an odd number of backslashes precede
		// it inside the string.
		k := len(r.buf) - 1
		for k > open && r.buf[k-1] == '\\' {
			k--
		}
		if (len(r.buf)-1-k)%2 == 0 {
			r.cr = false
			return nil
		}
	}
}

// countLines counts the line ends in raw string bytes.
func (r *ArrayReader) countLines(b []byte) {
	if bytes.IndexByte(b, '\n') < 0 && bytes.IndexByte(b, '\r') < 0 {
		if len(b) > 0 {
			r.cr = false
		}
		return
	}
	for _, c := range b {
		if !r.space(c) {
			r.cr = false
		}
	}
}

// Record is the 1-based index of the record Next returned last.
func (r *ArrayReader) Record() int64 { return r.index }

// BytesRead is how many bytes of the file (compressed bytes, for gzip) have
// been consumed so far; safe to call from another goroutine.
func (r *ArrayReader) BytesRead() int64 { return r.bytesRead() }

// Close closes the file.
func (r *ArrayReader) Close() error {
	r.text.close()
	if r.f != nil {
		return r.f.Close()
	}
	return nil
}

// Record is the 1-based index of the record Next returned last: JSON
// Lines records are counted too, though their line alone names them.
func (r *Reader) Record() int64 { return r.index }
