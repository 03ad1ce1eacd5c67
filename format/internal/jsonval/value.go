package jsonval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/trajcompress/trajcompress/internal/jsonx"
)

// Object is a decoded JSON object that keeps its key order.
type Object struct {
	Keys []string
	Vals []any
}

// Get returns the value stored under key and whether the key is present.
func (o *Object) Get(key string) (any, bool) {
	for i, k := range o.Keys {
		if k == key {
			return o.Vals[i], true
		}
	}
	return nil, false
}

// Decode parses exactly one JSON value from b. Objects become *[Object],
// numbers [json.Number]. A duplicate key in an object or trailing data after
// the value is an error.
//
// Well-formed input (jsonx.Valid) is parsed in place: each string is one
// copy of its bytes (a 27 MB base64 image is held once more, not the three
// or four times encoding/json's Decoder buffers and copies it). Input
// that is not well-formed goes through encoding/json, whose errors are
// reported; both paths give the same tree (strings with escapes or
// ill-formed UTF-8 are unquoted by encoding/json either way).
func Decode(b []byte) (any, error) {
	if jsonx.Valid(b) {
		v, _, err := parseValue(b, jsonx.SkipSpace(b, 0), false)
		return v, err
	}
	return decodeStd(b)
}

// DecodeObjectBorrowed is [DecodeObject] whose strings without escapes
// share b's bytes instead of copying them: the tree must not outlive b
// nor be used after b changes. The Parquet and Arrow writers use it for
// the row being written, which they copy into their column buffers, so
// that a row's 27 MB base64 image is not copied into a string first.
func DecodeObjectBorrowed(b []byte) (*Object, error) {
	if !jsonx.Valid(b) {
		return DecodeObject(b)
	}
	v, _, err := parseValue(b, jsonx.SkipSpace(b, 0), true)
	return asObject(v, err)
}

// decodeStd is [Decode] by encoding/json's Decoder.
func decodeStd(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after JSON value")
	}
	return v, nil
}

// DecodeObject is [Decode] for a value that must be a JSON object.
func DecodeObject(b []byte) (*Object, error) {
	return asObject(Decode(b))
}

func asObject(v any, err error) (*Object, error) {
	if err != nil {
		return nil, err
	}
	o, ok := v.(*Object)
	if !ok {
		return nil, fmt.Errorf("not a JSON object but %s", KindName(v))
	}
	return o, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	t, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	switch t := t.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &Object{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, errors.New("object key is not a string")
				}
				if _, dup := o.Get(k); dup {
					return nil, fmt.Errorf("duplicate key %q", k)
				}
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				o.Keys = append(o.Keys, k)
				o.Vals = append(o.Vals, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return o, nil
		case '[':
			a := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return a, nil
		}
		return nil, fmt.Errorf("unexpected delimiter %v", t)
	default:
		return t, nil // nil, bool, json.Number, string
	}
}

// parseValue parses the value at b[i] of well-formed JSON and returns it
// and the index just past it.
func parseValue(b []byte, i int, borrow bool) (any, int, error) {
	switch b[i] {
	case '{':
		o := &Object{}
		i = jsonx.SkipSpace(b, i+1)
		for b[i] != '}' {
			k, j, err := parseString(b, i, borrow)
			if err != nil {
				return nil, 0, err
			}
			if _, dup := o.Get(k); dup {
				return nil, 0, fmt.Errorf("duplicate key %q", k)
			}
			j = jsonx.SkipSpace(b, j)   // at ':'
			j = jsonx.SkipSpace(b, j+1) // at the value
			v, j, err := parseValue(b, j, borrow)
			if err != nil {
				return nil, 0, err
			}
			o.Keys = append(o.Keys, k)
			o.Vals = append(o.Vals, v)
			i = jsonx.SkipSpace(b, j)
			if b[i] == ',' {
				i = jsonx.SkipSpace(b, i+1)
			}
		}
		return o, i + 1, nil
	case '[':
		a := []any{}
		i = jsonx.SkipSpace(b, i+1)
		for b[i] != ']' {
			v, j, err := parseValue(b, i, borrow)
			if err != nil {
				return nil, 0, err
			}
			a = append(a, v)
			i = jsonx.SkipSpace(b, j)
			if b[i] == ',' {
				i = jsonx.SkipSpace(b, i+1)
			}
		}
		return a, i + 1, nil
	case '"':
		s, j, err := parseString(b, i, borrow)
		return s, j, err
	case 't':
		return true, i + 4, nil
	case 'f':
		return false, i + 5, nil
	case 'n':
		return nil, i + 4, nil
	}
	j := jsonx.SkipValue(b, i)
	return json.Number(b[i:j]), j, nil
}

// parseString unquotes the well-formed JSON string at b[i]. Valid UTF-8
// is unquoted by jsonx.Unquote, as encoding/json unquotes it (a lone
// surrogate escape becomes U+FFFD): without escapes that is its bytes,
// shared with b when borrow, else copied once. Ill-formed UTF-8, which
// Unquote keeps, goes through encoding/json, which makes each bad byte
// U+FFFD.
func parseString(b []byte, i int, borrow bool) (string, int, error) {
	j := jsonx.SkipString(b, i)
	body := b[i+1 : j-1]
	if utf8.Valid(body) {
		if !borrow && bytes.IndexByte(body, '\\') < 0 {
			return string(body), j, nil
		}
		s, _ := jsonx.Unquote(b[i:j]) // well-formed: ok
		return s, j, nil
	}
	var s string
	if err := json.Unmarshal(b[i:j], &s); err != nil {
		return "", 0, err
	}
	return s, j, nil
}

// KindName names the JSON kind of a decoded value for error messages.
func KindName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case *Object:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// Append appends the compact JSON encoding of a decoded tree to dst.
func Append(dst []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...)
	case bool:
		return strconv.AppendBool(dst, v)
	case json.Number:
		return append(dst, v...)
	case string:
		return jsonx.AppendString(dst, v)
	case []any:
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = Append(dst, e)
		}
		return append(dst, ']')
	case *Object:
		dst = append(dst, '{')
		for i, k := range v.Keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = jsonx.AppendString(dst, k)
			dst = append(dst, ':')
			dst = Append(dst, v.Vals[i])
		}
		return append(dst, '}')
	}
	panic(fmt.Sprintf("jsonval: cannot encode %T", v))
}

// AppendFloat appends f (of the given bit size, 32 or 64) as the shortest
// JSON number that parses back to the same value. Integral values keep a
// ".0" so that they stay floats when re-read. NaN and ±Inf, which JSON
// cannot express, are written as the strings "NaN", "Infinity" and
// "-Infinity"; [ParseFloat] accepts them back.
func AppendFloat(dst []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-Infinity"`...)
	}
	abs := math.Abs(f)
	fmtc := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		fmtc = 'e'
	}
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, fmtc, -1, bits)
	if fmtc == 'f' && bytes.IndexByte(dst[start:], '.') < 0 {
		dst = append(dst, '.', '0')
	}
	return dst
}

// ParseFloat converts a decoded JSON value (a number, or one of the strings
// "NaN", "Infinity", "-Infinity") to a float of the given bit size.
func ParseFloat(v any, bits int) (float64, error) {
	switch v := v.(type) {
	case json.Number:
		return strconv.ParseFloat(string(v), bits)
	case string:
		switch v {
		case "NaN":
			return math.NaN(), nil
		case "Infinity":
			return math.Inf(1), nil
		case "-Infinity":
			return math.Inf(-1), nil
		}
	}
	return 0, fmt.Errorf("want a number, got %s", KindName(v))
}

// ParseInt converts a decoded JSON integer to an int64 of the given bit size.
func ParseInt(v any, bits int) (int64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("want an integer, got %s", KindName(v))
	}
	i, err := strconv.ParseInt(string(n), 10, bits)
	if err != nil {
		return 0, fmt.Errorf("want a %d-bit integer, got %s", bits, n)
	}
	return i, nil
}

// ParseUint converts a decoded JSON integer to a uint64 of the given bit size.
func ParseUint(v any, bits int) (uint64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("want an unsigned integer, got %s", KindName(v))
	}
	u, err := strconv.ParseUint(string(n), 10, bits)
	if err != nil {
		return 0, fmt.Errorf("want an unsigned %d-bit integer, got %s", bits, n)
	}
	return u, nil
}

// AppendEmbedded appends the JSON text of a JSON-typed column value (a
// Parquet JSON logical type, an Arrow arrow.json field) as the value it
// holds, compact; text that is not one JSON value is appended as a
// string. Like the string columns, ill-formed UTF-8 is handed on as read
// (json.Compact keeps bytes; the record path repairs and counts it).
func AppendEmbedded(dst, text []byte) []byte {
	if !utf8.Valid(text) {
		var buf bytes.Buffer
		if json.Compact(&buf, text) == nil {
			return append(dst, buf.Bytes()...)
		}
		return jsonx.AppendStringKeep(dst, string(text))
	}
	if v, err := Decode(text); err == nil {
		return Append(dst, v)
	}
	return jsonx.AppendString(dst, string(text))
}

// AsColumn returns v, the value of an extra column (see the parquet and
// arrow WriterOptions.Extra), in the form its column takes: for a string
// column (text), a value that is not a string as its JSON text; for any
// other column, a string holding a JSON object or array as that value.
// Either way one column accepts both forms, so records written by
// versions that kept compression_metrics as text still fit.
func AsColumn(v any, text bool) any {
	s, isString := v.(string)
	switch {
	case v == nil:
		return nil
	case text && !isString:
		return string(Append(nil, v))
	case !text && isString:
		if x, err := Decode([]byte(s)); err == nil {
			switch x.(type) {
			case *Object, []any:
				return x
			}
		}
	}
	return v
}

// TextPart is the one-element list of content parts a plain string s is
// written as where the schema wants a list of part structs (see the
// parquet and arrow package docs): the part's text under "text", or under
// "value" when the part has no string field "text", and "type": "text"
// when it has a string field "type"; its other fields are left out
// (null). hasString reports whether the part struct has a string field of
// that name. ok is false when it has neither "text" nor "value": then s
// is not a content string of that list, and the value is an error as
// before.
func TextPart(s string, hasString func(name string) bool) (part []any, ok bool) {
	key := "text"
	if !hasString(key) {
		key = "value"
		if !hasString(key) {
			return nil, false
		}
	}
	o := &Object{}
	if hasString("type") {
		o.Keys, o.Vals = append(o.Keys, "type"), append(o.Vals, "text")
	}
	o.Keys, o.Vals = append(o.Keys, key), append(o.Vals, s)
	return []any{o}, true
}
