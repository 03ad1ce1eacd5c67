package traj

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/internal/jsonx"
)

func TestSetContentAndArguments(t *testing.T) {
	line := `{"messages": [{"role": "user", "content": "go"}, {"role": "assistant", "content": null, "reasoning_content": "think", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\": \"ls -la\"}"}}, {"id": "c2", "type": "function", "function": {"name": "read", "arguments": {"path": "/a"}}}]}, {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "long output"}]}, {"role": "tool", "tool_call_id": "c2"}], "k": 1}`
	r := mustDecode(t, line, Schema{})
	args := r.CallArguments(r.Turns[1])
	if len(args) != 2 || string(args[0]) != `"{\"command\": \"ls -la\"}"` || string(args[1]) != `{"path": "/a"}` {
		t.Fatalf("CallArguments = %q", args)
	}
	a, ok := r.SetCallArguments(r.Turns[1], 0, jsonx.AppendString(nil, `{"command": "ls"}`))
	if !ok {
		t.Fatal("SetCallArguments failed")
	}
	if _, ok := r.SetCallArguments(r.Turns[1], 2, []byte(`{}`)); ok {
		t.Fatal("SetCallArguments accepted a third call")
	}
	if !reflect.DeepEqual(a.CallIDs, []string{"c1", "c2"}) || a.Text != "think\nbash\n{\"command\": \"ls\"}\nread\n{\"path\": \"/a\"}" || !a.Made() {
		t.Fatalf("edited call: ids %v text %q", a.CallIDs, a.Text)
	}
	t1 := r.SetContent(r.Turns[2], "digest")
	t2 := r.SetContent(r.Turns[3], "added")
	if t1.Text != "digest" || t1.AnswersID != "c1" || t2.Text != "added" || t2.AnswersID != "c2" {
		t.Fatalf("SetContent: %+v %+v", t1, t2)
	}
	out := r.AppendJSON(nil, []Turn{r.Turns[0], a, t1, t2})
	want := `{"messages": [{"role": "user", "content": "go"}, {"role": "assistant", "content": null, "reasoning_content": "think", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\": \"ls\"}"}}, {"id": "c2", "type": "function", "function": {"name": "read", "arguments": {"path": "/a"}}}]}, {"role": "tool", "tool_call_id": "c1", "content": "digest"}, {"role": "tool", "tool_call_id": "c2", "content": "added"}], "k": 1}`
	if string(out) != want {
		t.Fatalf("got  %s\nwant %s", out, want)
	}
	if !json.Valid(out) {
		t.Fatal("invalid JSON")
	}
	r2 := mustDecode(t, string(out), Schema{})
	if r2.Turns[2].Text != "digest" || r2.Turns[1].Text != a.Text {
		t.Fatalf("re-decoded: %q %q", r2.Turns[2].Text, r2.Turns[1].Text)
	}
}

func TestSetContentShareGPT(t *testing.T) {
	line := `{"conversations":[{"from":"gpt","value":"a"},{"from":"tool","value":"<tool_response>x</tool_response>"}]}`
	r := mustDecode(t, line, Schema{})
	nt := r.SetContent(r.Turns[1], "é\"\n")
	out := string(r.AppendJSON(nil, []Turn{r.Turns[0], nt}))
	if out != `{"conversations":[{"from":"gpt","value":"a"},{"from":"tool","value":"é\"\n"}]}` || nt.Role != RoleTool || nt.Text != "é\"\n" {
		t.Fatalf("got %s / %+v", out, nt)
	}
}

func TestMapTurnStrings(t *testing.T) {
	line := `{"messages": [{"role": "assistant", "content": [{"type": "text", "text": "key=secret"}, {"type": "image_url", "image_url": {"url": "data:x"}}], "reasoning_content": "the secret", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"cmd\": \"echo secret\"}"}}]}, {"role": "tool", "tool_call_id": "c1", "content": "secret out"}]}`
	r := mustDecode(t, line, Schema{})
	red := func(s string) (string, bool) {
		return strings.ReplaceAll(s, "secret", "[R]"), strings.Contains(s, "secret")
	}
	a, ok := r.MapTurnStrings(r.Turns[0], red)
	b, _ := r.MapTurnStrings(r.Turns[1], red)
	if !ok || strings.Contains(a.Text, "secret") || strings.Contains(b.Text, "secret") || a.Extra != r.Turns[0].Extra ||
		!reflect.DeepEqual(a.CallIDs, []string{"c1"}) || b.AnswersID != "c1" {
		t.Fatalf("mapped: %+v / %+v", a, b)
	}
	out := string(r.AppendJSON(nil, []Turn{a, b}))
	want := `{"messages": [{"role": "assistant", "content": [{"type": "text", "text": "key=[R]"}, {"type": "image_url", "image_url": {"url": "data:x"}}], "reasoning_content": "the [R]", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"cmd\": \"echo [R]\"}"}}]}, {"role": "tool", "tool_call_id": "c1", "content": "[R] out"}]}`
	if out != want {
		t.Fatalf("got  %s\nwant %s", out, want)
	}
	if same, ok := r.MapTurnStrings(r.Turns[1], func(s string) (string, bool) { return s, false }); ok || &same.Raw[0] != &r.Turns[1].Raw[0] {
		t.Fatal("unchanged turn was copied")
	}
}

func TestContentJSONAndListWithout(t *testing.T) {
	line := `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"a.png"}},{"type":"text","text":"hi"}]},{"role":"assistant","content":"<image> x"},{"role":"tool","tool_call_id":"c"}],"images":["a.png",  "b.png",  "c.png"],"n":"s"}`
	r := mustDecode(t, line, Schema{})
	for i, want := range []string{`[{"type":"image_url","image_url":{"url":"a.png"}},{"type":"text","text":"hi"}]`, `"<image> x"`, ""} {
		if got := string(r.Turns[i].Content()); got != want {
			t.Errorf("turn %d: Content %q, want %q", i, got, want)
		}
	}
	if r.Turns[2].Content() != nil {
		t.Error("a turn without content has Content")
	}
	u, ok := r.SetContentJSON(r.Turns[0], []byte(`[{"type":"text","text":"[image removed]"},{"type":"text","text":"hi"}]`))
	if !ok || u.Text != "[image removed]\nhi" || u.Extra != 0 || !u.Made() {
		t.Fatalf("SetContentJSON: %v %+v", ok, u)
	}
	tl, ok := r.SetContentJSON(r.Turns[2], []byte(`"added"`))
	if !ok || tl.Text != "added" || tl.AnswersID != "c" {
		t.Fatalf("SetContentJSON on a turn without content: %v %+v", ok, tl)
	}
	for _, bad := range []string{`[{"type":`, `{"a":1}`, `[1]`} {
		if _, ok := r.SetContentJSON(r.Turns[0], []byte(bad)); ok {
			t.Errorf("SetContentJSON accepted %s", bad)
		}
	}
	f, ok := r.ListWithout("images", func(i int) bool { return i != 2 })
	if !ok || f.Key != "images" || string(f.Value) != `["c.png"]` {
		t.Fatalf("ListWithout: %v %q", ok, f.Value)
	}
	f, _ = r.ListWithout("images", func(i int) bool { return i == 1 })
	if string(f.Value) != `["a.png",  "c.png"]` {
		t.Fatalf("ListWithout keeps the separators: %q", f.Value)
	}
	if _, ok := r.ListWithout("n", func(int) bool { return true }); ok {
		t.Error("ListWithout on a string")
	}
	out := r.AppendJSON(nil, []Turn{u, r.Turns[1], tl}, f)
	want := `{"messages":[{"role":"user","content":[{"type":"text","text":"[image removed]"},{"type":"text","text":"hi"}]},{"role":"assistant","content":"<image> x"},{"role":"tool","tool_call_id":"c","content":"added"}],"images":["a.png",  "c.png"],"n":"s"}`
	if string(out) != want {
		t.Fatalf("got  %s\nwant %s", out, want)
	}
}
