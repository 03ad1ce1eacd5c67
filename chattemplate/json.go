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
	"sync"
	"unicode/utf8"
	"unsafe"

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
	return parseValid(data, false, nil)
}

// parseValid is fromValidJSON; with alias set, the strings of the value
// share data's memory (data must not change while the value is in use),
// and forms, when not nil, learns the literals of its long strings.
func parseValid(data []byte, alias bool, forms *rawForms) (v jinja.Value, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = jinja.Undefined(), fmt.Errorf("invalid JSON (%v)", r)
		}
	}()
	p := jsonParser{b: data, alias: alias}
	if alias && forms != nil {
		p.forms = forms
		forms.srcs = append(forms.srcs, data)
	}
	return p.value()
}

// fromValidJSONShared is fromValidJSON whose strings share data's memory:
// for a render, which drops the values before it returns. forms (may be
// nil) holds the strings with escapes and learns their literals.
func fromValidJSONShared(data []byte, forms *rawForms) (jinja.Value, error) {
	return parseValid(data, true, forms)
}

// rawForms is where the strings of a render's JSON are, so that tojson of
// one whose literal there is the one Python's json.dumps(s,
// ensure_ascii=False) writes takes that literal as it is instead of
// writing the string again (a tool result printed through tojson, as
// Llama-3.1's template prints each one, is a long string decoded from the
// JSON and encoded back unchanged).
//
// A string without escapes is its literal's bytes in the JSON (srcs); a
// string with escapes is decoded into one buffer for the render (arena,
// which spares an allocation per string), and those whose literal is
// json.dumps's (jsonx.UnquotePy) are listed in arena order (lits).
// Strings are known by where their bytes are, not by their text: nothing
// is hashed, and a string the template makes is never taken for one of
// these (a slice of one is told apart by its place and length, a
// concatenation is elsewhere). The literals and the arena live as long as
// the values (see RenderValid): a rawForms is reused by the next render
// (formsPool), so nothing of a render may keep a string of its JSON, which
// the shared JSON already requires.
type rawForms struct {
	srcs  [][]byte   // the JSON texts parsed
	need  int        // their total length: room enough for every decoded string
	arena []byte     // the decoded strings with escapes, one after the other
	lits  []arenaLit // those of arena's strings whose literal is json.dumps's, by off
}

// arenaLit is a string of the arena, at off, n bytes long, and its literal
// in the JSON.
type arenaLit struct {
	off, n int
	lit    string
}

// formsPool keeps the rawForms of finished renders: their arena and list
// are reused, not made again for each record.
var formsPool = sync.Pool{New: func() any { return new(rawForms) }}

// getForms is a rawForms from formsPool for the render of JSON texts of n
// bytes in all.
func getForms(n int) *rawForms {
	r := formsPool.Get().(*rawForms)
	r.need = n
	return r
}

// release empties r (it holds nothing of the render after) and gives it
// back to formsPool.
func (r *rawForms) release() {
	clear(r.srcs)
	r.srcs = r.srcs[:0]
	clear(r.lits)
	r.lits = r.lits[:0]
	r.arena = r.arena[:0]
	formsPool.Put(r)
}

// rawFormMin is the shortest string tojson looks up: shorter ones are
// written again about as fast.
const rawFormMin = 32

// decode decodes the literal raw, which has escapes, into the arena; ok
// is false when the arena has no room for it (then the caller decodes it
// on its own). A long string whose literal is json.dumps's is listed.
func (r *rawForms) decode(raw []byte) (s string, py, ok bool) {
	if cap(r.arena) < r.need {
		r.arena = make([]byte, 0, r.need)
	}
	start := len(r.arena)
	if cap(r.arena)-start < len(raw) {
		return "", false, false
	}
	r.arena, py, ok = jsonx.AppendUnquotePy(r.arena, raw)
	if !ok {
		r.arena = r.arena[:start]
		return "", false, false
	}
	n := len(r.arena) - start
	if n == 0 {
		return "", py, true
	}
	s = unsafe.String(&r.arena[start], n)
	if py && n >= rawFormMin {
		r.lits = append(r.lits, arenaLit{start, n, unsafe.String(unsafe.SliceData(raw), len(raw))})
	}
	return s, py, true
}

// find returns the JSON literal of s when s is a string of the render's
// JSON (not a part of one) whose literal is json.dumps's.
//
// In a JSON text, s must be a string without escapes (the parser makes no
// other string there) or a part of one; it is the whole string exactly
// when a quote is just before and just after it, since such a string
// holds no quote. Its literal, those bytes with the quotes, is
// json.dumps's: it holds no '"', no '\\', and (the JSON being valid) no
// control byte, and the parser shares only valid UTF-8.
func (r *rawForms) find(s string) (string, bool) {
	n := len(s)
	if r == nil || n < rawFormMin {
		return "", false
	}
	p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	for _, b := range r.srcs {
		base := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		if p <= base || p+uintptr(n) >= base+uintptr(len(b)) {
			continue
		}
		off := int(p - base)
		if b[off-1] != '"' || b[off+n] != '"' {
			return "", false
		}
		return unsafe.String(&b[off-1], n+2), true
	}
	if len(r.arena) == 0 {
		return "", false
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(r.arena)))
	if p < base || p+uintptr(n) > base+uintptr(len(r.arena)) {
		return "", false
	}
	off := int(p - base)
	i := sort.Search(len(r.lits), func(i int) bool { return r.lits[i].off >= off })
	if i == len(r.lits) || r.lits[i].off != off || r.lits[i].n != n {
		return "", false
	}
	return r.lits[i].lit, true
}

// jsonParser reads JSON that json.Valid accepted, so it checks nothing.
type jsonParser struct {
	b     []byte
	i     int
	alias bool      // strings share b's memory (see str)
	forms *rawForms // when not nil, holds the strings with escapes (only with alias)
}

func (p *jsonParser) space() { p.i = jsonx.SkipSpace(p.b, p.i) }

func (p *jsonParser) value() (jinja.Value, error) {
	p.space()
	switch c := p.b[p.i]; c {
	case '{':
		p.i++
		out := jinja.NewDict()
		m := out.AsDict()
		m.Keys = make([]string, 0, 4) // a message's role, content and a few more: one allocation
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
// and is copied otherwise; one with escapes is decoded into p.forms'
// arena when there is one, else into a string of its own; one that is not
// valid UTF-8 is decoded by encoding/json (each bad byte becomes U+FFFD,
// as FromJSON says).
func (p *jsonParser) str() (string, error) {
	start := p.i
	p.i = jsonx.SkipString(p.b, p.i)
	raw := p.b[start:p.i]
	if !utf8.Valid(raw) {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	if bytes.IndexByte(raw, '\\') < 0 && len(raw) >= 2 {
		body := raw[1 : len(raw)-1]
		if !p.alias {
			return string(body), nil
		}
		return unsafe.String(unsafe.SliceData(body), len(body)), nil
	}
	if p.forms != nil {
		if s, _, ok := p.forms.decode(raw); ok {
			return s, nil
		}
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
	return toJSON(nil, args, kwargs)
}

// toJSONWith is filterToJSON for a render whose JSON's string literals
// forms holds: those are taken as they are (rawForms).
func toJSONWith(forms *rawForms) func([]jinja.Value, map[string]jinja.Value) (jinja.Value, error) {
	return func(args []jinja.Value, kwargs map[string]jinja.Value) (jinja.Value, error) {
		return toJSON(forms, args, kwargs)
	}
}

func toJSON(forms *rawForms, args []jinja.Value, kwargs map[string]jinja.Value) (jinja.Value, error) {
	if len(args) == 0 {
		return jinja.Undefined(), errors.New("tojson: no value")
	}
	o := dumpOpts{itemSep: ", ", keySep: ": ", forms: forms}
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
	if v := args[0]; v.IsString() && !o.ascii {
		if lit, ok := forms.find(v.AsString()); ok {
			return jinja.NewString(lit), nil
		}
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
	forms                     *rawForms // the literals of the render's JSON strings, or nil
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
	if !o.ascii {
		if lit, ok := o.forms.find(s); ok {
			b.WriteString(lit)
			return
		}
		if utf8.ValidString(s) {
			o.strUTF8(b, s)
			return
		}
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
	for {
		i := jsonx.IndexSpecial(s)
		if i < 0 {
			break
		}
		b.WriteString(s[:i])
		jsonx.PyEscape(b, rune(s[i]))
		s = s[i+1:]
	}
	b.WriteString(s)
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
