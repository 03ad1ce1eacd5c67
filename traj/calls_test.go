package traj

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// hermes decodes a ShareGPT record of the given (from, value) turns.
func hermes(t testing.TB, turns ...string) *Record {
	t.Helper()
	var list []map[string]string
	for i := 0; i+1 < len(turns); i += 2 {
		list = append(list, map[string]string{"from": turns[i], "value": turns[i+1]})
	}
	b, err := json.Marshal(map[string]any{"conversations": list})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Decode(b, pos, Schema{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestCallsHermes(t *testing.T) {
	type want struct {
		ID, Name, Args, Raw string
		Block               int
	}
	cases := []struct {
		name, from, text string
		blocks           []string
		want             []want
	}{
		{"two_blocks", "gpt", "<think>x</think>\n<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}, \"id\": \"c1\"}\n</tool_call>\n<tool_call>{\"name\": \"read\", \"arguments\": \"{\\\"path\\\": \\\"a\\\"}\"}</tool_call>",
			[]string{`{"name": "bash", "arguments": {"command": "ls"}, "id": "c1"}`, `{"name": "read", "arguments": "{\"path\": \"a\"}"}`},
			[]want{{"c1", "bash", `{"command": "ls"}`, `{"command": "ls"}`, 0}, {"", "read", `{"path": "a"}`, `"{\"path\": \"a\"}"`, 1}}},
		{"malformed_then_good", "gpt", "<tool_call>{not json}</tool_call><tool_call>{\"name\": 5}</tool_call><tool_call>{\"name\": \"\"}</tool_call><tool_call> {\"name\": \"f\"} ",
			[]string{"{not json}", `{"name": 5}`, `{"name": ""}`, `{"name": "f"}`},
			[]want{{"", "f", "", "", 3}}},
		{"list", "gpt", `<tool_call>[{"name": "a", "arguments": {}}, {"arguments": null}]</tool_call><tool_call>[{"name": "b"}, 7]</tool_call>`,
			[]string{`[{"name": "a", "arguments": {}}, {"arguments": null}]`, `[{"name": "b"}, 7]`},
			[]want{{"", "a", "{}", "{}", 0}, {"", "", "null", "null", 0}}},
		{"unicode_space", "gpt", "<tool_call>\u00a0\n{\"name\": \"x\"}\u2003</tool_call>", []string{`{"name": "x"}`}, []want{{"", "x", "", "", 0}}},
		{"function_call", "function_call", ` {"name": "grep", "arguments": {"pattern": "x"}}`,
			[]string{` {"name": "grep", "arguments": {"pattern": "x"}}`}, []want{{"", "grep", `{"pattern": "x"}`, `{"pattern": "x"}`, 0}}},
		{"exact_keys", "gpt", `<tool_call>{"Name": "x", "name": "y", "name": "z"}</tool_call>`, []string{`{"Name": "x", "name": "y", "name": "z"}`}, []want{{"", "z", "", "", 0}}},
		{"not_assistant", "human", `<tool_call>{"name": "x"}</tool_call>`, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			turn := hermes(t, c.from, c.text).Turns[0]
			var blocks []string
			for _, b := range turn.CallBlocks() {
				blocks = append(blocks, turn.Text[b.Start:b.End])
			}
			if !slices.Equal(blocks, c.blocks) {
				t.Errorf("CallBlocks = %q, want %q", blocks, c.blocks)
			}
			var got []want
			for _, tc := range turn.Calls() {
				if tc.Entry != -1 {
					t.Errorf("call %q: Entry %d in a text", tc.Name, tc.Entry)
				}
				got = append(got, want{tc.ID, tc.Name, tc.Args, string(tc.RawArgs), tc.Block})
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("Calls = %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestCallsOpenAIEntries(t *testing.T) {
	line := `{"messages": [{"role": "assistant", "content": "<tool_call>{\"name\": \"in_text\"}</tool_call>", "tool_calls": [7, {"id": "a", "function": {"name": "bash", "arguments": "{\"cmd\": \"ls\"}"}}]}, {"role": "assistant", "content": "<tool_call>{\"name\": \"in_text\"}</tool_call>", "tool_calls": []}]}`
	r, err := Decode([]byte(line), pos, Schema{})
	if err != nil {
		t.Fatal(err)
	}
	cs := r.Turns[0].Calls()
	if len(cs) != 1 || cs[0].Entry != 1 || cs[0].Block != -1 || cs[0].Name != "bash" || cs[0].Args != `{"cmd": "ls"}` {
		t.Errorf("entries: %+v", cs)
	}
	// A message without tool_calls entries: the blocks of its text.
	if cs := r.Turns[1].Calls(); len(cs) != 1 || cs[0].Name != "in_text" || cs[0].Block != 0 {
		t.Errorf("text calls: %+v", cs)
	}
}

func TestResults(t *testing.T) {
	type want struct {
		Block           int
		Body, Content   string
		Name, ID        string
		JSON            bool
		ContentAsInBody string
	}
	cases := []struct {
		name, from, text string
		want             []want
	}{
		{"hermes", "tool", "<tool_response>\n{\"tool_call_id\": \"c1\", \"name\": \"bash\", \"content\": \"a\\nb\"}\n</tool_response>\n<tool_response>plain</tool_response><tool_response>{\"content\": {\"k\": 1}}",
			[]want{{0, `{"tool_call_id": "c1", "name": "bash", "content": "a\nb"}`, "a\nb", "bash", "c1", true, `"a\nb"`},
				{1, "plain", "plain", "", "", false, ""},
				{2, `{"content": {"k": 1}}`, `{"k": 1}`, "", "", true, `{"k": 1}`}}},
		{"null_content", "tool", `<tool_response>{"name": "x", "content": null}</tool_response><tool_response></tool_response>`,
			[]want{{0, `{"name": "x", "content": null}`, `{"name": "x", "content": null}`, "", "", false, ""}, {1, "", "", "", "", false, ""}}},
		{"observation", "observation", `{"content": "whole turn"}`, []want{{-1, `{"content": "whole turn"}`, `{"content": "whole turn"}`, "", "", false, ""}}},
		{"not_a_tool", "gpt", "<tool_response>x</tool_response>", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			turn := hermes(t, c.from, c.text).Turns[0]
			var got []want
			for _, r := range turn.Results() {
				if turn.Text[r.Start:r.End] != r.Body {
					t.Errorf("block %d: Text[Start:End] = %q, Body %q", r.Block, turn.Text[r.Start:r.End], r.Body)
				}
				w := want{r.Block, r.Body, r.Content, r.Name, r.ID, r.JSON, ""}
				if r.JSON {
					w.ContentAsInBody = r.Body[r.ContentStart:r.ContentEnd]
				}
				got = append(got, w)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("Results = %+v\nwant %+v", got, c.want)
			}
		})
	}
	// An OpenAI tool message is one result answering its tool_call_id.
	r, err := Decode([]byte(`{"messages": [{"role": "tool", "tool_call_id": "c9", "content": "out"}]}`), pos, Schema{})
	if err != nil {
		t.Fatal(err)
	}
	if rs := r.Turns[0].Results(); len(rs) != 1 || rs[0].Block != -1 || rs[0].ID != "c9" || rs[0].Content != "out" {
		t.Errorf("OpenAI tool message: %+v", rs)
	}
}

// refCall is a call as encoding/json reads it.
type refCall struct {
	ID, Name string
	Args     any
	HasArgs  bool
}

// decodeRef decodes s with encoding/json, numbers kept as json.Number
// (so that no number is out of range); ok is false when s is not one
// JSON value.
func decodeRef(s []byte) (v any, ok bool) {
	if !json.Valid(s) {
		return nil, false
	}
	d := json.NewDecoder(bytes.NewReader(s))
	d.UseNumber()
	return v, d.Decode(&v) == nil
}

// refBodyCalls reads a <tool_call> body as Calls documents it, with
// encoding/json: one object with a non-empty string name, or a list of
// objects whose names are strings or absent (or null).
func refBodyCalls(body string) []refCall {
	v, ok := decodeRef([]byte(body))
	if !ok {
		return nil
	}
	one := func(m map[string]any) (refCall, bool) {
		var c refCall
		switch n := m["name"].(type) {
		case string:
			c.Name = n
		case nil:
		default:
			return c, false
		}
		c.Args, c.HasArgs = m["arguments"]
		c.ID, _ = m["id"].(string)
		return c, true
	}
	switch v := v.(type) {
	case map[string]any:
		if c, ok := one(v); ok && c.Name != "" {
			return []refCall{c}
		}
	case []any:
		var out []refCall
		for _, e := range v {
			m, ok := e.(map[string]any)
			if !ok {
				return nil
			}
			c, ok := one(m)
			if !ok {
				return nil
			}
			out = append(out, c)
		}
		return out
	}
	return nil
}

// refBlocks is the trimmed bodies of the <tool_call> blocks of s.
func refBlocks(s string) []string {
	var out []string
	for {
		_, after, ok := strings.Cut(s, "<tool_call>")
		if !ok {
			return out
		}
		body, rest, closed := strings.Cut(after, "</tool_call>")
		out = append(out, strings.TrimSpace(body))
		if !closed {
			return out
		}
		s = rest
	}
}

// asDecoded is s as encoding/json decodes strings: each byte of invalid
// UTF-8 as U+FFFD (traj keeps the bytes the file holds).
func asDecoded(s string) string { return string([]rune(s)) }

// sameCalls checks got (Calls) against want (encoding/json).
func sameCalls(got []Call, want []refCall) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d calls, encoding/json reads %d", len(got), len(want))
	}
	for i, g := range got {
		w := want[i]
		if asDecoded(g.Name) != w.Name || asDecoded(g.ID) != w.ID {
			return fmt.Errorf("call %d: name %q id %q, encoding/json %q %q", i, g.Name, g.ID, w.Name, w.ID)
		}
		if (g.RawArgs != nil) != w.HasArgs {
			return fmt.Errorf("call %d: arguments %q, encoding/json has them: %v", i, g.RawArgs, w.HasArgs)
		}
		if !w.HasArgs {
			continue
		}
		if s, ok := w.Args.(string); ok {
			if g.RawArgs[0] != '"' || asDecoded(g.Args) != s {
				return fmt.Errorf("call %d: arguments %q, encoding/json the string %q", i, g.Args, s)
			}
			continue
		}
		v, ok := decodeRef([]byte(g.Args))
		if !ok || !reflect.DeepEqual(v, w.Args) {
			return fmt.Errorf("call %d: arguments %q decode to %#v, encoding/json %#v", i, g.Args, v, w.Args)
		}
	}
	return nil
}

// checkOpenAI decodes an OpenAI record of one assistant message whose
// tool_calls value is toolCalls, and checks its Calls against
// encoding/json's reading of the same bytes.
func checkOpenAI(t *testing.T, toolCalls []byte) {
	line := append(append([]byte(`{"messages": [{"role": "assistant", "content": null, "tool_calls": `), toolCalls...), "}]}"...)
	rec, err := Decode(line, pos, Schema{Dialect: DialectOpenAI})
	if err != nil {
		return // not a record: Decode's own tests
	}
	var doc struct {
		Messages []map[string]any `json:"messages"`
	}
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	if err := d.Decode(&doc); err != nil {
		t.Fatalf("traj decoded %q, encoding/json fails: %v", line, err)
	}
	var want []refCall
	list, _ := doc.Messages[0]["tool_calls"].([]any)
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		c := refCall{}
		c.ID, _ = m["id"].(string)
		if f, ok := m["function"].(map[string]any); ok {
			c.Name, _ = f["name"].(string)
			c.Args, c.HasArgs = f["arguments"]
		}
		want = append(want, c)
	}
	got := rec.Turns[0].Calls()
	for _, c := range got {
		if c.Block != -1 {
			t.Fatalf("%s: a call in the text of a message without content: %+v", line, c)
		}
	}
	if err := sameCalls(got, want); err != nil {
		t.Fatalf("%s:\n%v", line, err)
	}
}

// checkHermes decodes a ShareGPT record of one gpt turn whose text is
// text and checks its Calls against encoding/json's reading of the same
// bytes, block by block.
func checkHermes(t *testing.T, text string) {
	rec := hermes(t, "gpt", text)
	var doc struct {
		Conversations []struct {
			Value string `json:"value"`
		} `json:"conversations"`
	}
	if err := json.Unmarshal(rec.Raw(), &doc); err != nil {
		t.Fatal(err)
	}
	var want []refCall
	for _, body := range refBlocks(doc.Conversations[0].Value) {
		want = append(want, refBodyCalls(body)...)
	}
	if err := sameCalls(rec.Turns[0].Calls(), want); err != nil {
		t.Fatalf("%q:\n%v", text, err)
	}
}

// FuzzCalls: Calls reads the same calls as encoding/json, for OpenAI
// tool_calls (the fuzzed bytes as the list itself, as one call's
// arguments in a JSON string, and as the arguments' value) and for
// Hermes <tool_call> blocks (the fuzzed text as the turn's text, as a
// block's body, and as the arguments of a call in a block, as a value and
// as a string): names, ids, and arguments as decoded values.
func FuzzCalls(f *testing.F) {
	for _, s := range []string{
		`[{"id": "a", "type": "function", "function": {"name": "bash", "arguments": "{\"cmd\": \"ls\"}"}}, {"id": "b", "function": {"name": "read", "arguments": {"path": "x"}}}]`,
		`[7, {"id": "a", "function": "oops"}, {"function": {"name": 5, "arguments": null}}, {"id": "c", "function": {"name": "f"}}]`,
		`{"command": "ls -la", "n": 1e400, "s": "\ud800"}`,
		"<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}\n</tool_call><tool_call>[{\"name\": \"a\"}, {\"name\": \"b\", \"id\": \"x\"}]",
		`{"name": "x", "name": "y", "Name": "z", "arguments": "\"quoted\""}`,
		"\u00a0{\"name\": \"t\"}\u3000", `[{"name": null}]`, `"just a string"`, "{\"name\": \"\xff\"}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := []byte(s)
		if json.Valid(b) {
			checkOpenAI(t, b)
			checkOpenAI(t, fmt.Appendf(nil, `[{"id": "c1", "type": "function", "function": {"name": "f", "arguments": %s}}]`, s))
		}
		str, _ := json.Marshal(s)
		checkOpenAI(t, fmt.Appendf(nil, `[{"id": "c1", "type": "function", "function": {"name": "f", "arguments": %s}}]`, str))
		checkHermes(t, s)
		checkHermes(t, "<tool_call>"+s+"</tool_call>")
		if json.Valid(b) {
			checkHermes(t, `<tool_call>{"name": "f", "arguments": `+s+`}</tool_call>`)
		}
		checkHermes(t, `<tool_call>{"name": "f", "arguments": `+string(str)+`, "id": "c"}</tool_call>`)
	})
}
