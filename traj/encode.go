package traj

import (
	"bytes"
	"slices"

	"github.com/trajcompress/trajcompress/internal/jsonx"
)

// Field is a top-level field to set on an encoded record: its value is raw
// JSON.
type Field struct {
	Key   string
	Value []byte
}

// NewTurn makes a turn in the record's dialect, field names and separator
// style, e.g. {"from": "human", "value": "…"} for ShareGPT.
func (r *Record) NewTurn(role Role, text string) Turn {
	name := string(role)
	if n, ok := r.Dialect.traits().names[role]; ok {
		name = n
	}
	raw := make([]byte, 0, len(text)+64)
	raw = append(raw, '{')
	raw = jsonx.AppendString(raw, r.roleKey)
	raw = append(raw, r.keySep...)
	raw = jsonx.AppendString(raw, name)
	raw = append(raw, r.valSep...)
	raw = jsonx.AppendString(raw, r.contKey)
	raw = append(raw, r.keySep...)
	start := len(raw)
	raw = jsonx.AppendString(raw, text)
	end := len(raw)
	raw = append(raw, '}')
	return Turn{Role: role, Name: name, Text: text, Raw: raw,
		content: [2]int{start, end}, contentKind: 's', made: true}
}

// AppendText returns a copy of t, a turn of r, with s appended to its
// content: to the string, in place of a null, or as one more text part of
// a list. Every other byte of the turn is kept, the existing content's
// included.
func (r *Record) AppendText(t Turn, s string) Turn { return r.editText(t, s, false) }

// PrependText is [Record.AppendText] at the front: s is put before the
// content (as the first text part of a list).
func (r *Record) PrependText(t Turn, s string) Turn { return r.editText(t, s, true) }

// partTextKey is the key a new text part of the content list (with
// elements els) holds its text under: "value" when the list's text parts
// hold theirs so (LLaMA-Factory's content blocks, {"type": "text",
// "value": …}: a part in another spelling is one its loader cannot read,
// and one a Parquet or Arrow schema of such parts has no column for),
// else "text" (OpenAI's).
func partTextKey(list []byte, els [][2]int) string {
	for _, el := range els {
		ms, _, err := jsonx.Members(list[:el[1]], el[0])
		if err != nil {
			continue
		}
		if _, ok := jsonx.Find(ms, "text"); ok {
			return "text"
		}
		if _, ok := jsonx.Find(ms, "value"); ok {
			return "value"
		}
	}
	return "text"
}

func (r *Record) editText(t Turn, s string, front bool) Turn {
	var value []byte
	switch t.contentKind {
	case 's':
		// Splice s, escaped, inside the quotes: the existing text keeps its
		// bytes (and escapes) as read, and is not decoded and re-encoded.
		old := t.Raw[t.content[0]:t.content[1]]
		add := jsonx.AppendString(nil, s)
		add = add[1 : len(add)-1]
		value = make([]byte, 0, len(old)+len(add))
		if front {
			value = append(append(append(value, '"'), add...), old[1:]...)
		} else {
			value = append(append(append(value, old[:len(old)-1]...), add...), '"')
		}
	case 'l':
		list := t.Raw[t.content[0]:t.content[1]]
		els := jsonx.Elements(list, 0)
		part := append([]byte{'{'}, jsonx.AppendString(nil, "type")...)
		part = append(part, r.keySep...)
		part = jsonx.AppendString(part, "text")
		part = append(part, r.valSep...)
		part = jsonx.AppendString(part, partTextKey(list, els))
		part = append(part, r.keySep...)
		part = jsonx.AppendString(part, s)
		part = append(part, '}')
		switch {
		case len(els) == 0:
			value = append(append([]byte{'['}, part...), ']')
		case front:
			value = append(append(append([]byte(nil), list[:els[0][0]]...), part...), r.valSep...)
			value = append(value, list[els[0][0]:]...)
		default:
			value = append(append([]byte(nil), list[:els[len(els)-1][1]]...), r.valSep...)
			value = append(append(value, part...), list[els[len(els)-1][1]:]...)
		}
	case 'n':
		value = jsonx.AppendString(nil, s)
	default: // absent: add the content field before the closing brace
		end := len(t.Raw) - 1
		raw := append([]byte(nil), t.Raw[:end]...)
		if len(bytes.TrimSpace(t.Raw[1:end])) > 0 {
			raw = append(raw, r.valSep...)
		}
		raw = jsonx.AppendString(raw, r.contKey)
		raw = append(raw, r.keySep...)
		start := len(raw)
		raw = jsonx.AppendString(raw, s)
		t.content = [2]int{start, len(raw)}
		t.Raw = append(raw, t.Raw[end:]...)
		t.contentKind, t.made = 's', true
		t.Text += s
		t.CallIDs = slices.Clone(t.CallIDs)
		return t
	}
	raw := make([]byte, 0, len(t.Raw)+len(s)+32)
	raw = append(raw, t.Raw[:t.content[0]]...)
	raw = append(raw, value...)
	raw = append(raw, t.Raw[t.content[1]:]...)
	t.Raw = raw
	t.content[1] = t.content[0] + len(value)
	if t.contentKind == 'n' {
		t.contentKind = 's'
	}
	switch {
	case t.Text != "" && t.contentKind == 'l' && front:
		t.Text = s + "\n" + t.Text
	case t.Text != "" && t.contentKind == 'l':
		t.Text += "\n" + s
	case front:
		t.Text = s + t.Text
	default:
		t.Text += s
	}
	t.made = true
	t.CallIDs = slices.Clone(t.CallIDs)
	return t
}

// SystemField returns the top-level field that sets the outside system
// prompt to text (see [Record.System]), for [Record.AppendJSON].
func (r *Record) SystemField(text string) Field {
	return Field{Key: r.SystemKey, Value: jsonx.AppendString(nil, text)}
}

// AppendJSON appends the record to dst with its turns list replaced by
// turns and the given top-level fields set (replacing a field of the same
// name in place, or appended before the closing brace). Every other byte
// is copied from the input. With turns == r.Turns and no fields, the output
// is the input line exactly. dst is grown at most once, to the output's
// length.
func (r *Record) AppendJSON(dst []byte, turns []Turn, fields ...Field) []byte {
	tv := r.members[r.turnsIdx]
	type splice struct {
		start, end int
		value      []byte
		turns      bool
	}
	splices := []splice{{start: tv.Start, end: tv.End, turns: true}}
	var appended []Field
	for _, f := range fields {
		if m, ok := jsonx.Find(r.members, f.Key); ok {
			splices = append(splices, splice{start: m.Start, end: m.End, value: f.Value})
		} else {
			appended = append(appended, f)
		}
	}
	slices.SortFunc(splices, func(a, b splice) int { return a.start - b.start })
	// Grown once to the output's length: a record of tens of MB (an inline
	// image) is then copied once, never regrown by append.
	same := sameTurns(turns, r.Turns)
	n := len(r.raw)
	for _, s := range splices {
		switch {
		case !s.turns:
			n += len(s.value) - (s.end - s.start)
		case !same:
			n += 2 - (s.end - s.start)
			for i, t := range turns {
				if i > 0 {
					n += len(r.valSep)
				}
				n += len(t.Raw)
			}
		}
	}
	for _, f := range appended {
		n += len(r.valSep) + len(f.Key) + 2 + len(r.keySep) + len(f.Value) // a key that needs escapes grows dst again
	}
	dst = slices.Grow(dst, n)
	pos := 0
	for _, s := range splices {
		dst = append(dst, r.raw[pos:s.start]...)
		if s.turns && same {
			dst = append(dst, r.raw[s.start:s.end]...)
		} else if s.turns {
			dst = append(dst, '[')
			for i, t := range turns {
				if i > 0 {
					dst = append(dst, r.valSep...)
				}
				dst = append(dst, t.Raw...)
			}
			dst = append(dst, ']')
		} else {
			dst = append(dst, s.value...)
		}
		pos = s.end
	}
	// Before the closing brace, keeping any white space that precedes it.
	end := r.objEnd
	for end > pos && jsonx.IsSpace(r.raw[end-1]) {
		end--
	}
	dst = append(dst, r.raw[pos:end]...)
	for _, f := range appended {
		dst = append(dst, r.valSep...) // the turns field is always there
		dst = jsonx.AppendString(dst, f.Key)
		dst = append(dst, r.keySep...)
		dst = append(dst, f.Value...)
	}
	return append(dst, r.raw[end:]...)
}

// sameTurns reports whether a holds exactly the turns of b, as read.
func sameTurns(a, b []Turn) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].made || len(a[i].Raw) != len(b[i].Raw) || (len(a[i].Raw) > 0 && &a[i].Raw[0] != &b[i].Raw[0]) {
			return false
		}
	}
	return true
}
