package jsonval

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Kind is the column kind of an inferred [Type].
type Kind uint8

// Kinds produced by [Infer].
const (
	KindNull   Kind = iota // only nulls seen so far; finalized to KindString
	KindBool               // true/false
	KindInt                // integers that fit int64
	KindFloat              // any number with a fraction or exponent
	KindString             // strings
	KindList               // arrays; Elem holds the element type
	KindStruct             // objects; Fields in first-seen order
	KindJSON               // mixed kinds: the value is stored as JSON text
	KindBytes              // binary, base64 in JSON: never inferred, see [WithHFImages]
)

// Type is an inferred column type.
type Type struct {
	Kind   Kind
	Elem   *Type    // KindList
	Fields []*Field // KindStruct

	// unseen: a KindString that [Infer] gave a position it saw only as
	// null or as the element of lists that were always empty, so that
	// [WithHFImages] may type it from the features alone.
	unseen bool
}

// Field is a named member of a struct Type.
type Field struct {
	Name string
	Type *Type
}

// Infer derives a struct Type from sample JSON objects:
//
//   - Columns are the union of the top-level keys, in first-seen order;
//     nested objects likewise become structs with the union of their keys.
//   - Booleans → bool, strings → string, integers that fit int64 → int,
//     other numbers → float; int and float mixed → float.
//   - Arrays → list of the merged element type.
//   - Any other mix of kinds for the same key (for example an OpenAI
//     "content" that is a string in one message and a list of parts in
//     another), and integers beyond int64, → JSON: the value is stored as
//     JSON text and read back verbatim.
//   - A key seen only with null values, or a list only ever empty, gets
//     string (element) type ([WithHFImages] may type it from datasets
//     features); an object only ever empty ({}) → JSON.
//     Every column is nullable.
//
// An empty sample or a sample line that is not a JSON object is an error
// naming the 0-based sample index. Top-level keys named in except are left
// out (a column whose type the caller sets, see [TypeOf]).
func Infer(samples [][]byte, except ...string) (*Type, error) {
	if len(samples) == 0 {
		return nil, errors.New("cannot infer a schema from an empty sample")
	}
	root := &Type{Kind: KindNull}
	for i, s := range samples {
		o, err := DecodeObject(s)
		if err != nil {
			return nil, fmt.Errorf("sample %d: %w", i, err)
		}
		for _, k := range except {
			if j := slices.Index(o.Keys, k); j >= 0 {
				o.Keys, o.Vals = slices.Delete(o.Keys, j, j+1), slices.Delete(o.Vals, j, j+1)
			}
		}
		root = merge(root, o)
	}
	finalize(root)
	return root, nil
}

// TypeOf is the type [Infer] gives a column whose only value is the JSON
// value v.
func TypeOf(v []byte) (*Type, error) {
	x, err := Decode(v)
	if err != nil {
		return nil, err
	}
	t := merge(&Type{Kind: KindNull}, x)
	finalize(t)
	return t, nil
}

func kindOf(v any) Kind {
	switch v := v.(type) {
	case nil:
		return KindNull
	case bool:
		return KindBool
	case json.Number:
		if strings.ContainsAny(string(v), ".eE") {
			return KindFloat
		}
		if _, err := strconv.ParseInt(string(v), 10, 64); err != nil {
			return KindJSON
		}
		return KindInt
	case string:
		return KindString
	case []any:
		return KindList
	case *Object:
		return KindStruct
	}
	return KindJSON
}

func merge(t *Type, v any) *Type {
	k := kindOf(v)
	switch {
	case k == KindNull || t.Kind == KindJSON:
		return t
	case t.Kind == KindNull:
		t = &Type{Kind: k}
	case t.Kind == k:
	case (t.Kind == KindInt && k == KindFloat) || (t.Kind == KindFloat && k == KindInt):
		return &Type{Kind: KindFloat}
	default:
		return &Type{Kind: KindJSON}
	}
	switch k {
	case KindList:
		if t.Elem == nil {
			t.Elem = &Type{Kind: KindNull}
		}
		for _, e := range v.([]any) {
			t.Elem = merge(t.Elem, e)
		}
	case KindStruct:
		o := v.(*Object)
		for i, key := range o.Keys {
			f := t.field(key)
			if f == nil {
				f = &Field{Name: key, Type: &Type{Kind: KindNull}}
				t.Fields = append(t.Fields, f)
			}
			f.Type = merge(f.Type, o.Vals[i])
		}
	}
	return t
}

func (t *Type) field(name string) *Field {
	for _, f := range t.Fields {
		if f.Name == name {
			return f
		}
	}
	return nil
}

func finalize(t *Type) {
	switch t.Kind {
	case KindNull:
		t.Kind, t.unseen = KindString, true
	case KindList:
		if t.Elem == nil {
			t.Elem = &Type{Kind: KindNull}
		}
		finalize(t.Elem)
	case KindStruct:
		if len(t.Fields) == 0 {
			t.Kind = KindJSON // an always-empty object has no columns to carry
		}
		for _, f := range t.Fields {
			finalize(f.Type)
		}
	}
}
