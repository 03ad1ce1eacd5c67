package prepass

import (
	"unsafe"

	"github.com/trajcompress/trajcompress/internal/jsonx"
	"github.com/trajcompress/trajcompress/traj"
)

// call is one tool call of an assistant turn.
type call struct {
	turn  int
	entry int // index in an OpenAI message's tool_calls, -1 for a call in the text
	block int // index of the <tool_call> block holding it, -1 for a tool_calls entry
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

// bytesOf views s as bytes, read only.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// calls lists the tool calls of turn i as traj reads them
// ([traj.Turn.Calls]). In a record whose dialect pairs by id
// ([traj.PairByID]: OpenAI's) only the tool_calls entries count: a tool
// message answers them by id, and the text of a message there is not just
// its content (SetContent could not write a block back).
func calls(rec *traj.Record, t traj.Turn, i int) []*call {
	cs := t.Calls()
	if len(cs) == 0 {
		return nil
	}
	out := make([]*call, 0, len(cs))
	backing := make([]call, len(cs))
	for k, c := range cs {
		if rec.Dialect.Pairing() == traj.PairByID && c.Entry < 0 {
			continue
		}
		backing[k] = call{turn: i, entry: c.Entry, block: c.Block, id: c.ID, name: c.Name, args: c.Args}
		out = append(out, &backing[k])
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
			if rec.Dialect.Pairing() == traj.PairByID {
				r := &result{turn: i, block: -1, body: t.Text, call: byID[t.AnswersID]}
				if r.call != nil {
					r.name = r.call.name
					r.call.used = true
				}
				results = append(results, r)
				continue
			}
			for _, tr := range t.Results() {
				r := &result{turn: i, block: tr.Block, body: tr.Content, name: tr.Name}
				r.call = pair(pending, tr.ID, tr.Name, byID)
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
	rs := t.Results()
	if r.block >= len(rs) {
		return t
	}
	tr := rs[r.block]
	var nb string
	if tr.JSON {
		nb = tr.Body[:tr.ContentStart] + string(jsonx.AppendString(nil, s)) + tr.Body[tr.ContentEnd:]
	} else {
		nb = jsonResponse(tr.Body, s)
	}
	return rec.SetContent(t, t.Text[:tr.Start]+nb+t.Text[tr.End:])
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
