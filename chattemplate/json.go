package chattemplate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/trajcompress/trajcompress/internal/jsonx"

	"github.com/ardanlabs/jinja"
)

// FromJSON decodes JSON into a template value the way Python's json.loads
// does: objects keep their key order (a repeated key keeps its first place
// and its last value), integers stay integers and numbers with a fraction
// or exponent become floats. Integers beyond int64 become floats (Python
// keeps them exact; no chat record of ours holds one). Strings are decoded
// as encoding/json decodes them (ill-formed UTF-8 as U+FFFD).
func FromJSON(data []byte) (jinja.Value, error) {
	if !jsonx.Valid(data) {
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			return jinja.Undefined(), err
		}
		return jinja.Undefined(), errors.New("invalid JSON")
	}
	return fromValidJSON(data)
}

// fromValidJSON is FromJSON for data json.Valid accepts. Given invalid
// JSON it returns an error or a value, never panics.
func fromValidJSON(data []byte) (v jinja.Value, err error) {
	return parseValid(data, false)
}

// parseValid is fromValidJSON; with alias set, the strings of the value
// share data's memory (data must not change while the value is in use).
func parseValid(data []byte, alias bool) (v jinja.Value, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = jinja.Undefined(), fmt.Errorf("invalid JSON (%v)", r)
		}
	}()
	p := jsonParser{b: data, alias: alias}
	return p.value()
}

// fromValidJSONShared is fromValidJSON whose strings share data's memory:
// for a render, which drops the values before it returns.
func fromValidJSONShared(data []byte) (jinja.Value, error) { return parseValid(data, true) }

// jsonParser reads JSON that json.Valid accepted, so it checks nothing.
type jsonParser struct {
	b     []byte
	i     int
	alias bool // strings share b's memory (see str)
}

func (p *jsonParser) space() { p.i = jsonx.SkipSpace(p.b, p.i) }

func (p *jsonParser) value() (jinja.Value, error) {
	p.space()
	switch c := p.b[p.i]; c {
	case '{':
		p.i++
		out := jinja.NewDict()
		m := out.AsDict()
		for {
			p.space()
			if p.b[p.i] == '}' {
				p.i++
				return out, nil
			}
			if p.b[p.i] == ',' {
				p.i++
				p.space()
			}
			k, err := p.str()
			if err != nil {
				return jinja.Undefined(), err
			}
			p.space()
			p.i++ // ':'
			v, err := p.value()
			if err != nil {
				return jinja.Undefined(), err
			}
			m.Set(k, v)
		}
	case '[':
		p.i++
		var items []jinja.Value
		for {
			p.space()
			if p.b[p.i] == ']' {
				p.i++
				return jinja.NewList(items), nil
			}
			if p.b[p.i] == ',' {
				p.i++
			}
			v, err := p.value()
			if err != nil {
				return jinja.Undefined(), err
			}
			items = append(items, v)
		}
	case '"':
		s, err := p.str()
		if err != nil {
			return jinja.Undefined(), err
		}
		return jinja.NewString(s), nil
	case 't':
		p.i += 4
		return jinja.NewBool(true), nil
	case 'f':
		p.i += 5
		return jinja.NewBool(false), nil
	case 'n':
		p.i += 4
		return jinja.None(), nil
	}
	start := p.i
	for p.i < len(p.b) && strings.IndexByte("+-0123456789.eE", p.b[p.i]) >= 0 {
		p.i++
	}
	s := string(p.b[start:p.i])
	if !strings.ContainsAny(s, ".eE") {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return jinja.NewInt(i), nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return jinja.Undefined(), err
	}
	return jinja.NewFloat(f), nil
}

// str reads the string at p.i. A string without escapes shares p.b's
// memory when p.alias is set (p.b does not change while the values live),
// and is copied otherwise; one with escapes is decoded into a string of
// its own; one that is not valid UTF-8 is decoded by encoding/json (each
// bad byte becomes U+FFFD, as FromJSON says).
func (p *jsonParser) str() (string, error) {
	start := p.i
	p.i = jsonx.SkipString(p.b, p.i)
	raw := p.b[start:p.i]
	if !utf8.Valid(raw) {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	if !p.alias && bytes.IndexByte(raw, '\\') < 0 && len(raw) >= 2 {
		return string(raw[1 : len(raw)-1]), nil
	}
	s, ok := jsonx.Unquote(raw)
	if !ok {
		return "", errors.New("invalid JSON string")
	}
	return s, nil
}

// filterToJSON is transformers' tojson filter: json.dumps(x,
// ensure_ascii=False, indent=None, separators=None, sort_keys=False), each
// keyword settable from the template.
func filterToJSON(args []jinja.Value, kwargs map[string]jinja.Value) (jinja.Value, error) {
	if len(args) == 0 {
		return jinja.Undefined(), errors.New("tojson: no value")
	}
	o := dumpOpts{itemSep: ", ", keySep: ": "}
	pos := args[1:] // positional: ensure_ascii, indent, separators, sort_keys
	get := func(i int, name string) (jinja.Value, bool) {
		if v, ok := kwargs[name]; ok {
			return v, true
		}
		if i < len(pos) {
			return pos[i], true
		}
		return jinja.Undefined(), false
	}
	if v, ok := get(0, "ensure_ascii"); ok {
		o.ascii = v.IsTruthy()
	}
	if v, ok := get(1, "indent"); ok && !v.IsNone() && !v.IsUndefined() {
		switch {
		case v.IsInt():
			o.indent = strings.Repeat(" ", max(0, int(v.AsInt())))
		case v.IsString():
			o.indent = v.AsString()
		default:
			return jinja.Undefined(), fmt.Errorf("tojson: indent must be an int or a string, not %s", v.String())
		}
		o.indented = true
		o.itemSep = ","
	}
	if v, ok := get(2, "separators"); ok && !v.IsNone() && !v.IsUndefined() {
		if !v.IsList() || v.AsList().Len() != 2 || !v.AsList().Items[0].IsString() || !v.AsList().Items[1].IsString() {
			return jinja.Undefined(), errors.New("tojson: separators must be two strings")
		}
		o.itemSep = v.AsList().Items[0].AsString()
		o.keySep = v.AsList().Items[1].AsString()
	}
	if v, ok := get(3, "sort_keys"); ok {
		o.sortKeys = v.IsTruthy()
	}
	var b strings.Builder
	if err := o.dump(&b, args[0], 0); err != nil {
		return jinja.Undefined(), err
	}
	return jinja.NewString(b.String()), nil
}

type dumpOpts struct {
	ascii, indented, sortKeys bool
	indent, itemSep, keySep   string
}

func (o *dumpOpts) newline(b *strings.Builder, level int) {
	if !o.indented {
		return
	}
	b.WriteByte('\n')
	for range level {
		b.WriteString(o.indent)
	}
}

func (o *dumpOpts) dump(b *strings.Builder, v jinja.Value, level int) error {
	switch {
	case v.IsNone():
		b.WriteString("null")
	case v.IsBool():
		if v.AsBool() {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case v.IsInt():
		b.WriteString(strconv.FormatInt(v.AsInt(), 10))
	case v.IsFloat():
		b.WriteString(pyFloat(v.AsFloat()))
	case v.IsString():
		o.str(b, v.AsString())
	case v.IsList():
		if t := v.IterType(); t != "" { // jinja2's generators and dict views
			return fmt.Errorf("Object of type %s is not JSON serializable", t) //nolint:staticcheck // json.dumps's message
		}
		items := v.AsList().Items
		if len(items) == 0 {
			b.WriteString("[]")
			return nil
		}
		b.WriteByte('[')
		for i, it := range items {
			if i > 0 {
				b.WriteString(o.itemSep)
			}
			o.newline(b, level+1)
			if err := o.dump(b, it, level+1); err != nil {
				return err
			}
		}
		o.newline(b, level)
		b.WriteByte(']')
	case v.IsDict():
		d := v.AsDict()
		keys := d.OrderedKeys()
		if len(keys) == 0 {
			b.WriteString("{}")
			return nil
		}
		for _, k := range keys { // a dict literal's key may be an int, a float, a bool, None or a tuple
			if kv := d.KeyValue(k); kv.IsList() {
				return fmt.Errorf("keys must be str, int, float, bool or None, not tuple")
			} else if !kv.IsString() && o.sortKeys {
				return fmt.Errorf("unsupported construct: tojson(sort_keys=true) of a dict with a key of type %s", kv.String())
			}
		}
		if o.sortKeys {
			keys = append([]string(nil), keys...)
			sort.Strings(keys)
		}
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteString(o.itemSep)
			}
			o.newline(b, level+1)
			o.str(b, jinja.JSONKey(d.KeyValue(k)))
			b.WriteString(o.keySep)
			val, _ := d.Get(k)
			if err := o.dump(b, val, level+1); err != nil {
				return err
			}
		}
		o.newline(b, level)
		b.WriteByte('}')
	default:
		return fmt.Errorf("tojson: object of type %s is not JSON serializable", v.String())
	}
	return nil
}

// str writes s as Python's json.dumps does.
func (o *dumpOpts) str(b *strings.Builder, s string) {
	if !o.ascii && utf8.ValidString(s) {
		o.strUTF8(b, s)
		return
	}
	o.strRunes(b, s)
}

// strRunes is str, rune by rune.
func (o *dumpOpts) strRunes(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r < 0x20 || r == '"' || r == '\\':
			jsonx.PyEscape(b, r)
		case o.ascii && r > 0x7e: // Python escapes all but " " to "~"
			if r > 0xffff {
				r -= 0x10000
				fmt.Fprintf(b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			} else {
				fmt.Fprintf(b, `\u%04x`, r)
			}
		default: // U+FFFD too, for an ill-formed byte
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

// strUTF8 is str for valid UTF-8 with ensure_ascii=False: everything but
// '"', '\\' and the control characters below U+0020 is written as it is,
// so runs of such bytes are copied whole.
func (o *dumpOpts) strUTF8(b *strings.Builder, s string) {
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	start := 0
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' {
			b.WriteString(s[start:i])
			jsonx.PyEscape(b, rune(c))
			start = i + 1
		}
	}
	b.WriteString(s[start:])
	b.WriteByte('"')
}

// pyFloat is Python's repr of a float, which json.dumps writes: the shortest
// digits that read back, in fixed notation when the exponent is in [-4, 16),
// else in exponent notation; integral values keep a ".0".
func pyFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return jsonx.PyFloat(f)
}
