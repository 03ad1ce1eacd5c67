package prepass

import (
	"encoding/json"
	"strings"
	"unsafe"

	"github.com/trajcompress/trajcompress/internal/jsonx"
	"github.com/trajcompress/trajcompress/traj"
)

// call is one tool call of an assistant turn.
type call struct {
	turn  int
	index int // among the turn's calls
	id    string
	name  string
	args  string // the arguments' JSON text (decoded when they were a JSON string)
	used  bool   // paired with a result already
}

// result is one tool result: a whole tool message (block < 0) or one
// <tool_response> block of a tool turn.
type result struct {
	turn  int
	block int
	body  string // what the result says: its "content" (decoded), or its text
	name  string // tool name, from the response or the call
	call  *call  // nil when no call pairs with it
}

const (
	respOpen  = "<tool_response>"
	respClose = "</tool_response>"
	callOpen  = "<tool_call>"
	callClose = "</tool_call>"
)

// span is a block's body inside a text, trimmed of surrounding space.
type span struct{ start, end int }

// blockSpans returns the trimmed bodies of the open…close blocks of s (an
// unclosed last block runs to the end).
func blockSpans(s, open, close string) []span {
	var out []span
	off := 0
	for {
		i := strings.Index(s[off:], open)
		if i < 0 {
			return out
		}
		start := off + i + len(open)
		end := len(s)
		next := len(s)
		if j := strings.Index(s[start:], close); j >= 0 {
			end = start + j
			next = end + len(close)
		}
		for start < end && isSpace(s[start]) {
			start++
		}
		for end > start && isSpace(s[end-1]) {
			end--
		}
		out = append(out, span{start, end})
		off = next
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// bytesOf views s as bytes, read only.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// offsetIn is the offset of sub, a sub-slice of parent, in parent.
func offsetIn(parent, sub []byte) int {
	return int(uintptr(unsafe.Pointer(unsafe.SliceData(sub))) - uintptr(unsafe.Pointer(unsafe.SliceData(parent))))
}

// responseFields reads a Hermes tool response body: its content (decoded
// when a string, else its JSON text), name and tool_call_id, and where the
// content value lies in body. ok is false when body is not a JSON object
// with a non-null content.
func responseFields(body string) (content, name, id string, cspan span, ok bool) {
	b := bytesOf(body)
	vals, isObj := jsonx.Fields(b, "content", "name", "tool_call_id")
	if !isObj || vals[0] == nil || string(vals[0]) == "null" {
		return "", "", "", span{}, false
	}
	v := vals[0]
	if v[0] == '"' {
		if content, ok = jsonx.Unquote(v); !ok {
			return "", "", "", span{}, false
		}
	} else {
		content = string(v)
	}
	if vals[1] != nil && vals[1][0] == '"' {
		name, _ = jsonx.Unquote(vals[1])
	}
	if vals[2] != nil && vals[2][0] == '"' {
		id, _ = jsonx.Unquote(vals[2])
	}
	start := offsetIn(b, v)
	return content, name, id, span{start, start + len(v)}, true
}

// callFields reads a Hermes/LLaMA-Factory call body {"name", "arguments",
// "id"?}.
func callFields(body string) (name, args, id string, ok bool) {
	vals, isObj := jsonx.Fields(bytesOf(body), "name", "arguments", "id")
	if !isObj || vals[0] == nil || vals[0][0] != '"' {
		return "", "", "", false
	}
	name, _ = jsonx.Unquote(vals[0])
	if vals[1] != nil {
		args = argsText(vals[1])
	}
	if vals[2] != nil && vals[2][0] == '"' {
		id, _ = jsonx.Unquote(vals[2])
	}
	return name, args, id, name != ""
}

// argsText is the JSON text of arguments: decoded when they are a JSON
// string, else as written.
func argsText(v []byte) string {
	if len(v) > 0 && v[0] == '"' {
		if s, ok := jsonx.Unquote(v); ok {
			return s
		}
	}
	return string(v)
}

// calls lists the tool calls of turn i: OpenAI tool_calls, or Hermes
// <tool_call> blocks (a bare JSON call for a LLaMA-Factory function_call
// turn).
func calls(rec *traj.Record, t traj.Turn, i int) []*call {
	var out []*call
	if rec.Dialect == traj.DialectOpenAI {
		if len(t.CallIDs) == 0 {
			return nil
		}
		var m struct {
			ToolCalls []struct {
				ID       string `json:"id"`
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tool_calls"`
		}
		if json.Unmarshal(t.Raw, &m) != nil {
			return nil
		}
		args := rec.CallArguments(t)
		for k, tc := range m.ToolCalls {
			c := &call{turn: i, index: k, id: tc.ID, name: tc.Function.Name}
			if k < len(args) && args[k] != nil {
				c.args = argsText(args[k])
			}
			out = append(out, c)
		}
		return out
	}
	spans := blockSpans(t.Text, callOpen, callClose)
	if len(spans) == 0 && t.Name == "function_call" {
		spans = []span{{0, len(t.Text)}}
	}
	for k, sp := range spans {
		name, args, id, ok := callFields(t.Text[sp.start:sp.end])
		if !ok {
			continue
		}
		out = append(out, &call{turn: i, index: k, id: id, name: name, args: args})
	}
	return out
}

// model lists the calls and results of the whole record, results paired
// with their calls.
func model(rec *traj.Record, turns []traj.Turn) []*result {
	var results []*result
	byID := map[string]*call{}
	var pending []*call // calls of the latest assistant turn with calls
	for i, t := range turns {
		switch {
		case t.Role == traj.RoleAssistant || t.Name == "function_call":
			if cs := calls(rec, t, i); len(cs) > 0 {
				pending = cs
				for _, c := range cs {
					if c.id != "" {
						byID[c.id] = c
					}
				}
			}
		case t.Role == traj.RoleTool:
			if rec.Dialect == traj.DialectOpenAI {
				r := &result{turn: i, block: -1, body: t.Text, call: byID[t.AnswersID]}
				if r.call != nil {
					r.name = r.call.name
					r.call.used = true
				}
				results = append(results, r)
				continue
			}
			spans := blockSpans(t.Text, respOpen, respClose)
			if len(spans) == 0 {
				r := &result{turn: i, block: -1, body: t.Text, call: pair(pending, "", "", byID)}
				if r.call != nil {
					r.name = r.call.name
				}
				results = append(results, r)
				continue
			}
			for k, sp := range spans {
				body := t.Text[sp.start:sp.end]
				r := &result{turn: i, block: k, body: body}
				content, name, id, _, ok := responseFields(body)
				if ok {
					r.body, r.name = content, name
				}
				r.call = pair(pending, id, name, byID)
				if r.name == "" && r.call != nil {
					r.name = r.call.name
				}
				results = append(results, r)
			}
		}
	}
	return results
}

// pair finds the call a response answers: by id, else the first unused
// pending call of that name, else the first unused pending call.
func pair(pending []*call, id, name string, byID map[string]*call) *call {
	if c := byID[id]; id != "" && c != nil {
		c.used = true
		return c
	}
	for _, c := range pending {
		if !c.used && name != "" && c.name == name {
			c.used = true
			return c
		}
	}
	for _, c := range pending {
		if !c.used && name == "" {
			c.used = true
			return c
		}
	}
	return nil
}

// replaceResult returns turn t with result r's body replaced by s: the
// whole content of a tool message or a plain tool turn, or the "content"
// of a Hermes response (its other keys kept), or the whole block body.
func replaceResult(rec *traj.Record, t traj.Turn, r *result, s string) traj.Turn {
	if r.block < 0 {
		return rec.SetContent(t, s)
	}
	spans := blockSpans(t.Text, respOpen, respClose)
	if r.block >= len(spans) {
		return t
	}
	sp := spans[r.block]
	body := t.Text[sp.start:sp.end]
	var nb string
	if _, _, _, cs, ok := responseFields(body); ok {
		nb = body[:cs.start] + string(jsonx.AppendString(nil, s)) + body[cs.end:]
	} else {
		nb = jsonResponse(body, s)
	}
	return rec.SetContent(t, t.Text[:sp.start]+nb+t.Text[sp.end:])
}

// jsonResponse is what replaces a response body that has no content to
// replace by s: s itself when the body is not JSON; when it is, JSON still
// (a trainer's reader may parse each response): an object of the body's
// name and tool_call_id (as written) and s as its content, or s as a JSON
// string for a body that is not an object.
func jsonResponse(body, s string) string {
	b := bytesOf(body)
	if !jsonx.Valid(b) {
		return s
	}
	ms, _, err := jsonx.Members(b, 0)
	if err != nil {
		return string(jsonx.AppendString(nil, s))
	}
	out := []byte{'{'}
	for _, k := range []string{"name", "tool_call_id"} {
		if m, ok := jsonx.Find(ms, k); ok {
			out = append(append(out, b[m.KeyStart:m.KeyStart+len(m.Key)]...), ": "...)
			out = append(append(out, b[m.Start:m.End]...), ", "...)
		}
	}
	out = jsonx.AppendString(append(out, `"content": `...), s)
	return string(append(out, '}'))
}
