package validate

import (
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/traj"
)

func turns(t *testing.T, line string) []traj.Turn {
	t.Helper()
	r, err := traj.Decode([]byte(line), traj.Pos{File: "t", Line: 1}, traj.Schema{})
	if err != nil {
		t.Fatal(err)
	}
	return r.Turns
}

func sg(roles ...string) string {
	var b strings.Builder
	b.WriteString(`{"conversations": [`)
	for i, r := range roles {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(`{"from": "` + r + `", "value": "x"}`)
	}
	b.WriteString("]}")
	return b.String()
}

func TestLlamaFactory(t *testing.T) {
	cases := []struct {
		name, line, want string
	}{
		{"ok", sg("system", "human", "gpt", "human", "gpt"), ""},
		{"ok_tools", sg("human", "function_call", "observation", "gpt"), ""},
		{"hermes_head_then_human_summary", sg("system", "human", "gpt", "tool", "human", "gpt"), `turn 4: role "human" where assistant/function_call is required`},
		{"two_users", sg("human", "human", "gpt", "gpt"), "turn 1:"},
		{"odd", sg("system", "human", "gpt", "human"), "odd number of turns (3)"},
		{"starts_with_gpt", sg("gpt", "human"), "turn 0:"},
		{"system_later", sg("human", "system"), "turn 1:"},
		{"empty", sg(), "no turns"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ps, err := Check(turns(t, c.line), LlamaFactory)
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if len(ps) > 0 {
				got = ps[0].String()
			}
			if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func oa(msgs ...string) string { return `{"messages": [` + strings.Join(msgs, ", ") + `]}` }

const (
	sys   = `{"role": "system", "content": "s"}`
	usr   = `{"role": "user", "content": "u"}`
	asst  = `{"role": "assistant", "content": "a"}`
	call1 = `{"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}`
	res1  = `{"role": "tool", "tool_call_id": "c1", "content": "r"}`
	resX  = `{"role": "tool", "tool_call_id": "zz", "content": "r"}`
)

func TestOpenAI(t *testing.T) {
	cases := []struct {
		name, line string
		want       []string
	}{
		{"ok", oa(sys, usr, call1, res1, asst, usr, asst), nil},
		{"two_users", oa(usr, usr, asst), []string{"turn 1: two user messages"}},
		{"assistant_first", oa(sys, asst), []string{"turn 1: the first message"}},
		{"orphan_tool", oa(usr, asst, res1), []string{"turn 2: tool message that does not follow", "orphan_result"}},
		{"call_without_result", oa(usr, call1, usr), []string{"turn 2: user message where the results", "missing_result"}},
		{"wrong_id", oa(usr, call1, resX, asst), []string{"turn 1: missing_result \"c1\"", "turn 2: orphan_result \"zz\""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ps, _ := Check(turns(t, c.line), OpenAI)
			var got []string
			for _, p := range ps {
				got = append(got, p.String())
			}
			if len(got) != len(c.want) {
				t.Fatalf("got %q, want %q", got, c.want)
			}
			for i := range got {
				if !strings.Contains(got[i], c.want[i]) {
					t.Errorf("problem %d: %q lacks %q", i, got[i], c.want[i])
				}
			}
		})
	}
	if _, err := Check(nil, "mistral"); err == nil {
		t.Error("unknown consumer accepted")
	}
}
