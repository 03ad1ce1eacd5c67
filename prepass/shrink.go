package prepass

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/trajcompress/trajcompress/internal/jsonx"
)

// shrinkJSON rewrites the JSON value src with every string leaf longer
// than keep characters cut to its first 2/3·keep and last 1/3·keep
// characters around a marker, except the leaves shrinkable says to keep
// (ids, paths); a leaf that holds JSON is shrunk inside (shrinkNested).
// Keys, numbers, booleans and nulls are written as read,
// in order; the output is compact and valid, non-ASCII unescaped. ok is
// false when src is not a single valid JSON object or array; changed is
// false when no leaf was cut.
func shrinkJSON(src string, keep int) (out string, changed, ok bool) {
	t := strings.TrimSpace(src)
	if t == "" || (t[0] != '{' && t[0] != '[') || !validJSON(t) {
		return src, false, false
	}
	dec := json.NewDecoder(strings.NewReader(t))
	dec.UseNumber()
	var b []byte
	// stack of containers: for objects, whether the next string is a key.
	type frame struct {
		object, wantKey bool
		key             string
		n               int
	}
	var stack []frame
	sep := func() {
		if len(stack) == 0 {
			return
		}
		f := &stack[len(stack)-1]
		if f.object && !f.wantKey {
			b = append(b, ':')
			return
		}
		if f.n > 0 {
			b = append(b, ',')
		}
		f.n++
	}
	after := func() {
		if len(stack) == 0 {
			return
		}
		f := &stack[len(stack)-1]
		if f.object {
			f.wantKey = !f.wantKey
		}
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return src, false, false
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				sep()
				key := ""
				if len(stack) > 0 {
					key = stack[len(stack)-1].key
				}
				b = append(b, byte(v))
				stack = append(stack, frame{object: v == '{', wantKey: v == '{', key: key})
			default:
				b = append(b, byte(v))
				stack = stack[:len(stack)-1]
				after()
			}
		case string:
			if len(stack) > 0 && stack[len(stack)-1].object && stack[len(stack)-1].wantKey {
				sep()
				stack[len(stack)-1].key = v
				b = jsonx.AppendString(b, v)
				after()
				continue
			}
			sep()
			key := ""
			if len(stack) > 0 {
				key = stack[len(stack)-1].key
			}
			if n := utf8.RuneCountInString(v); n > keep && shrinkable(key, v) {
				if s, isJSON := shrinkNested(v, keep); isJSON {
					changed = changed || s != v
					v = s
				} else {
					v = cut(v, n, keep)
					changed = true
				}
			}
			b = jsonx.AppendString(b, v)
			after()
		case json.Number:
			sep()
			b = append(b, v.String()...)
			after()
		case bool:
			sep()
			b = fmt.Append(b, v)
			after()
		case nil:
			sep()
			b = append(b, "null"...)
			after()
		}
	}
	if !changed {
		return src, false, true
	}
	return jsonTagFree.Replace(string(b)), true, true
}

// shrinkNested shrinks a string leaf v that holds a JSON text (a tool
// result or arguments passed on as a string, at any depth) inside, so that
// it still holds JSON of the same structure: an object or array by
// shrinkJSON, a JSON string by shrinking its text the same way; a number,
// boolean or null is kept. isJSON is false when v holds no JSON text (it
// is then to be cut as text).
func shrinkNested(v string, keep int) (out string, isJSON bool) {
	t := strings.TrimSpace(v)
	if t == "" || !validJSON(t) {
		return v, false
	}
	switch t[0] {
	case '{', '[':
		out, _, _ = shrinkJSON(t, keep)
		if out == t {
			return v, true
		}
		return out, true
	case '"':
		var s string
		if json.Unmarshal([]byte(t), &s) != nil {
			return v, true
		}
		n := utf8.RuneCountInString(s)
		if n <= keep {
			return v, true
		}
		small, isJSON := shrinkNested(s, keep)
		if !isJSON {
			small = cut(s, n, keep)
		} else if small == s {
			return v, true
		}
		return string(jsonx.AppendString(nil, small)), true
	}
	return v, true
}

// jsonTagFree escapes the '<' of block tags inside JSON strings (where
// alone they can occur in JSON text): a call body written into a Hermes
// turn must not close its <tool_call> block early, as the input's encoder
// had made sure by escaping.
var jsonTagFree = strings.NewReplacer(
	"<tool_call>", `\u003ctool_call>`, "</tool_call>", `\u003c/tool_call>`,
	"<tool_response>", `\u003ctool_response>`, "</tool_response>", `\u003c/tool_response>`,
	"<think>", `\u003cthink>`, "</think>", `\u003c/think>`,
)

// shrinkable reports whether a string leaf under key may be cut: not an
// id or a path (by the key's name, or by the value's shape: one line, no
// spaces, with a slash).
func shrinkable(key, v string) bool {
	k := strings.ToLower(key)
	if k == "id" || strings.HasSuffix(k, "_id") || strings.HasSuffix(k, "id") && len(k) > 2 && k[len(k)-3] == '_' ||
		strings.HasSuffix(k, "ids") || strings.Contains(k, "path") || strings.Contains(k, "file") ||
		strings.Contains(k, "dir") || strings.Contains(k, "url") || strings.Contains(k, "uri") {
		return false
	}
	if len(v) <= 4096 && !strings.ContainsAny(v, " \t\r\n") && strings.ContainsAny(v, "/\\") {
		return false
	}
	return true
}

// cut keeps the first 2/3 and the last 1/3 of keep runes of v (n runes)
// around a marker.
func cut(v string, n, keep int) string {
	head, tail := keep*2/3, keep-keep*2/3
	r := []rune(v) // v came out of encoding/json: valid UTF-8
	return string(r[:head]) + fmt.Sprintf("…[%d characters cut by trajcompress]…", n-head-tail) + string(r[len(r)-tail:])
}

// validJSON is jsonx.Valid of s, read in place (no copy).
func validJSON(s string) bool {
	return jsonx.Valid(unsafe.Slice(unsafe.StringData(s), len(s)))
}
