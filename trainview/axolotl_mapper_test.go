package trainview

import "testing"

// Mapper{Axolotl: true} reads a record as axolotl's chat_template strategy
// gives it to the template: ShareGPT roles as written (observation stays
// observation, a function_call's value stays text) and tool parameters
// given as a JSON string parsed (an invalid one is an error, as axolotl
// raises); without it, the trainview mapping.
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
	if _, err := (Mapper{Axolotl: true}).Record([]byte(`{"messages": [{"role": "user", "content": "x"}], "tools": [{"function": {"name": "w", "parameters": "{not json"}}]}`)); err == nil {
		t.Error("tool parameters that are not JSON: no error")
	}
}
