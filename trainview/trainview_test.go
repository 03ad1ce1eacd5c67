package trainview

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/internal/testenv"
	"github.com/trajcompress/trajcompress/traj"
)

func TestRecord(t *testing.T) {
	cases := []struct {
		name, schema, rec string
		toolsKey          string
		msgs, tools       string
		err               string
	}{
		{
			name: "openai as held: string and object arguments, null content, extra keys",
			rec: `{"messages": [{"role": "user", "content": "hi"},` +
				`{"role": "assistant", "content": null, "reasoning_content": "think", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"a\": 1.0}"}}, {"id": "c2", "type": "function", "function": {"name": "g", "arguments": {"b": 1.0, "a": [2]}}}]},` +
				`{"role": "tool", "tool_call_id": "c1", "name": "f", "content": "ok"}], "id": 7}`,
			msgs: `[{"role":"user","content":"hi"},` +
				`{"role":"assistant","content":"","reasoning_content":"think","tool_calls":[{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"a\": 1.0}"}}, {"id": "c2", "type": "function", "function": {"name": "g", "arguments": {"b": 1.0, "a": [2]}}}]},` +
				`{"role":"tool","tool_call_id":"c1","name":"f","content":"ok"}]`,
		},
		{
			name:   "openai renamed keys",
			schema: "openai:turns:speaker:text",
			rec:    `{"turns": [{"speaker": "user", "text": null, "tool_calls": null}]}`,
			msgs:   `[{"role":"user","content":"","tool_calls":null}]`,
		},
		{
			name:  "openai system_prompt outside the turns, tools as a list",
			rec:   `{"system_prompt": "Be brief.\n", "messages": [{"role": "user", "content": "q"}], "tools": [{"type": "function", "function": {"name": "f"}}]}`,
			msgs:  `[{"role":"system","content":"Be brief.\n"},{"role":"user","content":"q"}]`,
			tools: `[{"type": "function", "function": {"name": "f"}}]`,
		},
		{
			name: "sharegpt roles as LLaMA-Factory maps them, tools as a JSON string",
			rec: `{"system": "S", "conversations": [{"from": "human", "value": "q"},` +
				`{"from": "function_call", "value": "{\"name\": \"f\", \"arguments\": {\"x\": 1}}"},` +
				`{"from": "observation", "value": "{\"r\": 2}"},` +
				`{"from": "function_call", "value": "[{\"name\": \"f\", \"arguments\": \"{}\"}, {\"name\": \"g\"}]"},` +
				`{"from": "tool", "value": "<tool_response>\nx\n</tool_response>"},` +
				`{"from": "function_call", "value": "not json"},` +
				`{"from": "gpt", "value": "<tool_call>\n{}\n</tool_call>"}], "tools": "[{\"name\": \"f\", \"parameters\": {}}]"}`,
			msgs: `[{"role":"system","content":"S"},{"role":"user","content":"q"},` +
				`{"role":"assistant","content":"","tool_calls":[{"type":"function","function":{"name":"f","arguments":{"x": 1}}}]},` +
				`{"role":"tool","content":"{\"r\": 2}"},` +
				`{"role":"assistant","content":"","tool_calls":[{"type":"function","function":{"name":"f","arguments":"{}"}},{"type":"function","function":{"name":"g"}}]},` +
				`{"role":"tool","content":"<tool_response>\nx\n</tool_response>"},` +
				`{"role":"assistant","content":"not json"},` +
				`{"role":"assistant","content":"<tool_call>\n{}\n</tool_call>"}]`,
			tools: `[{"name": "f", "parameters": {}}]`,
		},
		{
			name: "sharegpt function_call: a call without a name leaves the value as the content; escapes in a name",
			rec: `{"conversations": [{"from": "function_call", "value": "[{\"name\": \"f\"}, {\"arguments\": {}}]"},` +
				`{"from": "function_call", "value": "{\"name\": \"\\u00e9\\\"\", \"arguments\": null}"}]}`,
			msgs: `[{"role":"assistant","content":"[{\"name\": \"f\"}, {\"arguments\": {}}]"},` +
				`{"role":"assistant","content":"","tool_calls":[{"type":"function","function":{"name":"é\"","arguments":null}}]}]`,
		},
		{
			name: "sharegpt system turn kept, unknown role by name",
			rec:  `{"conversations": [{"from": "system", "value": "S"}, {"from": "ipython", "value": "r"}]}`,
			msgs: `[{"role":"system","content":"S"},{"role":"ipython","content":"r"}]`,
		},
		{
			name:     "tools key renamed; empty string is no tools",
			toolsKey: "functions",
			rec:      `{"conversations": [{"from": "human", "value": "q"}], "functions": [1], "tools": "["}`,
			msgs:     `[{"role":"user","content":"q"}]`,
			tools:    `[1]`,
		},
		{
			name: "empty tools string",
			rec:  `{"conversations": [{"from": "human", "value": "q"}], "tools": ""}`,
			msgs: `[{"role":"user","content":"q"}]`,
		},
		{
			name: "tools string that is not JSON",
			rec:  `{"conversations": [{"from": "human", "value": "q"}], "tools": "[{"}`,
			err:  `"tools" is a string that does not hold JSON`,
		},
		{
			name: "openai content parts passed as they are",
			rec:  `{"messages": [{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "image_url", "image_url": {"url": "x"}}]}]}`,
			msgs: `[{"role":"user","content":[{"type": "text", "text": "a"}, {"type": "image_url", "image_url": {"url": "x"}}]}]`,
		},
		{
			name: "LLaMA-Factory content blocks as its _to_hf_messages makes them",
			rec: `{"messages": [{"role": "system", "content": [{"type": "text", "value": "S"}], "loss_weight": 0.0},` +
				`{"role": "user", "content": [{"type": "text", "value": "a"}, {"type": "image_url", "value": "i.png"}, {"type": "text", "value": "b"}]},` +
				`{"role": "assistant", "content": [{"type": "reasoning", "value": "r1"}, {"type": "text", "value": "t"}, {"type": "reasoning", "value": "r2"}, {"type": "tool_call", "value": "{\"name\": \"f\", \"arguments\": {\"x\": 1.0}}"}, {"type": "tool_call", "value": "{\"arguments\": \"{}\", \"name\": \"g\"}"}]},` +
				`{"role": "tool", "content": [{"type": "text", "value": "ok"}]},` +
				`{"role": "assistant", "content": [{"type": "reasoning", "value": ""}]}]}`,
			msgs: `[{"role":"system","content":"S"},{"role":"user","content":"ab"},` +
				`{"role":"assistant","content":"t","tool_calls":[{"type":"function","function":{"name":"f","arguments":{"x": 1.0}}},{"type":"function","function":{"name":"g","arguments":"{}"}}],"reasoning_content":"r1r2"},` +
				`{"role":"tool","content":"ok"},{"role":"assistant","content":""}]`,
		},
		{
			name: "LLaMA-Factory tool_call block without arguments: LLaMA-Factory raises",
			rec:  `{"messages": [{"role": "assistant", "content": [{"type": "tool_call", "value": "{\"name\": \"f\"}"}]}]}`,
			err:  "tool_call value is not a JSON object with name and arguments",
		},
		{
			name: "LLaMA-Factory block value not a string: LLaMA-Factory raises",
			rec:  `{"messages": [{"role": "user", "content": [{"type": "text", "value": 1}]}]}`,
			err:  "value is not a string",
		},
		{
			name: "sharegpt value as a list: refused when the record is read",
			rec:  `{"conversations": [{"from": "human", "value": [{"type": "text", "value": "q"}]}]}`,
			err:  `"value" is a list, not a string`,
		},
		{
			name: "tools a number",
			rec:  `{"conversations": [{"from": "human", "value": "q"}], "tools": 3}`,
			err:  `"tools" is neither a list, an object nor a JSON string`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := Mapper{ToolsKey: c.toolsKey}
			if c.schema != "" {
				p := strings.Split(c.schema, ":")
				m.Schema = traj.Schema{Dialect: traj.Dialect(p[0]), TurnsKey: p[1], RoleKey: p[2], ContentKey: p[3]}
			}
			v, err := m.Record([]byte(c.rec))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(v.Messages) != c.msgs {
				t.Errorf("messages\n got %s\nwant %s", v.Messages, c.msgs)
			}
			if string(v.Tools) != c.tools {
				t.Errorf("tools %s, want %s", v.Tools, c.tools)
			}
			if !json.Valid(v.Messages) {
				t.Errorf("messages not valid JSON")
			}
		})
	}
}

// eachRealLine calls f with every line of the real data's JSONL files
// (skipping the test when there is none) and returns the data directory.
func eachRealLine(t *testing.T, f func(path string, n int, line []byte)) string {
	t.Helper()
	files, dir := testenv.RealJSONL()
	if len(files) == 0 {
		t.Skipf("no real data in %s", dir)
	}
	for _, path := range files {
		fh, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 1<<27)
		for n := 1; sc.Scan(); n++ {
			f(path, n, sc.Bytes())
		}
		err = sc.Err()
		fh.Close()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	return dir
}

// TestRealData maps every record of the real data: the messages are valid
// JSON, one per turn plus the system prompt held outside the turns, no
// content is null, OpenAI roles are kept and ShareGPT roles are the ones a
// template knows; the LLaMA-Factory demos' tools strings are parsed.
func TestRealData(t *testing.T) {
	records, withTools := 0, 0
	dir := eachRealLine(t, func(path string, n int, line []byte) {
		rec, err := traj.Decode(line, traj.Pos{File: path, Line: int64(n)}, traj.Schema{})
		if err != nil {
			return
		}
		v, err := Mapper{}.View(rec, rec.Turns, rec.System)
		if err != nil {
			t.Fatalf("%s:%d: %v", path, n, err)
		}
		var msgs []map[string]any
		if err := json.Unmarshal(v.Messages, &msgs); err != nil {
			t.Fatalf("%s:%d: %v", path, n, err)
		}
		want := len(rec.Turns)
		if rec.System != "" {
			want++
		}
		if len(msgs) != want {
			t.Fatalf("%s:%d: %d messages for %d turns", path, n, len(msgs), want)
		}
		off := want - len(rec.Turns)
		for i, m := range msgs {
			if c, ok := m["content"]; ok && c == nil {
				t.Fatalf("%s:%d: message %d has a null content", path, n, i)
			}
			role, _ := m["role"].(string)
			if i < off {
				continue
			}
			tr := rec.Turns[i-off]
			if rec.Dialect == traj.DialectOpenAI && role != tr.Name {
				t.Fatalf("%s:%d: message %d role %q, read %q", path, n, i, role, tr.Name)
			}
			if rec.Dialect == traj.DialectShareGPT && role != string(tr.Role) {
				t.Fatalf("%s:%d: message %d role %q, turn role %q", path, n, i, role, tr.Role)
			}
		}
		if v.Tools != nil {
			withTools++
			if !json.Valid(v.Tools) {
				t.Fatalf("%s:%d: tools not valid JSON", path, n)
			}
		}
		if strings.Contains(filepath.Base(path), "glaive") && v.Tools == nil {
			if raw, ok := rec.Field("tools"); ok && string(raw) != `""` && string(raw) != `"[]"` {
				t.Fatalf("%s:%d: tools %s not passed", path, n, raw)
			}
		}
		records++
	})
	t.Logf("%d records mapped, %d with tools", records, withTools)
	if records == 0 {
		t.Fatalf("no record of %s decoded", dir)
	}
}
