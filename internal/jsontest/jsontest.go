// Package jsontest checks, for tests and fuzz targets, that a step that
// rewrites a JSON text kept it valid JSON of the same structure:
// the same types, object keys in the same order, array lengths,
// numbers and literals as written, recursively into every string that
// holds a JSON text itself (tool-call arguments, a tool result, a JSON
// string inside one of those: nested escapes at any depth).
//
// What a step may change is said by [Options]: values it replaces by
// design, and string leaves (strings that do not hold JSON) whose text it
// may rewrite. Everything else must come out as it went in.
//
// It only reads its inputs; it is imported by tests only.
package jsontest

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/trajcompress/trajcompress/internal/jsonx"
)

// Nested is the path element for a step into the JSON text a string
// holds.
const Nested = "#"

// Path names a value: object keys and array indices (in decimal) from the
// top, and [Nested] where the path enters the JSON text held by a string.
type Path []string

func (p Path) String() string {
	if len(p) == 0 {
		return "(top)"
	}
	return strings.Join(p, ".")
}

// Is reports whether p is exactly elems; "*" in elems matches any one
// element.
func (p Path) Is(elems ...string) bool {
	return len(p) == len(elems) && p.HasPrefix(elems...)
}

// HasPrefix reports whether p starts with elems; "*" in elems matches any
// one element.
func (p Path) HasPrefix(elems ...string) bool {
	if len(p) < len(elems) {
		return false
	}
	for i, e := range elems {
		if e != "*" && p[i] != e {
			return false
		}
	}
	return true
}

// Options says which differences a step may make.
type Options struct {
	// Replaced, when set, reports whether the step may replace the value
	// at p by design: its new value is not compared (it is valid, being
	// part of the valid output). Replaced is asked only where before and
	// after differ.
	Replaced func(p Path, before, after []byte) error
	// Leaf, when set, is asked about each string that does not hold JSON
	// before and whose text differs after: nil accepts the change. With
	// Leaf nil, a changed string is an error.
	Leaf func(p Path, before, after string) error
	// Key, when set, is asked about each object key whose text differs
	// (p: the object's path): nil accepts the change. With Key nil, a
	// changed key is an error.
	Key func(p Path, before, after string) error
}

// SameStructure reports, as an error naming the first difference's path,
// whether after is valid JSON of before's structure: string leaves may
// hold other text, a string that held JSON must hold JSON of the same
// structure.
func SameStructure(before, after []byte) error {
	return Compare(before, after, Options{Leaf: func(Path, string, string) error { return nil }})
}

// Unchanged is [Compare] with no difference allowed but white space
// outside strings and the escaping of strings (\u0041 for A).
func Unchanged(before, after []byte) error { return Compare(before, after, Options{}) }

// Compare reports whether after is valid JSON (valid UTF-8 too, when
// before is) of before's structure, with the differences o allows. before
// must be valid JSON (invalid UTF-8 inside its strings is allowed).
func Compare(before, after []byte, o Options) error {
	if !jsonx.Valid(before) {
		return fmt.Errorf("jsontest: the input is not valid JSON: %.200q", before)
	}
	if !jsonx.Valid(after) {
		return fmt.Errorf("the output is not valid JSON: %.300q", after)
	}
	if utf8.Valid(before) && !utf8.Valid(after) {
		return fmt.Errorf("the output is not valid UTF-8: %.300q", after)
	}
	return compare(nil, trim(before), trim(after), o)
}

// HoldsJSON reports whether the string s is a JSON text.
func HoldsJSON(s string) bool { return jsonx.Valid([]byte(s)) }

func trim(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && jsonx.IsSpace(b[i]) {
		i++
	}
	for j > i && jsonx.IsSpace(b[j-1]) {
		j--
	}
	return b[i:j]
}

// kind is a value's JSON type by its first byte.
func kind(v []byte) string {
	switch v[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// compare compares two valid JSON values, trimmed.
func compare(p Path, a, b []byte, o Options) error {
	if string(a) == string(b) {
		return nil
	}
	replaced := func(err error) error {
		if o.Replaced != nil {
			if rerr := o.Replaced(p, a, b); rerr == nil {
				return nil
			}
		}
		return err
	}
	ka, kb := kind(a), kind(b)
	if ka != kb {
		return replaced(fmt.Errorf("at %s: a %s became a %s: %.120q → %.120q", p, ka, kb, a, b))
	}
	switch ka {
	case "object":
		ma, _, _ := jsonx.Members(a, 0)
		mb, _, _ := jsonx.Members(b, 0)
		if len(ma) != len(mb) {
			return replaced(fmt.Errorf("at %s: an object of %d members became one of %d", p, len(ma), len(mb)))
		}
		for i := range ma {
			kA, _ := jsonx.Unquote(ma[i].Key)
			kB, _ := jsonx.Unquote(mb[i].Key)
			if kA == kB {
				continue
			}
			if o.Key == nil || o.Key(p, kA, kB) != nil {
				return replaced(fmt.Errorf("at %s: member %d's key %q became %q", p, i, kA, kB))
			}
		}
		for i := range ma {
			kA, _ := jsonx.Unquote(ma[i].Key)
			if err := compare(append(p[:len(p):len(p)], kA), a[ma[i].Start:ma[i].End], b[mb[i].Start:mb[i].End], o); err != nil {
				return err
			}
		}
		return nil
	case "array":
		ea, eb := jsonx.Elements(a, 0), jsonx.Elements(b, 0)
		if len(ea) != len(eb) {
			return replaced(fmt.Errorf("at %s: an array of %d elements became one of %d", p, len(ea), len(eb)))
		}
		for i := range ea {
			if err := compare(append(p[:len(p):len(p)], strconv.Itoa(i)), a[ea[i][0]:ea[i][1]], b[eb[i][0]:eb[i][1]], o); err != nil {
				return err
			}
		}
		return nil
	case "string":
		sa, _ := jsonx.Unquote(a)
		sb, _ := jsonx.Unquote(b)
		if sa == sb {
			return nil
		}
		if HoldsJSON(sa) {
			if !HoldsJSON(sb) {
				return replaced(fmt.Errorf("at %s: a string that held JSON no longer does: %.200q → %.200q", p, sa, sb))
			}
			np := append(p[:len(p):len(p)], Nested)
			if err := compare(np, trim([]byte(sa)), trim([]byte(sb)), o); err != nil {
				return replaced(err)
			}
			return nil
		}
		if o.Leaf == nil {
			return replaced(fmt.Errorf("at %s: a string changed: %.200q → %.200q", p, sa, sb))
		}
		if err := o.Leaf(p, sa, sb); err != nil {
			return replaced(fmt.Errorf("at %s: %w", p, err))
		}
		return nil
	}
	// Numbers, booleans and null: as written.
	return replaced(fmt.Errorf("at %s: %s became %s", p, a, b))
}

// Tricky returns JSON objects that are hard to keep valid, for seeds:
// JSON held in strings at depth 2 and 3, quotes escaped as \u0022 and as
// \\\" (a backslash, then a quote), a surrogate pair and a lone surrogate
// escape, invalid UTF-8 inside a nested string (the last ones: not valid
// UTF-8), and tool-call-like tags.
func Tricky() []string {
	d1 := `{"cmd":"echo \u0022hi\u0022 \\\"x\\\"","emoji":"\ud83d\ude00 😀","lone":"\ud800","n":[1,-0,2.5e3,true,null],"tag":"</tool_call>"}`
	d2, d3 := nest(d1)
	return []string{
		d1, d2, d3,
		`{"s":"\"{\\\"a\\\":\\\"\\\\\\\"\\\"}\""}`, // a string holding a string holding JSON
		`[` + quote(`{"a":"x`+"\xff"+`y","b":"`+"\xe2\x82"+`"}`) + `]`,
		`{"a":` + quote(`{"b":`+quote("\xf0\x9f\x98 nested")+`}`) + `}`,
	}
}

// nest holds d1 in a string of d2, and d2 in a string of d3.
func nest(d1 string) (d2, d3 string) {
	d2 = `{"arguments":` + quote(d1) + `,"k":"v"}`
	d3 = `{"result":` + quote(d2) + `,"list":[` + quote(`[`+quote(d1)+`]`) + `]}`
	return d2, d3
}

// quote is s as a JSON string, every byte kept (invalid UTF-8 too).
func quote(s string) string { return string(Quote(s)) }

// Quote is s as a JSON string, every byte kept (invalid UTF-8 too).
func Quote(s string) []byte { return jsonx.AppendStringKeep(nil, s) }
