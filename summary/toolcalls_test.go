package summary

import (
	"context"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/traj"
)

// summarizeLine decodes line with s and summarises all its turns.
func summarizeLine(t *testing.T, line string, s traj.Schema) string {
	t.Helper()
	r, err := traj.Decode([]byte(line), traj.Pos{File: "t", Line: 1}, s)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Deterministic{Counter: runeCounter{}}.Summarize(context.Background(), Request{Turns: r.Turns, TargetTokens: 400})
	if err != nil {
		t.Fatal(err)
	}
	return res.Text
}

func TestToolCallsRenamedKeys(t *testing.T) {
	cases := []struct {
		name   string
		schema traj.Schema
		line   string
		want   []string
	}{
		{"openai_renamed", traj.Schema{Dialect: traj.DialectOpenAI, TurnsKey: "msgs", RoleKey: "who", ContentKey: "text"},
			`{"msgs": [{"who": "user", "text": "go"}, {"who": "assistant", "text": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\": \"ls\"}"}}]}, {"who": "tool", "tool_call_id": "c1", "text": "a.go"}]}`,
			[]string{"[1 call] bash(command=ls)", "1 tool calls"}},
		{"openai_renamed_content_is_content_of_sharegpt", traj.Schema{Dialect: traj.DialectOpenAI, TurnsKey: "conversations", RoleKey: "from", ContentKey: "value"},
			`{"conversations": [{"from": "user", "value": "go"}, {"from": "assistant", "value": "", "tool_calls": [{"id": "c1", "function": {"name": "read", "arguments": {"path": "a.go"}}}]}, {"from": "tool", "tool_call_id": "c1", "value": "x"}]}`,
			[]string{"[1 call] read(path=a.go)"}},
		{"sharegpt_renamed", traj.Schema{Dialect: traj.DialectShareGPT, TurnsKey: "turns", RoleKey: "speaker", ContentKey: "body"},
			`{"turns": [{"speaker": "human", "body": "go"}, {"speaker": "gpt", "body": "<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}\n</tool_call>"}, {"speaker": "function_call", "body": "{\"name\": \"grep\", \"arguments\": {\"pattern\": \"x\"}}"}]}`,
			[]string{"[1 call] bash(command=ls)", "[2 call] grep(pattern=x)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := summarizeLine(t, c.line, c.schema)
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("summary lacks %q:\n%s", w, got)
				}
			}
		})
	}
}

// The summary reads an OpenAI message's tool calls as traj reads them:
// keys match exactly (encoding/json would also take "Tool_Calls" or
// "FUNCTION"), and one malformed entry does not hide the others.
func TestToolCallsAsTrajReadsThem(t *testing.T) {
	cases := []struct {
		name, line string
		want       []string
	}{
		{"malformed_entry", `{"messages": [{"role": "user", "content": "go"}, {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "function": {"name": "bash", "arguments": "{\"command\": \"ls\"}"}}, {"id": "c2", "function": "oops"}]}, {"role": "tool", "tool_call_id": "c1", "content": "a.go"}]}`,
			[]string{"[1 call] bash(command=ls)"}},
		{"key_case", `{"messages": [{"role": "user", "content": "go"}, {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "function": {"name": "bash", "arguments": "{\"command\": \"ls\"}"}}], "TOOL_CALLS": []}, {"role": "tool", "tool_call_id": "c1", "content": "a.go"}]}`,
			[]string{"[1 call] bash(command=ls)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := summarizeLine(t, c.line, traj.Schema{})
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("summary lacks %q:\n%s", w, got)
				}
			}
		})
	}
}
