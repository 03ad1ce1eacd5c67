package redact

import (
	"strconv"
	"strings"

	"github.com/trajcompress/trajcompress/internal/jsonx"
)

// Object keys. A secret can be a key ({"ghp_…": "x"}: a map from tokens
// to their owners, a tool's result keyed by credential). [Redactor.RedactLine]
// redacts every key as a text, like a value, and keeps the keys of each
// object distinct: the marker that stands in a key whose new name another
// key of the same object already has (two tokens of one kind in one map,
// or a key that was a marker already) is numbered, "[REDACTED:kind#2]",
// then "#3" and so on, the first free one, the object's members taken in
// order; its other bytes are kept. So the line stays JSON whose every
// object has as many distinct keys as before, and a reader that keeps the
// last of duplicate keys loses no member.

// mapJSON redacts the valid JSON text b string by string (memberFunc),
// leaving inline images alone, then its object keys (redactKeys), adding
// what it replaced to counts; changed reports whether anything was.
func (r *Redactor) mapJSON(b []byte, counts Counts) ([]byte, bool) {
	out, changed := jsonx.MapTexts(b, r.memberFunc(counts))
	out, keys := r.redactKeys(out, counts)
	return out, changed || keys
}

// keySplice is one key replaced: the raw key's span (quotes included)
// and its new name.
type keySplice struct {
	start, end int
	name       string
}

// redactKeys returns the valid JSON text v with every object key in which
// a rule finds a secret replaced by the key redacted, numbered as the
// comment at the top of this file says; v itself and false when no key
// holds one.
func (r *Redactor) redactKeys(v []byte, counts Counts) ([]byte, bool) {
	var splices []keySplice
	var walk func(i int)
	walk = func(i int) {
		i = jsonx.SkipSpace(v, i)
		if i >= len(v) {
			return
		}
		switch v[i] {
		case '{':
			ms, _, err := jsonx.Members(v, i)
			if err != nil {
				return
			}
			names := r.keyNames(ms, counts)
			for k, m := range ms {
				if names != nil && names[k] != "" {
					splices = append(splices, keySplice{m.KeyStart, m.KeyStart + len(m.Key), names[k]})
				}
				walk(m.Start)
			}
		case '[':
			for _, el := range jsonx.Elements(v, i) {
				walk(el[0])
			}
		}
	}
	walk(0)
	if len(splices) == 0 {
		return v, false
	}
	out := make([]byte, 0, len(v)+32*len(splices))
	pos := 0
	for _, s := range splices {
		out = append(out, v[pos:s.start]...)
		out = jsonx.AppendString(out, s.name)
		pos = s.end
	}
	return append(out, v[pos:]...), true
}

// keyNames returns, for the members ms of one object, the new name of
// each key a rule finds a secret in ("" for a key kept), unique in the
// object; nil when no key changes.
func (r *Redactor) keyNames(ms []jsonx.Member, counts Counts) []string {
	var names []string
	for k, m := range ms {
		key, ok := jsonx.Unquote(m.Key)
		if !ok {
			continue
		}
		out, c := r.RedactString(key)
		if c == nil {
			continue
		}
		if names == nil {
			names = make([]string, len(ms))
		}
		names[k] = out
		counts.Add(c)
	}
	if names == nil {
		return nil
	}
	taken := make(map[string]bool, len(ms))
	for k, m := range ms {
		if names[k] == "" {
			key, _ := jsonx.Unquote(m.Key)
			taken[key] = true
		}
	}
	for k := range ms {
		if names[k] == "" {
			continue
		}
		name := names[k]
		for n := 2; taken[name]; n++ {
			name = numbered(names[k], n)
		}
		taken[name] = true
		names[k] = name
	}
	return names
}

// numbered is the redacted key s with its last marker "[REDACTED:kind]"
// numbered n: "[REDACTED:kind#n]".
func numbered(s string, n int) string {
	suffix := "#" + strconv.Itoa(n)
	if i := strings.LastIndex(s, "[REDACTED:"); i >= 0 {
		if j := strings.IndexByte(s[i:], ']'); j >= 0 {
			return s[:i+j] + suffix + s[i+j:]
		}
	}
	return s + suffix
}
