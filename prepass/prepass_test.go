package prepass

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/tokenize"
	"github.com/trajcompress/trajcompress/traj"
)

func counter(t testing.TB) tokenize.Counter {
	c, err := tokenize.New("chars4")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func decode(t testing.TB, v any) *traj.Record {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	r, err := traj.Decode(b, traj.Pos{File: "t", Line: 1}, traj.Schema{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

type m = map[string]any

func oaCall(id, name, args string) m {
	return m{"id": id, "type": "function", "function": m{"name": name, "arguments": args}}
}

// The block tags, as the tests look for them.
const (
	respOpen  = "<tool_response>"
	respClose = "</tool_response>"
	callOpen  = "<tool_call>"
	callClose = "</tool_call>"
)

// argsJSON is the JSON text of raw arguments: decoded when they are a
// JSON string.
func argsJSON(v []byte) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(v)
}

func never(int) bool { return false }

func big(line string, n int) string { return strings.Repeat(line+"\n", n) }

func TestDuplicates(t *testing.T) {
	out := big("same output line", 50)
	rec := decode(t, m{"messages": threeRuns(out, m{"role": "assistant", "content": "done"})})
	turns, rep := Apply(rec, rec.Turns, 1, 5, never, Config{Counter: counter(t), DigestOver: 1 << 20})
	if turns[2].Text != BackRef(6) || turns[4].Text != BackRef(6) || turns[6].Text != out {
		t.Fatalf("turns 2, 4, 6: %q %q %q", turns[2].Text, turns[4].Text, clip(turns[6].Text, 20))
	}
	if rep.Changes[Duplicates] != 2 || rep.Saved[Duplicates] <= 0 || rep.Fits {
		t.Fatalf("report %+v", rep)
	}
	if turns[2].AnswersID != "a" || turns[4].AnswersID != "b" {
		t.Fatal("tool_call_id changed")
	}
	if &rec.Turns[2] == &turns[2] || rec.Turns[2].Text != out {
		t.Fatal("input turns modified")
	}
}

// threeRuns is a user turn, then three identical terminal calls and
// results (turns 1-6), then more.
func threeRuns(out string, more ...m) []m {
	turns := []m{{"role": "user", "content": "u"}}
	for _, id := range []string{"a", "b", "c"} {
		turns = append(turns,
			m{"role": "assistant", "content": nil, "tool_calls": []m{oaCall(id, "terminal", `{"command":"ls"}`)}},
			m{"role": "tool", "tool_call_id": id, "content": out})
	}
	return append(turns, more...)
}

func TestStopsWhenFits(t *testing.T) {
	out := big("same output line", 50)
	rec := decode(t, m{"messages": threeRuns(out)})
	asked := 0
	fits := func(saved int) bool { asked++; return saved > 0 }
	turns, rep := Apply(rec, rec.Turns, 1, 7, fits, Config{Counter: counter(t)})
	if rep.Changes[Duplicates] != 1 || !rep.Fits || turns[4].Text != out || asked != 2 {
		t.Fatalf("report %+v, asked %d, turn 4 %q", rep, asked, clip(turns[4].Text, 30))
	}
	// Already fitting: nothing is done.
	turns, rep = Apply(rec, rec.Turns, 1, 7, func(int) bool { return true }, Config{Counter: counter(t)})
	if !rep.Fits || rep.Total() != 0 || &turns[0] != &rec.Turns[0] {
		t.Fatalf("fitting record changed: %+v", rep)
	}
}

func hermesCall(name string, args any) string {
	b, _ := json.Marshal(m{"name": name, "arguments": args})
	return "<tool_call>\n" + string(b) + "\n</tool_call>"
}

func hermesResp(id, name string, content any) string {
	b, _ := json.Marshal(m{"tool_call_id": id, "name": name, "content": content})
	return "<tool_response>\n" + string(b) + "\n</tool_response>"
}

func TestDigests(t *testing.T) {
	term := m{"output": big("compiling", 200) + "error: cannot find symbol Foo\n" + big("more", 10), "exit_code": 1, "error": nil}
	read := m{"content": big("   1|text of the file", 300)}
	search := m{"total_count": 37, "matches": strings.Split(big("src/A.java:12: Foo foo = new Foo();", 37), "\n")}
	web := big("<html>page</html>", 200)
	other := big("first\nsecond", 200)
	rec := decode(t, m{"conversations": []m{
		{"from": "human", "value": "go"},
		{"from": "gpt", "value": "<think>x</think>" + hermesCall("terminal", m{"command": "mvn -q compile"}) + hermesCall("read_file", m{"path": "/src/A.java", "offset": 10, "limit": 300})},
		{"from": "tool", "value": hermesResp("t1", "terminal", term) + "\n" + hermesResp("t2", "read_file", read)},
		{"from": "gpt", "value": hermesCall("search", m{"pattern": "Foo", "path": "/src"}) + hermesCall("web_extract", m{"urls": []string{"https://example.com/a", "https://example.com/b"}}) + hermesCall("memory", m{"action": "add"})},
		{"from": "tool", "value": hermesResp("t3", "search", search) + hermesResp("t4", "web_extract", web) + hermesResp("t5", "memory", other)},
		{"from": "gpt", "value": "done"},
	}})
	turns, rep := Apply(rec, rec.Turns, 1, 5, never, Config{Counter: counter(t), DigestOver: 5})
	res := model(rec, turns)
	want := []string{
		"[trajcompress digest of a 2331-byte terminal result] command: mvn -q compile; exit code 1; lines: 211; errors: error: cannot find symbol Foo",
		"[trajcompress digest of a 6914-byte read_file result] path: /src/A.java; lines: 10-309",
		"[trajcompress digest of a 1439-byte search result] pattern: Foo; path: /src; matches: 37",
		"[trajcompress digest of a 3600-byte web_extract result] url: https://example.com/a (+1 more)",
		"[trajcompress digest of a 2600-byte memory result] first line: first",
	}
	if len(res) != len(want) {
		t.Fatalf("%d results", len(res))
	}
	for i, r := range res {
		if r.body != want[i] {
			t.Errorf("result %d:\n got %q\nwant %q", i, r.body, want[i])
		}
	}
	if rep.Changes[Digests] != 5 || rep.Saved[Digests] <= 0 {
		t.Fatalf("report %+v", rep)
	}
	// The responses keep their ids and names; the blocks stay where they were.
	if !strings.Contains(turns[2].Text, `"tool_call_id":"t1"`) || strings.Count(turns[4].Text, respOpen) != 3 {
		t.Fatalf("turn 2: %s", turns[2].Text)
	}
}

func TestShrinkArguments(t *testing.T) {
	long := strings.Repeat("x = compute(y) ", 200)
	args := fmt.Sprintf(`{"path": "/very/long/%s/file.py", "content": %q, "id": %q, "n": 12345678901234567890, "ok": true, "none": null, "note": "ünïcödé ✓ %s"}`,
		strings.Repeat("d", 500), long, strings.Repeat("7", 400), strings.Repeat("é", 400))
	rec := decode(t, m{"messages": []m{
		{"role": "user", "content": "u"},
		{"role": "assistant", "content": nil, "tool_calls": []m{oaCall("a", "write_file", args), oaCall("b", "raw", "not json "+long)}},
		{"role": "tool", "tool_call_id": "a", "content": "ok"},
		{"role": "tool", "tool_call_id": "b", "content": "ok"},
		{"role": "user", "content": "u2"},
	}})
	turns, rep := Apply(rec, rec.Turns, 1, 4, never, Config{Counter: counter(t), ArgsOver: 50, LeafKeep: 30})
	if rep.Changes[Arguments] != 1 || rep.Saved[Arguments] <= 0 {
		t.Fatalf("report %+v", rep)
	}
	got := rec.CallArguments(turns[1])
	var s string
	if err := json.Unmarshal(got[0], &s); err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("shrunk arguments are not JSON: %v\n%s", err, s)
	}
	if v["path"] != "/very/long/"+strings.Repeat("d", 500)+"/file.py" || v["id"] != strings.Repeat("7", 400) || v["ok"] != true || v["none"] != nil {
		t.Errorf("kept values changed: %s", s)
	}
	if !strings.Contains(s, "12345678901234567890") || !strings.Contains(s, "ünïcödé ✓ éé") || strings.Contains(s, `\u`) {
		t.Errorf("numbers or Unicode not as written: %s", s)
	}
	if c := v["content"].(string); !strings.Contains(c, "characters cut by trajcompress") || len(c) > 200 {
		t.Errorf("content not cut: %q", c)
	}
	if string(got[1]) != string(rec.CallArguments(rec.Turns[1])[1]) {
		t.Error("non-JSON arguments changed")
	}
	if strings.Join(turns[1].CallIDs, ",") != "a,b" {
		t.Error("call ids changed")
	}
}

func TestShrinkHermesCall(t *testing.T) {
	long := strings.Repeat("line of a file\n", 100)
	rec := decode(t, m{"conversations": []m{
		{"from": "human", "value": "go"},
		{"from": "gpt", "value": "Writing." + hermesCall("write_file", m{"path": "a.txt", "content": long})},
		{"from": "tool", "value": hermesResp("", "write_file", "ok")},
		{"from": "human", "value": "next"},
	}})
	turns, rep := Apply(rec, rec.Turns, 1, 3, never, Config{Counter: counter(t), ArgsOver: 50, LeafKeep: 30})
	if rep.Changes[Arguments] != 1 {
		t.Fatalf("report %+v", rep)
	}
	cs := calls(rec, turns[1], 1)
	if len(cs) != 1 || cs[0].name != "write_file" || !strings.HasPrefix(turns[1].Text, "Writing.<tool_call>\n{") {
		t.Fatalf("turn: %q", turns[1].Text)
	}
	var a map[string]string
	if err := json.Unmarshal([]byte(cs[0].args), &a); err != nil || a["path"] != "a.txt" || len(a["content"]) > 100 {
		t.Fatalf("args %q: %v", cs[0].args, err)
	}
}

func TestOutsideMiddleUntouched(t *testing.T) {
	out := big("same", 200)
	rec := decode(t, m{"messages": []m{
		{"role": "assistant", "content": nil, "tool_calls": []m{oaCall("a", "terminal", `{"command":"ls"}`)}},
		{"role": "tool", "tool_call_id": "a", "content": out},
		{"role": "assistant", "content": nil, "tool_calls": []m{oaCall("b", "terminal", `{"command":"ls"}`)}},
		{"role": "tool", "tool_call_id": "b", "content": out},
	}})
	turns, rep := Apply(rec, rec.Turns, 2, 2, never, Config{Counter: counter(t), DigestOver: 1})
	if rep.Total() != 0 || turns[1].Text != out {
		t.Fatalf("empty middle changed something: %+v", rep)
	}
}

func TestShrinkJSON(t *testing.T) {
	tests := []struct {
		name, in, want string
		changed, ok    bool
	}{
		{"short leaves", `{"a": "bc", "n": [1, 2.5e3, true, null]}`, `{"a": "bc", "n": [1, 2.5e3, true, null]}`, false, true},
		{"cut", `{"k":"abcdefghijklmnop"}`, `{"k":"abcd…[10 characters cut by trajcompress]…op"}`, true, true},
		{"key kept", `{"abcdefghijklmnop":"x"}`, `{"abcdefghijklmnop":"x"}`, false, true},
		{"nested array", `[{"k":["abcdefghijklmnop"]}]`, `[{"k":["abcd…[10 characters cut by trajcompress]…op"]}]`, true, true},
		{"path kept", `{"k":"/a/bcdefghijklmnop"}`, `{"k":"/a/bcdefghijklmnop"}`, false, true},
		{"file key kept", `{"file":"a bcdefghijklmnop"}`, `{"file":"a bcdefghijklmnop"}`, false, true},
		{"not JSON", `abcdefghijklmnop`, `abcdefghijklmnop`, false, false},
		{"scalar", `"abcdefghijklmnop"`, `"abcdefghijklmnop"`, false, false},
		{"two values", `{} {}`, `{} {}`, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, changed, ok := shrinkJSON(tt.in, 6)
			if got != tt.want || changed != tt.changed || ok != tt.ok {
				t.Errorf("shrinkJSON(%q) = %q, %v, %v; want %q, %v, %v", tt.in, got, changed, ok, tt.want, tt.changed, tt.ok)
			}
		})
	}
}
