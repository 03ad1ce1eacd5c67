// Package jinja implements a Jinja template engine purpose-built for LLM
// chat templates.
package jinja

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// =============================================================================

// Kind represents the type of a template value.
type Kind int

// The kinds of a Value (trajcompress patch: documented for the linter).
const (
	KindUndefined Kind = iota
	KindNone
	KindBool
	KindInt
	KindFloat
	KindString
	KindList
	KindDict
	KindCallable
)

// =============================================================================

// Value is a tagged union over JSON-like types used throughout the template
// engine. The v field holds one of: bool, int64, float64, string, *List,
// *Dict, or Callable.
type Value struct {
	kind Kind
	v    any
}

// Undefined returns an undefined value.
func Undefined() Value {
	return Value{kind: KindUndefined}
}

// None returns a none value.
func None() Value {
	return Value{kind: KindNone}
}

// NewBool returns a boolean value.
func NewBool(b bool) Value {
	return Value{kind: KindBool, v: b}
}

// NewInt returns an integer value.
func NewInt(n int64) Value {
	return Value{kind: KindInt, v: n}
}

// NewFloat returns a floating-point value.
func NewFloat(f float64) Value {
	return Value{kind: KindFloat, v: f}
}

// NewString returns a string value.
func NewString(s string) Value {
	return Value{kind: KindString, v: s}
}

// NewList returns a list value containing the provided items.
func NewList(items []Value) Value {
	return Value{kind: KindList, v: &List{Items: items}}
}

// NewDict returns an empty dict value.
func NewDict() Value {
	return Value{kind: KindDict, v: &Dict{Data: make(map[string]Value)}}
}

// NewCallable returns a callable value.
func NewCallable(name string, fn func(args []Value, kwargs map[string]Value) (Value, error)) Value {
	return Value{kind: KindCallable, v: Callable{Name: name, Fn: fn}}
}

// =============================================================================

// IsUndefined reports whether v is undefined.
func (v Value) IsUndefined() bool { return v.kind == KindUndefined }

// IsNone reports whether v is none.
func (v Value) IsNone() bool { return v.kind == KindNone }

// IsBool reports whether v is a boolean.
func (v Value) IsBool() bool { return v.kind == KindBool }

// IsInt reports whether v is an integer.
func (v Value) IsInt() bool { return v.kind == KindInt }

// IsFloat reports whether v is a float.
func (v Value) IsFloat() bool { return v.kind == KindFloat }

// IsNumber reports whether v is an integer or float.
func (v Value) IsNumber() bool { return v.kind == KindInt || v.kind == KindFloat }

// IsString reports whether v is a string.
func (v Value) IsString() bool { return v.kind == KindString }

// IsList reports whether v is a list.
func (v Value) IsList() bool { return v.kind == KindList }

// IsDict reports whether v is a dict.
func (v Value) IsDict() bool { return v.kind == KindDict }

// IsCallable reports whether v is callable.
func (v Value) IsCallable() bool { return v.kind == KindCallable }

// IsTruthy returns the Python-style truthiness of the value.
func (v Value) IsTruthy() bool {
	switch v.kind {
	case KindUndefined:
		return false
	case KindNone:
		return false
	case KindBool:
		return v.v.(bool)
	case KindInt:
		return v.v.(int64) != 0
	case KindFloat:
		return v.v.(float64) != 0.0
	case KindString:
		return len(v.AsString()) > 0
	case KindList:
		if l := v.v.(*List); lazyIter(l.iter) { // trajcompress patch: an iterator is true
			return true
		}
		return v.v.(*List).Len() > 0
	case KindDict:
		return v.v.(*Dict).Len() > 0
	case KindCallable:
		return true
	}

	return false
}

// =============================================================================

// AsBool returns the bool held by v. It panics if v is not a bool.
func (v Value) AsBool() bool { return v.v.(bool) }

// AsInt returns the int64 held by v. It panics if v is not an int.
func (v Value) AsInt() int64 { return v.v.(int64) }

// AsFloat returns the float64 held by v. It panics if v is not a float.
func (v Value) AsFloat() float64 { return v.v.(float64) }

// AsString returns the string held by v. It panics if v is not a string.
func (v Value) AsString() string {
	if s, ok := v.v.(string); ok {
		return s
	}
	return string(v.v.(markupStr)) // trajcompress patch: a Markup (markup.go)
}

// AsList returns the *List held by v. It panics if v is not a list.
func (v Value) AsList() *List { return v.v.(*List) }

// AsDict returns the *Dict held by v. It panics if v is not a dict.
func (v Value) AsDict() *Dict { return v.v.(*Dict) }

// AsCallable returns the *Callable held by v. It panics if v is not callable.
func (v Value) AsCallable() *Callable {
	c := v.v.(Callable)
	return &c
}

// =============================================================================

// String returns a Python-style string representation of the value.
func (v Value) String() string {
	switch v.kind {
	case KindUndefined:
		return "Undefined"

	case KindNone:
		return "None"

	case KindBool:
		if v.v.(bool) {
			return "True"
		}
		return "False"

	case KindInt:
		return fmt.Sprintf("%d", v.v.(int64))

	case KindFloat:
		return pyFloatRepr(v.v.(float64)) // trajcompress patch: Python's repr

	case KindString:
		if m, ok := v.v.(markupStr); ok { // trajcompress patch: markupsafe's repr
			return "Markup(" + pyStrRepr(string(m)) + ")"
		}
		return pyStrRepr(v.v.(string)) // trajcompress patch: Python's repr

	case KindList:
		list := v.v.(*List)
		if list.iter == rangeIter { // trajcompress patch: Python's repr of a range
			return rangeRepr(list)
		}
		var b strings.Builder
		open, end := byte('['), "]"
		if list.tuple {
			open, end = '(', ")"
			if len(list.Items) == 1 {
				end = ",)"
			}
		}
		if isDictView(list.iter) { // trajcompress patch: dict_items([...])
			b.WriteString(list.iter + "(")
			end += ")"
		}
		b.WriteByte(open)
		for i, item := range list.Items {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(item.String())
		}
		b.WriteString(end)
		return b.String()

	case KindDict:
		d := v.v.(*Dict)
		var b strings.Builder
		b.WriteByte('{')
		for i, key := range d.Keys {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s: %s", d.KeyValue(key).String(), d.Data[key].String()) // trajcompress patch: Python's repr
		}
		b.WriteByte('}')
		return b.String()

	case KindCallable:
		c := v.v.(Callable)
		return fmt.Sprintf("<callable %s>", c.Name)
	}

	return "Undefined"
}

// Equals reports whether v and other hold the same value.
func (v Value) Equals(other Value) bool {
	if v.kind != other.kind {
		return false
	}

	switch v.kind {
	case KindUndefined, KindNone:
		return true

	case KindBool:
		return v.v.(bool) == other.v.(bool)

	case KindInt:
		return v.v.(int64) == other.v.(int64)

	case KindFloat:
		return v.v.(float64) == other.v.(float64)

	case KindString:
		return v.AsString() == other.AsString()

	case KindList:
		a := v.v.(*List)
		b := other.v.(*List)
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Items {
			if !a.Items[i].Equals(b.Items[i]) {
				return false
			}
		}
		return true

	case KindDict:
		a := v.v.(*Dict)
		b := other.v.(*Dict)
		if a.Len() != b.Len() {
			return false
		}
		for _, key := range a.Keys {
			bv, ok := b.Get(key)
			if !ok {
				return false
			}
			if !a.Data[key].Equals(bv) {
				return false
			}
		}
		return true

	case KindCallable:
		return false
	}

	return false
}

// =============================================================================

// List holds an ordered sequence of values.
type List struct {
	Items []Value
	// tuple: a Python tuple (a (a, b) literal, an items() pair), printed
	// (a, b) (trajcompress patch); otherwise it behaves as a list.
	tuple bool
	// iter: the Python type of a lazy iterable jinja2 returns where the
	// engine makes a list (trajcompress patch): "generator" (map, select,
	// reject, selectattr, rejectattr, unique, batch, items),
	// "list_reverseiterator" (reverse of a list), "dict_items",
	// "dict_keys", "dict_values" (a dict's views). As Python's: json.dumps
	// refuses it, a generator or iterator has no len() and is true even
	// when empty, none is a sequence or can be indexed. "" for a list.
	iter string
	// rng: a range's start, stop and step (iter "range", pyrange.go;
	// trajcompress patch).
	rng [3]int64
}

// IterType is the Python type name of a lazy iterable (see List.iter),
// "" for a list, a tuple or anything else.
func (v Value) IterType() string {
	if v.kind != KindList {
		return ""
	}
	return v.v.(*List).iter
}

// isDictView reports whether a lazy iterable's type is a dict's view,
// which has a len() and a repr of its items.
func isDictView(iter string) bool {
	return iter == "dict_items" || iter == "dict_keys" || iter == "dict_values"
}

// newIter is the items of list v as a lazy iterable of Python type typ.
func newIter(v Value, typ string) Value {
	return Value{kind: KindList, v: &List{Items: v.AsList().Items, iter: typ}}
}

// Len returns the number of items in the list.
func (l *List) Len() int { return len(l.Items) }

// Get returns the item at position i. It panics if i is out of range.
func (l *List) Get(i int) Value { return l.Items[i] }

// Append adds a value to the end of the list.
func (l *List) Append(v Value) { l.Items = append(l.Items, v) }

// =============================================================================

// Dict is an ordered map of string keys to values. Insertion order is
// preserved via the Keys slice.
type Dict struct {
	Keys []string
	Data map[string]Value
	// keyVals: the key of each entry whose key is not a string (a dict
	// literal's {0: 'a'}), under its DictKey encoding (trajcompress patch).
	keyVals map[string]Value
	// onGet: told each key Get looks up (a for loop's loop object, which
	// pulls its generator further when loop.last is read; genloop.go;
	// trajcompress patch). Nil for any other dict.
	onGet func(key string)
}

// nonStrKey starts the DictKey encoding of a key that is not a string; no
// JSON or template string key starts so in practice (trajcompress patch).
const nonStrKey = "\x00\x01"

// DictKey is the Keys/Data string under which a Python dict holds key: a
// string is itself; a bool, an int and an integral float are one key (as
// Python hashes 1, 1.0 and True alike), another float and None have their
// own, a tuple is its items'; ok is false for a key Python cannot hash
// (a list, a dict, a tuple holding one) or the engine does not hold
// (undefined, a callable). (trajcompress patch)
func DictKey(key Value) (string, bool) {
	switch key.kind {
	case KindString:
		return key.AsString(), true
	case KindBool, KindInt:
		return nonStrKey + "n" + strconv.FormatInt(toInt64(key), 10), true
	case KindFloat:
		f := key.AsFloat()
		if f == math.Trunc(f) && f >= -1<<63 && f < 1<<63 { // trajcompress patch: 2.0**62 is 2**62 too
			return nonStrKey + "n" + strconv.FormatInt(int64(f), 10), true
		}
		return nonStrKey + "f" + strconv.FormatFloat(f, 'g', -1, 64), true
	case KindNone:
		return nonStrKey + "None", true
	case KindList:
		if !key.AsList().tuple {
			return "", false
		}
		parts := make([]string, len(key.AsList().Items))
		for i, it := range key.AsList().Items {
			k, ok := DictKey(it)
			if !ok {
				return "", false
			}
			parts[i] = strconv.Quote(k)
		}
		return nonStrKey + "t(" + strings.Join(parts, ",") + ")", true
	}
	return "", false
}

// KeyValue is the key of the entry held under k: the string k, or the
// non-string key it encodes.
func (d *Dict) KeyValue(k string) Value {
	if v, ok := d.keyVals[k]; ok {
		return v
	}
	return NewString(k)
}

// setKey sets the entry of a key of any hashable kind (the first key of
// those Python takes for equal stays, as in Python).
func (d *Dict) setKey(key, val Value) error {
	k, ok := DictKey(key)
	if !ok {
		if key.IsList() && !key.AsList().tuple || key.IsDict() {
			return fmt.Errorf("unhashable type: '%s'", pyTypeName(key))
		}
		return fmt.Errorf("unsupported construct: a dict key of type %s", pyTypeName(key))
	}
	if !key.IsString() && !d.Has(k) {
		if d.keyVals == nil {
			d.keyVals = map[string]Value{}
		}
		d.keyVals[k] = key
	}
	d.Set(k, val)
	return nil
}

// dictGet is d[key] for a key of any kind (not found for an unhashable one).
func dictGet(d *Dict, key Value) (Value, bool) {
	k, ok := DictKey(key)
	if !ok {
		return Undefined(), false
	}
	return d.Get(k)
}

// Get returns the value for key and reports whether it was found.
func (d *Dict) Get(key string) (Value, bool) {
	if d.onGet != nil { // trajcompress patch
		d.onGet(key)
	}
	v, ok := d.Data[key]
	return v, ok
}

// Set inserts or updates a key-value pair. New keys are appended to the
// insertion-order list.
func (d *Dict) Set(key string, val Value) {
	// trajcompress patch: one map operation, not a look-up then a store
	// (the map grows exactly when the key is new).
	n := len(d.Data)
	d.Data[key] = val
	if len(d.Data) != n {
		d.Keys = append(d.Keys, key)
	}
}

// Has reports whether key exists in the dict.
func (d *Dict) Has(key string) bool {
	_, ok := d.Data[key]
	return ok
}

// Len returns the number of entries in the dict.
func (d *Dict) Len() int { return len(d.Keys) }

// OrderedKeys returns the keys in insertion order.
func (d *Dict) OrderedKeys() []string {
	out := make([]string, len(d.Keys))
	copy(out, d.Keys)
	return out
}

// =============================================================================

// Callable represents a named callable function within the template engine.
type Callable struct {
	Name string
	Fn   func(args []Value, kwargs map[string]Value) (Value, error)
}

// =============================================================================

// FromGoValue converts a plain Go value to a Value. Supported source types
// are nil, bool, int, int64, float64, string, []any, map[string]any, and
// []Value. For map[string]any the keys are sorted for deterministic order.
// Unrecognized types produce Undefined.
func FromGoValue(v any) Value {
	switch val := v.(type) {
	case nil:
		return None()

	case bool:
		return NewBool(val)

	case int:
		return NewInt(int64(val))

	case int64:
		return NewInt(val)

	case float64:
		return NewFloat(val)

	case json.Number:
		// json.Number preserves whether the source JSON used a decimal
		// point or exponent. Integers (no '.', 'e', 'E') become Int so
		// that downstream tojson emits them as integers — matching
		// Python json.dumps, which keeps int and float distinct. Without
		// this, a value like 9007199254740991 round-trips as
		// 9.007199254740991e+15 and breaks chat-template tokenization.
		s := string(val)
		if !strings.ContainsAny(s, ".eE") {
			if i, err := val.Int64(); err == nil {
				return NewInt(i)
			}
		}
		if f, err := val.Float64(); err == nil {
			return NewFloat(f)
		}
		return NewString(s)

	case string:
		return NewString(val)

	case []Value:
		items := make([]Value, len(val))
		copy(items, val)
		return NewList(items)

	case []any:
		items := make([]Value, len(val))
		for i, item := range val {
			items[i] = FromGoValue(item)
		}
		return NewList(items)

	case map[string]any:
		d := NewDict()
		dict := d.AsDict()

		keys := make([]string, 0, len(val))
		for k := range val {
			keys = append(keys, k)
		}
		sort.Strings(keys)

		for _, k := range keys {
			dict.Set(k, FromGoValue(val[k]))
		}
		return d
	}

	// Reflection fallback for named types (e.g., []model.D where D is
	// map[string]any). Go's type switch won't match named types against
	// their underlying type, so we use reflect to handle slices and maps
	// whose elements are convertible to any or map[string]any.
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice:
		items := make([]Value, rv.Len())
		for i := range rv.Len() {
			items[i] = FromGoValue(rv.Index(i).Interface())
		}
		return NewList(items)

	case reflect.Map:
		if rv.Type().Key().Kind() == reflect.String {
			d := NewDict()
			dict := d.AsDict()
			iter := rv.MapRange()
			keys := make([]string, 0, rv.Len())
			vals := make(map[string]any, rv.Len())
			for iter.Next() {
				k := iter.Key().String()
				keys = append(keys, k)
				vals[k] = iter.Value().Interface()
			}
			sort.Strings(keys)
			for _, k := range keys {
				dict.Set(k, FromGoValue(vals[k]))
			}
			return d
		}
	}

	return Undefined()
}

// JSONKey is the object key json.dumps writes for a dict key: the string,
// or an int's digits, a float's repr, true/false, null (trajcompress patch).
func JSONKey(key Value) string {
	switch key.kind {
	case KindString:
		return key.AsString()
	case KindBool:
		if key.AsBool() {
			return "true"
		}
		return "false"
	case KindNone:
		return "null"
	case KindFloat:
		return pyFloatRepr(key.AsFloat())
	}
	return printValue(key)
}
