// Package trainview maps a record to what a trainer passes to the model's
// chat template: transformers' apply_chat_template(messages, tools=tools).
// Package chattemplate renders that; this package decides what it is given.
//
// OpenAI records (a "messages" list) are passed as they are: every member of
// every message in its order and with its bytes (tool_calls arguments as the
// record holds them: a JSON string stays a string, an object an object;
// reasoning_content, tool_call_id, name, and keys templates ignore), except
// that a null content is passed as "" (what loaders do; Qwen3's template
// raises on a null), and a renamed role or content key (input.role_key,
// input.content_key) is passed under its standard name. A content given as
// a list of OpenAI parts ({"type": "text", "text": …}, image parts) is
// passed as it is: the template handles a list or raises, as it does in
// transformers. A content given as a list of LLaMA-Factory content blocks
// ({"type": "text"|"reasoning"|"tool_call"|…, "value": …}, its v1 format)
// is passed as LLaMA-Factory's _to_hf_messages passes it
// (src/llamafactory/v1/core/rendering/format.py): the text blocks joined
// as the content, the reasoning blocks joined as reasoning_content, each
// tool_call block as a tool_calls entry (appendBlocks).
//
// ShareGPT/Hermes records (a "conversations" list of {"from", "value"}) are
// mapped as LLaMA-Factory's SharegptDatasetConverter maps their roles
// (src/llamafactory/data/converter.py: human→user, gpt→assistant,
// observation→observation, function_call→function, system→system), and
// what LLaMA-Factory's own templates then print for its function and
// observation roles is what a Hugging Face template prints for OpenAI tool
// calls and tool messages; so for apply_chat_template:
//
//   - human and user → user; gpt and assistant → assistant; system →
//     system; observation and tool → tool, the value as the content;
//   - function_call → an assistant message with content "" and one
//     tool_calls entry {"type": "function", "function": {"name",
//     "arguments"}} per call of its value, a JSON {"name", "arguments"}
//     object or a list of them, arguments as the value holds them (LLaMA-
//     Factory's FunctionFormatter reads the same JSON), the calls as
//     traj.Turn.Calls reads them (the one tool-call parser); a value
//     without such a call, or with a call without a name, stays an
//     assistant message with the value as its content;
//   - any other role is passed under its own name (the template decides).
//
// Hermes-style values (<tool_call> blocks in gpt turns, <tool_response> in
// tool turns) are passed as text: LLaMA-Factory does not parse them either.
// A ShareGPT value that is a list never gets here: package traj refuses the
// record when reading it ("value" is a list, not a string). LLaMA-Factory's
// v0 SharegptDatasetConverter would pass the list on as the content and
// its v1 sharegpt_converter raises on it (a regular expression searched in
// a list).
//
// The record's tool schemas (its "tools" field, or the field Mapper.ToolsKey
// names) are passed as tools: a list or object as it is, a string (how
// LLaMA-Factory stores them) parsed as JSON; absent, null or "" is no
// tools. A system prompt held outside the turns ("system_prompt",
// "system": traj.Record.System) is prepended as a system message.
//
// Mapper.Axolotl reads records as axolotl's chat_template strategy does
// instead (see its doc): what is said above of null contents, content
// blocks and "system_prompt" does not hold there.
//
// Images reach the template as the record holds them: content parts
// (OpenAI image_url and input_image, Anthropic image blocks, {"type":
// "image", …}) are passed as they are, and the template decides what it
// writes for them. LLaMA-Factory / ShareGPT4V "<image>" markers are text
// in a string content, paired with the record's "images" list
// ([View.Images]); a loader does not turn them into parts: LLaMA-Factory's
// multimodal plugins rewrite the marker in the text before its template
// runs (Qwen2VLPlugin, src/llamafactory/data/mm_plugin.py, process_messages:
// "<image>" → <|vision_start|> + <|image_pad|> × the image's tokens +
// <|vision_end|>). So the view keeps the markers as text, and a [Counter]
// with [Images] replaces them as LLaMA-Factory's Qwen2-VL plugin does (at
// commit ff6d4d1), then expands each placeholder token the template or the
// markers wrote to the image's tokens under the model's image rule, as
// transformers' Qwen2VLProcessor does for <|image_pad|> (see [Images]; the
// placeholder is the rule's own when it is an imagetok.Processor of
// another family, so the expansion is not tied to one family).
package trainview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/trajcompress/trajcompress/internal/jsonx"
	"github.com/trajcompress/trajcompress/traj"
)

// View is what a trainer passes to the chat template for one record.
type View struct {
	Messages json.RawMessage // a JSON list of messages
	Tools    json.RawMessage // a JSON value, or nil for no tools
	// Images is the record's images value (LLaMA-Factory's "images" list,
	// ShareGPT4V's "image"), which its "<image>" markers stand for; nil when
	// absent. Only [Images] reads it; a caller that changes a record's list
	// (removing an image with its marker) sets the new one.
	Images json.RawMessage

	// Record, Turns and System are what the view was built from (Mapper's
	// View): a trainer that reads the record itself, not the messages a
	// chat template is given (LLaMA-Factory's converters read the turns'
	// own roles and keys), counts from them. Nil for a view built by hand.
	Record *traj.Record
	Turns  []traj.Turn
	System string

	// noParts is set by Mapper when no message's content is a list (so no
	// image part): Images then looks no further in a view without an
	// images list. The zero View does not know, and is looked through.
	noParts bool
}

// Mapper maps records read with Schema.
type Mapper struct {
	Schema traj.Schema
	// ToolsKey is the top-level field holding the tool schemas; "" means
	// "tools".
	ToolsKey string
	// Axolotl gives ShareGPT turns to the template as axolotl's
	// chat_template strategy reads them (message_property_mappings role:
	// from, content: value): {"role": from, "content": value}, the role as
	// written (axolotl's roles mapping, [Counter.Axolotl], maps it after)
	// and a function_call turn's value as its content, not parsed into
	// tool calls. An observation turn then reaches the template under its
	// own name, which Qwen3's template leaves out, as axolotl's rendering
	// does (src/axolotl/prompt_strategies/chat_template.py at 067b021c,
	// transform_message, lines 934–937). And a tool's function.parameters
	// given as a JSON string is parsed into the value it holds (_get_tools,
	// lines 1020–1051; not JSON: an error, axolotl raises), and an empty
	// tools list is no tools (build_prompt, line 126). OpenAI messages are
	// given as transform_message gives them (appendAxolotl): a null member
	// (a tau-bench tool-call message's content) left out, at any depth
	// (remove_none_values, as in a tools list), a content list
	// (LLaMA-Factory's content blocks among them) passed on for
	// axolotl.Rules.Messages to join; and only a "system" field's prompt
	// is prepended (field_system: hermes-agent's "system_prompt" is not
	// read).
	Axolotl bool
}

// Record decodes raw as Schema reads it and returns its view.
func (m Mapper) Record(raw []byte) (View, error) {
	rec, err := traj.Decode(raw, traj.Pos{}, m.Schema)
	if err != nil {
		return View{}, err
	}
	return m.View(rec, rec.Turns, rec.System)
}

// View returns the view of rec with turns in place of its own (the turns
// of a compressed record) and system as the system prompt outside the
// turns ("" for none; it may differ from rec.System when a notice was
// appended to it).
func (m Mapper) View(rec *traj.Record, turns []traj.Turn, system string) (View, error) {
	return m.ViewBuf(nil, rec, turns, system)
}

// ViewBuf is View writing the messages into buf's memory (from buf[0:])
// when it is large enough: a caller that counts many views and is done
// with each (its counts are copies) reuses one buffer.
func (m Mapper) ViewBuf(buf []byte, rec *traj.Record, turns []traj.Turn, system string) (View, error) {
	tools, err := m.Tools(rec)
	if err != nil {
		return View{}, err
	}
	msgs, err := m.messages(buf[:0], rec.Dialect, turns, m.system(rec, system))
	if err != nil {
		return View{}, err
	}
	return View{Messages: msgs, Tools: tools, Images: recordImages(rec), Record: rec, Turns: turns, System: system, noParts: noParts(rec.Dialect, turns)}, nil
}

// noParts reports whether no turn's content is a list of parts: ShareGPT
// turns are passed as strings; a message's content ([traj.FormMessage]) as
// it is.
func noParts(d traj.Dialect, turns []traj.Turn) bool {
	if d.Form() != traj.FormMessage {
		return true
	}
	for _, t := range turns {
		c := t.Content()
		if i := jsonx.SkipSpace(c, 0); i < len(c) && c[i] == '[' {
			return false
		}
	}
	return true
}

// recordImages returns rec's images value as imagetok.RecordImages finds
// it: "images", else "image"; nil when absent or null.
func recordImages(rec *traj.Record) json.RawMessage {
	for _, k := range []string{"images", "image"} {
		if v, ok := rec.Field(k); ok && len(v) > 0 && v[0] != 'n' {
			return v
		}
	}
	return nil
}

// Tools returns the record's tool schemas as the template gets them, nil
// when it has none. A string that is not JSON is an error naming the field.
func (m Mapper) Tools(rec *traj.Record) (json.RawMessage, error) {
	key := m.ToolsKey
	if key == "" {
		key = "tools"
	}
	v, ok := rec.Field(key)
	if !ok {
		return nil, nil
	}
	v = bytes.TrimSpace(v)
	if m.Axolotl && len(v) > 0 {
		return axolotlToolsField(key, v)
	}
	switch {
	case len(v) == 0 || v[0] == 'n':
		return nil, nil
	case v[0] == '"':
		s, _ := jsonx.Unquote(v)
		b := bytes.TrimSpace([]byte(s))
		if len(b) == 0 {
			return nil, nil
		}
		if !jsonx.Valid(b) {
			return nil, fmt.Errorf("%q is a string that does not hold JSON", key)
		}
		if b[0] == 'n' {
			return nil, nil
		}
		return b, nil
	case v[0] == '[' || v[0] == '{':
		return json.RawMessage(v), nil
	}
	return nil, fmt.Errorf("%q is neither a list, an object nor a JSON string", key)
}

// axolotlToolsField is the tools field v (not empty) as axolotl's
// _get_tools reads it (src/axolotl/prompt_strategies/chat_template.py at
// 067b021c, lines 1020–1056): null is no tools, a string is json.loads'
// (not JSON: it raises), and what is then not a list raises ("Unknown
// tools format"); a list is axolotlTools', its null members left out when
// it was not a string (appendNoNulls).
func axolotlToolsField(key string, v []byte) (json.RawMessage, error) {
	if v[0] == 'n' {
		return nil, nil
	}
	fromString := v[0] == '"'
	if fromString {
		s, _ := jsonx.Unquote(v)
		b := bytes.TrimSpace([]byte(s))
		if !jsonx.Valid(b) {
			return nil, fmt.Errorf("%q is a string that does not hold JSON (axolotl raises)", key)
		}
		v = b
	}
	if v[0] != '[' {
		return nil, fmt.Errorf("%q is not a list of tools (axolotl raises: Unknown tools format)", key)
	}
	if !fromString {
		v = appendNoNulls(nil, v) // remove_none_values runs before a tools string is parsed
	}
	return axolotlTools(v)
}

// axolotlTools is a tools list as axolotl gives it to the template: its
// functions' parameters strings parsed (parseToolParameters), and an empty
// list not given at all (ChatTemplatePrompter.build_prompt passes tools
// only when it is truthy, src/axolotl/prompt_strategies/chat_template.py
// at 067b021c, line 126: a template that tests `tools is not none` then
// sees none, not an empty list).
func axolotlTools(list []byte) (json.RawMessage, error) {
	if len(jsonx.Elements(list, 0)) == 0 {
		return nil, nil
	}
	return parseToolParameters(list)
}

// Messages returns the messages of turns read in dialect d, with system
// prepended as a system message when it is not "".
func (m Mapper) Messages(d traj.Dialect, turns []traj.Turn, system string) (json.RawMessage, error) {
	return m.messages(nil, d, turns, system)
}

// messages is Messages appended to b (empty), grown once to what it needs.
func (m Mapper) messages(b []byte, d traj.Dialect, turns []traj.Turn, system string) (json.RawMessage, error) {
	n := 2
	for _, t := range turns {
		n += len(t.Raw) + 16
	}
	b = slices.Grow(b, n+len(system))
	b = append(b, '[')
	if system != "" {
		b = append(b, `{"role":"system","content":`...)
		b = jsonx.AppendStringKeep(b, system)
		b = append(b, '}')
	}
	_, roleKey, contKey := m.Schema.Keys(d)
	for i, t := range turns {
		if len(b) > 1 {
			b = append(b, ',')
		}
		var err error
		switch f := d.Form(); f {
		case traj.FormMessage:
			if m.Axolotl {
				b, err = appendAxolotl(b, t, roleKey, contKey)
			} else {
				b, err = appendOpenAI(b, t, roleKey, contKey)
			}
		case traj.FormShareGPT:
			b = appendShareGPT(b, t, m.Axolotl)
		default:
			err = fmt.Errorf("dialect %s writes turns in a form (%d) this package does not map to messages", d, f)
		}
		if err != nil {
			return nil, fmt.Errorf("turn %d: %w", i, err)
		}
	}
	return append(b, ']'), nil
}

// appendOpenAI appends an OpenAI message as it is, its null content as "",
// or, when its content is a list of LLaMA-Factory content blocks, the
// message LLaMA-Factory makes of it (appendBlocks).
func appendOpenAI(b []byte, t traj.Turn, roleKey, contKey string) ([]byte, error) {
	ms, _, err := jsonx.Members(t.Raw, 0)
	if err != nil {
		return nil, err
	}
	if m, ok := jsonx.Find(ms, contKey); ok {
		if v := t.Raw[m.Start:m.End]; isBlocks(v) {
			return appendBlocks(b, t.Raw, ms, roleKey, v)
		}
	}
	b = append(b, '{')
	for i, mb := range ms {
		if i > 0 {
			b = append(b, ',')
		}
		v := t.Raw[mb.Start:mb.End]
		switch {
		case jsonx.KeyIs(mb.Key, roleKey):
			b = append(b, `"role"`...)
		case jsonx.KeyIs(mb.Key, contKey):
			b = append(b, `"content"`...)
			if bytes.Equal(v, []byte("null")) {
				v = []byte(`""`)
			}
		default:
			b = append(b, mb.Key...)
		}
		b = append(b, ':')
		b = append(b, v...)
	}
	return append(b, '}'), nil
}

// axolotlFieldSystem is the top-level field whose system prompt axolotl
// prepends (ChatTemplatePrompter's field_system, default "system",
// src/axolotl/prompt_strategies/chat_template.py at 067b021c, line 52;
// get_conversation_thread, lines 878–884): hermes-agent's "system_prompt"
// is not read.
const axolotlFieldSystem = "system"

// system is the system prompt prepended to rec's messages: system, or,
// under Axolotl, "" when rec's prompt outside the turns is not in
// axolotlFieldSystem.
func (m Mapper) system(rec *traj.Record, system string) string {
	if m.Axolotl && rec.SystemKey != axolotlFieldSystem {
		return ""
	}
	return system
}

// appendAxolotl appends an OpenAI message as axolotl's transform_message
// gives it to the template (src/axolotl/prompt_strategies/chat_template.py
// at 067b021c, lines 916–996): its members as they are, the role and
// content keys under their standard names, but a member whose value is
// null left out (a mapped property is taken only when it is not None, the
// other keys likewise), so a null content is no content key (Qwen3's
// template then raises, as it does in axolotl), and the members' values
// lose their own null members (appendNoNulls). A content given as a list
// is passed as it is: axolotl joins any list of parts, LLaMA-Factory's
// content blocks (reasoning ones too) among them, into one string
// (_convert_content_parts), which axolotl.Rules.Messages does after.
func appendAxolotl(b []byte, t traj.Turn, roleKey, contKey string) ([]byte, error) {
	ms, _, err := jsonx.Members(t.Raw, 0)
	if err != nil {
		return nil, err
	}
	return appendMembersNoNulls(b, t.Raw, ms, func(key []byte) []byte {
		switch {
		case jsonx.KeyIs(key, roleKey):
			return []byte(`"role"`)
		case jsonx.KeyIs(key, contKey):
			return []byte(`"content"`)
		}
		return key
	}), nil
}

// appendNoNulls appends JSON value v with every object member whose value
// is null left out, at any depth, as axolotl's remove_none_values does to
// the whole row before reading it (src/axolotl/utils/dict.py, called by
// tokenize_prompt, src/axolotl/prompt_strategies/chat_template.py at
// 067b021c, line 420): a tool call's arguments object or a tool schema
// loses its null members; a null list element stays, and a string (an
// arguments or tools string, parsed only after) is not looked into.
func appendNoNulls(b, v []byte) []byte {
	if !bytes.Contains(v, []byte("null")) {
		return append(b, v...)
	}
	i := jsonx.SkipSpace(v, 0)
	switch {
	case i < len(v) && v[i] == '{':
		ms, _, err := jsonx.Members(v, i)
		if err != nil {
			return append(b, v...)
		}
		return appendMembersNoNulls(b, v, ms, nil)
	case i < len(v) && v[i] == '[':
		b = append(b, '[')
		for k, e := range jsonx.Elements(v, i) {
			if k > 0 {
				b = append(b, ',')
			}
			b = appendNoNulls(b, v[e[0]:e[1]])
		}
		return append(b, ']')
	}
	return append(b, v...)
}

// appendMembersNoNulls appends the object of members ms of v without its
// null members, each value through appendNoNulls, each key (raw, quoted)
// as key gives it (nil: as it is).
func appendMembersNoNulls(b, v []byte, ms []jsonx.Member, key func(raw []byte) []byte) []byte {
	b = append(b, '{')
	n := 0
	for _, m := range ms {
		val := v[m.Start:m.End]
		if string(val) == "null" {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		k := m.Key
		if key != nil {
			k = key(k)
		}
		b = append(b, k...)
		b = append(b, ':')
		b = appendNoNulls(b, val)
	}
	return append(b, '}')
}

// shareGPTRoles maps ShareGPT role names to the roles a template knows.
var shareGPTRoles = map[string]string{
	"human": "user", "user": "user",
	"gpt": "assistant", "assistant": "assistant",
	"observation": "tool", "tool": "tool",
	"system": "system",
}

// appendShareGPT appends a ShareGPT turn mapped as the package doc says.
// With asWritten, the role is t's name as written and the content its
// value (Mapper.Axolotl).
func appendShareGPT(b []byte, t traj.Turn, asWritten bool) []byte {
	if asWritten {
		b = append(b, `{"role":`...)
		b = jsonx.AppendStringKeep(b, t.Name)
		// A null or absent value is no content key: transform_message
		// maps only the values that are not None (lines 924–931).
		if c := t.Content(); c != nil && string(c) != "null" {
			b = append(b, `,"content":`...)
			b = jsonx.AppendStringKeep(b, t.Text)
		}
		return append(b, '}')
	}
	if t.Name == "function_call" {
		if calls := namedCalls(t); calls != nil {
			b = append(b, `{"role":"assistant","content":"","tool_calls":[`...)
			for i, c := range calls {
				if i > 0 {
					b = append(b, ',')
				}
				b = append(b, `{"type":"function","function":{"name":`...)
				b = jsonx.AppendStringKeep(b, c.Name)
				if c.RawArgs != nil {
					b = append(b, `,"arguments":`...)
					b = append(b, c.RawArgs...)
				}
				b = append(b, "}}"...)
			}
			return append(b, "]}"...)
		}
	}
	role, ok := shareGPTRoles[t.Name]
	if !ok {
		role = t.Name
		if t.Name == "function_call" {
			role = "assistant"
		}
	}
	b = append(b, `{"role":`...)
	b = jsonx.AppendStringKeep(b, role)
	b = append(b, `,"content":`...)
	b = jsonx.AppendStringKeep(b, t.Text)
	return append(b, '}')
}

// namedCalls returns the calls of a function_call turn as traj's tool-call
// model reads them (traj.Turn.Calls: its text a JSON {"name",
// "arguments"} object or a list of them), or nil when it holds none or one
// without a name: then the text stays the content.
func namedCalls(t traj.Turn) []traj.Call {
	calls := t.Calls()
	for _, c := range calls {
		if c.Name == "" {
			return nil
		}
	}
	return calls
}

// isBlocks reports whether content v is a non-empty list of LLaMA-Factory
// content blocks: objects each with a string "type" and a "value" and no
// "text" (an OpenAI part carries "text" or "image_url" and is passed as it
// is).
func isBlocks(v []byte) bool {
	if len(v) == 0 || v[0] != '[' {
		return false
	}
	els := jsonx.Elements(v, 0)
	if len(els) == 0 {
		return false
	}
	for _, el := range els {
		f, ok := jsonx.Fields(v[el[0]:el[1]], "type", "value", "text")
		if !ok || f[0] == nil || f[0][0] != '"' || f[1] == nil || f[2] != nil {
			return false
		}
	}
	return true
}

// appendBlocks appends the message LLaMA-Factory's v1 _to_hf_messages
// (src/llamafactory/v1/core/rendering/format.py, text models) makes of a
// message whose content v is a list of blocks: {"role", "content": the
// "text" blocks' values joined, "tool_calls": one {"type": "function",
// "function": {"name", "arguments"}} per "tool_call" block (its value a
// JSON string holding {"name", "arguments"}), "reasoning_content": the
// "reasoning" blocks' values joined}, the last two only when not empty;
// other blocks (media) and the message's other keys are dropped. Where
// LLaMA-Factory raises (a value that is not a string, a tool_call that is
// not such JSON) it is an error.
func appendBlocks(b []byte, raw []byte, ms []jsonx.Member, roleKey string, v []byte) ([]byte, error) {
	var text, reasoning strings.Builder
	var calls [][2][]byte
	for i, el := range jsonx.Elements(v, 0) {
		f, _ := jsonx.Fields(v[el[0]:el[1]], "type", "value")
		typ, _ := jsonx.Unquote(f[0])
		if typ != "text" && typ != "reasoning" && typ != "tool_call" {
			continue
		}
		if f[1][0] != '"' {
			return nil, fmt.Errorf("content block %d (%s): value is not a string", i, typ)
		}
		val, _ := jsonx.Unquote(f[1])
		switch typ {
		case "text":
			text.WriteString(val)
		case "reasoning":
			reasoning.WriteString(val)
		case "tool_call":
			c, ok := jsonx.Fields([]byte(val), "name", "arguments")
			if !ok || c[0] == nil || c[1] == nil {
				return nil, fmt.Errorf("content block %d: tool_call value is not a JSON object with name and arguments", i)
			}
			calls = append(calls, [2][]byte{c[0], c[1]})
		}
	}
	b = append(b, `{"role":`...)
	if m, ok := jsonx.Find(ms, roleKey); ok {
		b = append(b, raw[m.Start:m.End]...)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"content":`...)
	b = jsonx.AppendStringKeep(b, text.String())
	if len(calls) > 0 {
		b = append(b, `,"tool_calls":[`...)
		for i, c := range calls {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"type":"function","function":{"name":`...)
			b = append(b, c[0]...)
			b = append(b, `,"arguments":`...)
			b = append(b, c[1]...)
			b = append(b, "}}"...)
		}
		b = append(b, ']')
	}
	if reasoning.Len() > 0 {
		b = append(b, `,"reasoning_content":`...)
		b = jsonx.AppendStringKeep(b, reasoning.String())
	}
	return append(b, '}'), nil
}
