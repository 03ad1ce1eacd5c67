package traj

import (
	"slices"
	"strings"
	"unicode"
	"unsafe"

	"github.com/trajcompress/trajcompress/internal/jsonx"
)

// The tool-call model. Every dialect's tool calls and results are read
// here, once, and nowhere else:
//
//   - OpenAI: an assistant message's "tool_calls" entries
//     {"id", "function": {"name", "arguments"}}; a tool message answers the
//     call its "tool_call_id" names ([Turn.AnswersID]).
//   - Hermes (ShareGPT): <tool_call>{"name", "arguments", "id"?}</tool_call>
//     blocks in an assistant turn's text, <tool_response>{"name",
//     "content", "tool_call_id"?}</tool_response> blocks (or plain text) in
//     a tool turn's.
//   - LLaMA-Factory: a "function_call" turn whose whole text is the call
//     (or a list of calls), an "observation" turn whose whole text is the
//     result.
//
// Keys match exactly, the last of a repeated key wins (as Python's json,
// which trainers read with, and as encoding/json decoding into a map).

// Block is the body of one <tool_call> or <tool_response> block of a
// turn's text: Text[Start:End], trimmed of white space (Unicode's, as
// strings.TrimSpace trims). A block left unclosed runs to the end of the
// text.
type Block struct{ Start, End int }

const (
	callOpen  = "<tool_call>"
	callClose = "</tool_call>"
	respOpen  = "<tool_response>"
	respClose = "</tool_response>"
)

// CallBlocks returns the <tool_call> blocks of t's text, in order; for a
// LLaMA-Factory function_call turn without any, the whole text (as it
// is, untrimmed) is its one block. The blocks of a turn that is not an
// assistant turn are not calls: nil.
func (t Turn) CallBlocks() []Block {
	if !t.callsTurn() {
		return nil
	}
	bs := blocks(t.Text, callOpen, callClose)
	if len(bs) == 0 && t.Name == "function_call" {
		bs = []Block{{0, len(t.Text)}}
	}
	return bs
}

// ResponseBlocks returns the <tool_response> blocks of t's text, in
// order (nil when it has none, or when t is not a tool turn).
func (t Turn) ResponseBlocks() []Block {
	if !t.Role.IsTool() {
		return nil
	}
	return blocks(t.Text, respOpen, respClose)
}

// callsTurn reports whether t may hold tool calls: an assistant turn, or
// a turn named function_call (an OpenAI-dialect record may carry that
// LLaMA-Factory role verbatim).
func (t Turn) callsTurn() bool { return t.Role == RoleAssistant || t.Name == "function_call" }

// blocks returns the trimmed bodies of the open…close blocks of s, in
// linear time.
func blocks(s, open, close string) []Block {
	var out []Block
	for off := 0; ; {
		i := strings.Index(s[off:], open)
		if i < 0 {
			return out
		}
		start := off + i + len(open)
		end, next := len(s), len(s)
		if j := strings.Index(s[start:], close); j >= 0 {
			end, next = start+j, start+j+len(close)
		}
		// strings.TrimSpace, keeping the offsets.
		left := strings.TrimLeftFunc(s[start:end], unicode.IsSpace)
		start = end - len(left)
		out = append(out, Block{start, start + len(strings.TrimRightFunc(left, unicode.IsSpace))})
		off = next
	}
}

// Call is one tool call of an assistant turn, in any dialect.
type Call struct {
	ID   string // "" when absent or not a string
	Name string // "" when absent or not a string
	// Args is the arguments' JSON text, decoded once: the content of a
	// JSON string (OpenAI writes the arguments as a string holding JSON),
	// else the value as written (an object, as many datasets write it);
	// "" when absent.
	Args string
	// RawArgs is the arguments' value as written (a string still quoted);
	// nil when absent. It shares the turn's memory: do not modify it.
	RawArgs []byte
	// Entry is the call's index in an OpenAI message's "tool_calls" list
	// (what [Record.SetCallArguments] takes), -1 for a call in the text.
	Entry int
	// Block is the index among [Turn.CallBlocks] of the block holding a
	// call in the text (a block may hold a list of calls), -1 for a
	// tool_calls entry.
	Block int
}

// Calls returns the tool calls of t, an assistant turn (nil for any
// other): an OpenAI message's "tool_calls" entries that are objects, in
// order, when it has any; else the calls in the text's blocks
// ([Turn.CallBlocks]), in order: a block whose body is a JSON object with
// a non-empty string "name" is one call, a JSON list of objects (each
// "name" a string or absent) is one call per object, anything else is no
// call. The result is new on every call and shares t's memory.
func (t Turn) Calls() []Call {
	if !t.callsTurn() {
		return nil
	}
	if len(t.calls) > 0 {
		return slices.Clone(t.calls)
	}
	var out []Call
	for k, b := range t.CallBlocks() {
		out = appendBodyCalls(out, t.Text[b.Start:b.End], k)
	}
	return out
}

// appendBodyCalls appends the calls a block body holds (see
// [Turn.Calls]).
func appendBodyCalls(out []Call, body string, block int) []Call {
	b := bytesOf(body)
	if vals, ok := jsonx.Fields(b, "name", "arguments", "id"); ok {
		if c, ok := bodyCall(vals, block); ok && c.Name != "" {
			return append(out, c)
		}
		return out
	}
	i := jsonx.SkipSpace(b, 0)
	if i >= len(b) || b[i] != '[' || !jsonx.Valid(b) {
		return out
	}
	els := jsonx.Elements(b, i)
	n := len(out)
	for _, el := range els {
		vals, ok := jsonx.Fields(b[el[0]:el[1]], "name", "arguments", "id")
		if !ok {
			return out[:n]
		}
		c, ok := bodyCall(vals, block)
		if !ok {
			return out[:n]
		}
		out = append(out, c)
	}
	return out
}

// bodyCall is the call of a block body's values of name, arguments and
// id; ok is false when the name is neither a string, null nor absent.
func bodyCall(vals [][]byte, block int) (Call, bool) {
	c := Call{Entry: -1, Block: block}
	if v := vals[0]; v != nil {
		switch v[0] {
		case '"':
			c.Name, _ = jsonx.Unquote(v)
		case 'n':
		default:
			return c, false
		}
	}
	if v := vals[1]; v != nil {
		c.RawArgs = v[:len(v):len(v)]
		c.Args = argsText(v)
	}
	if v := vals[2]; v != nil && v[0] == '"' {
		c.ID, _ = jsonx.Unquote(v)
	}
	return c, true
}

// argsText is the JSON text of arguments v: decoded when v is a JSON
// string, else v as written; "" when v is nil.
func argsText(v []byte) string {
	if len(v) > 0 && v[0] == '"' {
		if s, ok := jsonx.Unquote(v); ok {
			return s
		}
	}
	return unsafe.String(unsafe.SliceData(v), len(v))
}

// Result is one tool result of a tool turn.
type Result struct {
	// Block is the index of the <tool_response> block among
	// [Turn.ResponseBlocks], -1 when the result is the whole turn.
	Block int
	// Body is the block's body (Text[Start:End]), or the whole text.
	Body       string
	Start, End int
	// Content is what the result says: a JSON response's "content"
	// (decoded when a string, else its JSON text), or Body.
	Content string
	// Name and ID are a JSON response's "name" and "tool_call_id" when
	// strings; for an OpenAI tool message ID is [Turn.AnswersID].
	Name, ID string
	// JSON is true when Body is a JSON object with a non-null "content"
	// (a string content that decodes); Body[ContentStart:ContentEnd] is
	// then that value as written.
	JSON                     bool
	ContentStart, ContentEnd int
}

// Results returns the tool results of t, a tool turn (nil for any
// other): one per <tool_response> block, or the whole turn. A block whose
// body is a JSON object with a non-null "content" is read as a Hermes
// response (content, name, tool_call_id); any other body is plain output.
// The result is new on every call and shares t's memory.
func (t Turn) Results() []Result {
	if !t.Role.IsTool() {
		return nil
	}
	bs := t.ResponseBlocks()
	if len(bs) == 0 {
		return []Result{{Block: -1, Body: t.Text, End: len(t.Text), Content: t.Text, ID: t.AnswersID}}
	}
	out := make([]Result, len(bs))
	for k, b := range bs {
		out[k] = response(t.Text[b.Start:b.End], k, b)
	}
	return out
}

// response reads one <tool_response> body.
func response(body string, k int, b Block) Result {
	r := Result{Block: k, Body: body, Start: b.Start, End: b.End, Content: body}
	bb := bytesOf(body)
	vals, ok := jsonx.Fields(bb, "content", "name", "tool_call_id")
	if !ok || vals[0] == nil || string(vals[0]) == "null" {
		return r
	}
	v := vals[0]
	if v[0] == '"' {
		s, ok := jsonx.Unquote(v)
		if !ok {
			return r
		}
		r.Content = s
	} else {
		r.Content = unsafe.String(unsafe.SliceData(v), len(v)) // part of body
	}
	r.JSON = true
	r.ContentStart = int(uintptr(unsafe.Pointer(unsafe.SliceData(v))) - uintptr(unsafe.Pointer(unsafe.SliceData(bb))))
	r.ContentEnd = r.ContentStart + len(v)
	if n := vals[1]; n != nil && n[0] == '"' {
		r.Name, _ = jsonx.Unquote(n)
	}
	if id := vals[2]; id != nil && id[0] == '"' {
		r.ID, _ = jsonx.Unquote(id)
	}
	return r
}

// bytesOf views s as bytes, read only.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
