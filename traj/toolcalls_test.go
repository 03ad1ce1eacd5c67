package traj

import (
	"slices"
	"testing"
)

func TestToolCalls(t *testing.T) {
	type want struct {
		ID, Name, Args string
	}
	cases := []struct {
		name   string
		schema Schema
		line   string
		turn   int
		want   []want
		ids    []string
	}{
		{"openai", Schema{},
			`{"messages": [{"role": "assistant", "content": null, "tool_calls": [{"id": "a", "type": "function", "function": {"name": "bash", "arguments": "{\"cmd\": \"ls\"}"}}, {"id": "b", "function": {"name": "read", "arguments": {"path": "x"}}}]}]}`,
			0, []want{{"a", "bash", `"{\"cmd\": \"ls\"}"`}, {"b", "read", `{"path": "x"}`}}, []string{"a", "b"}},
		{"renamed_keys", Schema{Dialect: DialectOpenAI, TurnsKey: "msgs", RoleKey: "who", ContentKey: "text"},
			`{"msgs": [{"who": "user", "text": "go"}, {"who": "assistant", "text": "", "tool_calls": [{"id": "a", "function": {"name": "bash", "arguments": "{}"}}]}]}`,
			1, []want{{"a", "bash", `"{}"`}}, []string{"a"}},
		{"malformed_entries", Schema{},
			`{"messages": [{"role": "assistant", "tool_calls": [7, {"id": "a", "function": "oops"}, {"function": {"name": 5, "arguments": null}}, {"id": "c", "function": {"name": "f"}}], "TOOL_CALLS": [{"id": "z"}]}]}`,
			0, []want{{"a", "", ""}, {"", "", "null"}, {"c", "f", ""}}, []string{"a", "c"}},
		{"no_calls", Schema{}, `{"messages": [{"role": "user", "content": "hi"}]}`, 0, nil, nil},
		{"sharegpt", Schema{},
			`{"conversations": [{"from": "gpt", "value": "x", "tool_calls": [{"id": "a", "function": {"name": "bash"}}]}]}`,
			0, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := Decode([]byte(c.line), pos, c.schema)
			if err != nil {
				t.Fatal(err)
			}
			turn := r.Turns[c.turn]
			var got []want
			for _, tc := range turn.Calls() {
				got = append(got, want{tc.ID, tc.Name, string(tc.RawArgs)})
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("Calls = %q, want %q", got, c.want)
			}
			if !slices.Equal(turn.CallIDs, c.ids) {
				t.Errorf("CallIDs = %q, want %q", turn.CallIDs, c.ids)
			}
		})
	}
}
