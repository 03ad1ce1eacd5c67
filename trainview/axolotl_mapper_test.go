package trainview

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/chattemplate"
	"github.com/trajcompress/trajcompress/trainer/axolotl"
)

// Mapper{Axolotl: true} reads a record as axolotl's chat_template strategy
// gives it to the template: ShareGPT roles as written (observation stays
// observation, a function_call's value stays text) and tool parameters
// given as a JSON string parsed (an invalid one is an error, as axolotl
// raises), and OpenAI messages as transform_message gives them; without
// it, the trainview mapping.
func TestMapperAxolotl(t *testing.T) {
	row := `{"conversations": [{"from": "human", "value": "w?"}, {"from": "function_call", "value": "{\"name\": \"w\", \"arguments\": {}}"}, {"from": "observation", "value": "sunny"}, {"from": "gpt", "value": "Sunny."}],` +
		` "tools": [{"type": "function", "function": {"name": "w", "parameters": "{\"type\": \"object\"}"}}]}`
	for _, tc := range []struct {
		axolotl         bool
		messages, tools string
	}{
		{true, `[{"role":"human","content":"w?"},{"role":"function_call","content":"{\"name\": \"w\", \"arguments\": {}}"},{"role":"observation","content":"sunny"},{"role":"gpt","content":"Sunny."}]`,
			`[{"type": "function", "function": {"name": "w", "parameters": {"type": "object"}}}]`},
		{false, `[{"role":"user","content":"w?"},{"role":"assistant","content":"","tool_calls":[{"type":"function","function":{"name":"w","arguments":{}}}]},{"role":"tool","content":"sunny"},{"role":"assistant","content":"Sunny."}]`,
			`[{"type": "function", "function": {"name": "w", "parameters": "{\"type\": \"object\"}"}}]`},
	} {
		v, err := Mapper{Axolotl: tc.axolotl}.Record([]byte(row))
		if err != nil {
			t.Fatal(err)
		}
		if string(v.Messages) != tc.messages || string(v.Tools) != tc.tools {
			t.Errorf("axolotl %v:\n%s\n%s", tc.axolotl, v.Messages, v.Tools)
		}
	}
	// OpenAI messages as transform_message gives them: null members left
	// out, a content list kept for axolotl.Rules.Messages to join,
	// "system_prompt" not read (a "system" field is).
	msgs := `"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": null, "tool_calls": [{"type": "function", "function": {"name": "w", "arguments": "{}"}}], "name": null},` +
		` {"role": "assistant", "content": [{"type": "reasoning", "value": "r"}, {"type": "text", "value": "a"}]}]`
	for _, tc := range []struct {
		axolotl   bool
		sys, want string
	}{
		{true, `"system_prompt": "S"`, `[{"role":"user","content":"q"},{"role":"assistant","tool_calls":[{"type": "function", "function": {"name": "w", "arguments": "{}"}}]},{"role":"assistant","content":[{"type": "reasoning", "value": "r"}, {"type": "text", "value": "a"}]}]`},
		{true, `"system": "S"`, `[{"role":"system","content":"S"},{"role":"user","content":"q"},{"role":"assistant","tool_calls":[{"type": "function", "function": {"name": "w", "arguments": "{}"}}]},{"role":"assistant","content":[{"type": "reasoning", "value": "r"}, {"type": "text", "value": "a"}]}]`},
		{false, `"system_prompt": "S"`, `[{"role":"system","content":"S"},{"role":"user","content":"q"},{"role":"assistant","content":"","tool_calls":[{"type": "function", "function": {"name": "w", "arguments": "{}"}}],"name":null},{"role":"assistant","content":"a","reasoning_content":"r"}]`},
	} {
		v, err := Mapper{Axolotl: tc.axolotl}.Record([]byte("{" + tc.sys + ", " + msgs + "}"))
		if err != nil {
			t.Fatal(err)
		}
		if string(v.Messages) != tc.want {
			t.Errorf("axolotl %v, %s:\n got %s\nwant %s", tc.axolotl, tc.sys, v.Messages, tc.want)
		}
	}
	if _, err := (Mapper{Axolotl: true}).Record([]byte(`{"messages": [{"role": "user", "content": "x"}], "tools": [{"function": {"name": "w", "parameters": "{not json"}}]}`)); err == nil {
		t.Error("tool parameters that are not JSON: no error")
	}
}

// A row whose template raises because axolotl left a null content out
// says so: the template's error alone ("no attribute 'content'") does not
// name the record's null.
func TestAxolotlNullContentError(t *testing.T) {
	tmpl, err := chattemplate.Load(filepath.Join("..", "chattemplate", "testdata", "templates", "qwen3.tokenizer_config.json"))
	if err != nil {
		t.Fatal(err)
	}
	rules := axolotl.NewRules(nil, []string{"assistant"}, false, "", "", "turn", "turn", false)
	c := Counter{Template: tmpl, Tokens: specialCounter{}, ParseArguments: true, Axolotl: &rules}
	row := `{"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": null, "tool_calls": [{"type": "function", "function": {"name": "w", "arguments": "{}"}}]}, {"role": "tool", "content": "r"}, {"role": "assistant", "content": "a"}]}`
	v, err := Mapper{Axolotl: true}.Record([]byte(row))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Count(v)
	if err == nil || !strings.Contains(err.Error(), "no content for 1 message(s), the first message 1 (assistant): a null content is left out") {
		t.Errorf("got %v", err)
	}
	// Read as the other trainers read it, the null is "" and it renders.
	v, _ = Mapper{}.Record([]byte(row))
	if _, err := (Counter{Template: tmpl, Tokens: specialCounter{}}).Count(v); err != nil {
		t.Error(err)
	}
}
