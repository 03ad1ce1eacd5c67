package traj

import (
	"slices"

	"github.com/trajcompress/trajcompress/internal/jsonx"
)

// SetContent returns a copy of t, a turn of r, whose content is the string
// s: it replaces a string, null or list content, or is added when absent.
// Every other member of the turn keeps its bytes (an OpenAI message's
// tool_calls, tool_call_id, reasoning…), so tool pairing is unchanged. The
// copy's Text is decoded again from its new bytes, as [Decode] would.
func (r *Record) SetContent(t Turn, s string) Turn {
	return r.redecode(t, r.spliceContent(t, jsonx.AppendString(nil, s)))
}

// spliceContent returns a copy of t's bytes with its content value
// replaced by value (added before the closing brace when absent).
func (r *Record) spliceContent(t Turn, value []byte) []byte {
	var raw []byte
	if t.contentKind == 0 {
		end := len(t.Raw) - 1
		raw = append(raw, t.Raw[:end]...)
		if ms, _, err := jsonx.Members(t.Raw, 0); err == nil && len(ms) > 0 {
			raw = append(raw, r.valSep...)
		}
		raw = jsonx.AppendString(raw, r.contKey)
		raw = append(raw, r.keySep...)
		raw = append(raw, value...)
		return append(raw, t.Raw[end:]...)
	}
	raw = make([]byte, 0, len(t.Raw)-(t.content[1]-t.content[0])+len(value))
	raw = append(raw, t.Raw[:t.content[0]]...)
	raw = append(raw, value...)
	return append(raw, t.Raw[t.content[1]:]...)
}

// CallArguments returns the raw JSON value of the function.arguments of
// each tool call of t, an OpenAI assistant turn (nil for a call without
// one), in order. It returns nil for a turn without tool_calls.
func (r *Record) CallArguments(t Turn) [][]byte {
	spans := callArgSpans(t.Raw)
	if spans == nil {
		return nil
	}
	out := make([][]byte, len(spans))
	for i, sp := range spans {
		if sp[1] > sp[0] {
			out[i] = t.Raw[sp[0]:sp[1]]
		}
	}
	return out
}

// SetCallArguments returns a copy of t, an OpenAI assistant turn of r,
// whose i-th tool call has function.arguments set to value, raw JSON (a
// JSON string holding the arguments, as most exports write them, or an
// object). Every other byte of the turn is kept; the call ids are
// unchanged. ok is false when t has no i-th call with arguments.
func (r *Record) SetCallArguments(t Turn, i int, value []byte) (Turn, bool) {
	spans := callArgSpans(t.Raw)
	if i < 0 || i >= len(spans) || spans[i][1] <= spans[i][0] {
		return t, false
	}
	sp := spans[i]
	raw := make([]byte, 0, len(t.Raw)-(sp[1]-sp[0])+len(value))
	raw = append(raw, t.Raw[:sp[0]]...)
	raw = append(raw, value...)
	raw = append(raw, t.Raw[sp[1]:]...)
	return r.redecode(t, raw), true
}

// callArgSpans lists, for each element of the message's tool_calls, the
// span of its function.arguments value ([0,0] when absent); nil when the
// message has no tool_calls list.
func callArgSpans(raw []byte) [][2]int {
	ms, _, err := jsonx.Members(raw, 0)
	if err != nil {
		return nil
	}
	m, ok := jsonx.Find(ms, "tool_calls")
	if !ok || raw[m.Start] != '[' {
		return nil
	}
	var out [][2]int
	for _, el := range jsonx.Elements(raw, m.Start) {
		var sp [2]int
		if cm, _, err := jsonx.Members(raw[:el[1]], el[0]); err == nil {
			if fm, ok := jsonx.Find(cm, "function"); ok && raw[fm.Start] == '{' {
				if fms, _, err := jsonx.Members(raw[:fm.End], fm.Start); err == nil {
					if am, ok := jsonx.Find(fms, "arguments"); ok {
						sp = [2]int{am.Start, am.End}
					}
				}
			}
		}
		out = append(out, sp)
	}
	return out
}

// redecode decodes raw, an edited copy of t's bytes, as a turn of r. The
// edits above only replace one value by valid JSON, so it cannot fail; if
// it did, t is returned unchanged.
func (r *Record) redecode(t Turn, raw []byte) Turn {
	nt, err := r.decodeEdited(t, raw)
	if err != nil {
		return t
	}
	return nt
}

// decodeEdited decodes raw, an edited copy of t's bytes, as a made turn of
// r.
func (r *Record) decodeEdited(t Turn, raw []byte) (Turn, error) {
	ms, end, err := jsonx.Members(raw, 0)
	if err != nil {
		return t, err
	}
	nt, err := r.decodeTurn(raw, jsonx.Elem{Start: 0, End: end + 1, Object: true, Members: ms})
	if err != nil {
		return t, err
	}
	nt.made = true
	nt.CallIDs = slices.Clip(nt.CallIDs)
	return nt, nil
}

// MapTurnStrings is jsonx.MapStrings over t, a turn of r: every string in the
// turn's JSON (its content, content parts, reasoning, tool-call arguments,
// the role too) may be rewritten; the copy is decoded again. changed is
// false (and t is returned) when f changed nothing.
func (r *Record) MapTurnStrings(t Turn, f func(string) (string, bool)) (Turn, bool) {
	raw, changed := jsonx.MapStrings(t.Raw, f)
	if !changed {
		return t, false
	}
	return r.redecode(t, raw), true
}

// SetContentJSON returns a copy of t, a turn of r, whose content value is
// value, raw JSON in the record's dialect (a string, or in the OpenAI
// dialect a list of parts): it replaces the content value, or is added
// when absent. Every other byte of the turn is kept, as by
// [Record.SetContent]. ok is false, and t is returned, when value is not
// valid JSON or is not content the turn can be decoded with.
func (r *Record) SetContentJSON(t Turn, value []byte) (Turn, bool) {
	if !jsonx.Valid(value) {
		return t, false
	}
	nt, err := r.decodeEdited(t, r.spliceContent(t, value))
	if err != nil {
		return t, false
	}
	return nt, true
}

// ListWithout returns the top-level field key, a JSON list, without the
// entries whose index drop reports (for [Record.AppendJSON]): the entries
// kept and the separators between them keep their bytes. ok is false when
// the record has no such field or it is not a list.
func (r *Record) ListWithout(key string, drop func(i int) bool) (f Field, ok bool) {
	v, ok := r.Field(key)
	if !ok || len(v) == 0 || v[0] != '[' {
		return Field{}, false
	}
	els := jsonx.Elements(v, 0)
	sep := []byte(r.valSep)
	if len(els) > 1 {
		sep = v[els[0][1]:els[1][0]]
	}
	out := make([]byte, 0, len(v))
	out = append(out, '[')
	n := 0
	for i, el := range els {
		if drop(i) {
			continue
		}
		if n > 0 {
			out = append(out, sep...)
		}
		out = append(out, v[el[0]:el[1]]...)
		n++
	}
	return Field{Key: key, Value: append(out, ']')}, true
}
