package summary

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/trajcompress/trajcompress/traj"
	"github.com/trajcompress/trajcompress/traj/errline"
)

// runeCounter counts one token per rune: simple, and strict enough to
// check the budget.
type runeCounter struct{}

func (runeCounter) Count(s string) int { return utf8.RuneCountInString(s) / 2 }

func shareGPT(t *testing.T, line string) *traj.Record {
	t.Helper()
	r, err := traj.Decode([]byte(line), traj.Pos{File: "t", Line: 1}, traj.Schema{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

const region = `{"conversations": [` +
	`{"from": "human", "value": "Fix the failing test in pkg/a"},` +
	`{"from": "gpt", "value": "<think>look first</think><tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"pkg/a/a_test.go\"}}\n</tool_call>"},` +
	`{"from": "tool", "value": "<tool_response>\n{\"name\": \"read_file\", \"content\": \"package a\\nfunc TestA(t *testing.T) {}\"}\n</tool_response>"},` +
	`{"from": "gpt", "value": "<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\": \"go test ./pkg/a\", \"timeout\": 30}}\n</tool_call>"},` +
	`{"from": "tool", "value": "<tool_response>\n{\"name\": \"bash\", \"content\": \"--- FAIL: TestA\\npanic: runtime error: index out of range\"}\n</tool_response>"},` +
	`{"from": "human", "value": "请用中文回答：为什么失败？"}]}`

func TestDeterministicExtracts(t *testing.T) {
	r := shareGPT(t, region)
	d := Deterministic{Counter: runeCounter{}}
	res, err := d.Summarize(context.Background(), Request{Turns: r.Turns, Start: 3, TargetTokens: 400})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		Prefix + " 6 turns (3–8) condensed. 2 tool calls, 1 errors.",
		"[3 user] Fix the failing test in pkg/a",
		"[4 call] read_file(path=pkg/a/a_test.go)",
		"[6 call] bash(command=go test ./pkg/a)",
		"[7 error] bash: --- FAIL: TestA",
		"[8 user] 请用中文回答：为什么失败？",
	} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("summary lacks %q:\n%s", want, res.Text)
		}
	}
	if strings.Count(res.Text, Prefix) != 1 || !strings.HasPrefix(res.Text, Prefix) {
		t.Errorf("prefix not exactly once at the start:\n%s", res.Text)
	}
	again, _ := d.Summarize(context.Background(), Request{Turns: r.Turns, Start: 3, TargetTokens: 400})
	if again.Text != res.Text {
		t.Error("not deterministic")
	}
}

func TestDeterministicBudget(t *testing.T) {
	r := shareGPT(t, region)
	d := Deterministic{Counter: runeCounter{}}
	prev := -1
	for _, budget := range []int{1, 5, 10, 30, 60, 90, 120, 1000} {
		res, _ := d.Summarize(context.Background(), Request{Turns: r.Turns, TargetTokens: budget})
		n := runeCounter{}.Count(res.Text)
		// Over the budget only when the summary is its prefix alone (a
		// budget smaller than the prefix).
		if n > budget && len(res.Text) > len(Prefix) {
			t.Errorf("budget %d: %d tokens:\n%s", budget, n, res.Text)
		}
		if !strings.HasPrefix(res.Text, Prefix) {
			t.Errorf("budget %d: prefix lost: %q", budget, res.Text)
		}
		if n < prev {
			t.Errorf("budget %d: a larger budget gave a shorter summary (%d < %d)", budget, n, prev)
		}
		prev = n
	}
}

func TestDeterministicOpenAI(t *testing.T) {
	line := `{"messages": [{"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "search", "arguments": "{\"query\": \"flights to Paris\"}"}}]}, {"role": "tool", "tool_call_id": "c1", "content": "Error: no flights found"}]}`
	r := shareGPT(t, line)
	res, _ := Deterministic{Counter: runeCounter{}}.Summarize(context.Background(), Request{Turns: r.Turns, TargetTokens: 300})
	for _, want := range []string{"[0 call] search(query=flights to Paris)", "[1 error] Error: no flights found"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("summary lacks %q:\n%s", want, res.Text)
		}
	}
}

func TestClip(t *testing.T) {
	cases := []struct {
		in   string
		n    int
		want string
	}{
		{"  a \n\t b  ", 10, "a b"},
		{"abcdef", 3, "abc…"},
		{"中文字符串", 2, "中文…"},
		{"a b", 1, "a…"},
	}
	for _, c := range cases {
		if got := clip(c.in, c.n); got != c.want {
			t.Errorf("clip(%q,%d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

// TestResultPartsAsWhole: a result read in its two parts gives what the
// joined "name: text" gives, for the clip and the error search, across
// the window sizes.
func TestResultPartsAsWhole(t *testing.T) {
	texts := []string{"", "ok", "  spaced   out  ", strings.Repeat("x", 2*errline.Window+5) + "\nError: late\n",
		"Error: early\n" + strings.Repeat("y\n", errline.Window), strings.Repeat("z", errline.Window-3) + "\nfatal: near the cut\n" + strings.Repeat("w", errline.Window+10)}
	for _, name := range []string{"", "bash", "error", strings.Repeat("n", errline.Window+1)} {
		for _, text := range texts {
			r := result{name, text}
			if got, want := clip2(name, text, 100), clip(r.String(), 100); got != want {
				t.Errorf("clip2(%.20q, %.20q) = %q, want %q", name, text, got, want)
			}
			gl, gok := r.errorLine()
			wl, wok := errline.Find(r.String())
			if gl != wl || gok != wok {
				t.Errorf("errorLine(%.20q, %.20q) = %q %v, want %q %v", name, text, gl, gok, wl, wok)
			}
		}
	}
}

// TestDeterministicReportsTokens: with the run's counter in the request,
// the summary fits under it and Result.Tokens is its exact count; without
// one, Tokens stays 0 (unknown).
func TestDeterministicReportsTokens(t *testing.T) {
	r := shareGPT(t, region)
	d := Deterministic{Counter: runeCounter{}}
	res, _ := d.Summarize(context.Background(), Request{Turns: r.Turns, Start: 3, TargetTokens: 60, Counter: wordCounter{}})
	if n := (wordCounter{}).Count(res.Text); res.Tokens != n || n > 60 {
		t.Fatalf("Tokens = %d, the request's counter says %d (budget 60):\n%s", res.Tokens, n, res.Text)
	}
	res, _ = d.Summarize(context.Background(), Request{Turns: r.Turns, Start: 3, TargetTokens: 60})
	if res.Tokens != 0 {
		t.Fatalf("Tokens = %d without a request counter, want 0", res.Tokens)
	}
}

// wordCounter counts space-separated words: a counter unlike runeCounter,
// so a test can tell which one was used.
type wordCounter struct{}

func (wordCounter) Count(s string) int { return len(strings.Fields(s)) }

// argsSummaryByMap is argsSummary as it was before its fast paths: try
// the arguments as a JSON string, then decode them into a map.
func argsSummaryByMap(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		raw = json.RawMessage(s)
	}
	return argsByMap(raw)
}

// argsOf is the arguments' JSON text of raw, as [traj.Call].Args holds
// it: a JSON string decoded, anything else as it is.
func argsOf(raw string) string {
	var s string
	if json.Unmarshal([]byte(raw), &s) == nil {
		return s
	}
	return raw
}

func TestArgsSummaryAsByMap(t *testing.T) {
	cases := []string{
		`{"path": "a/b.go"}`, `{"command": "ls -la", "path": "x", "query": "q"}`, `{"path": "first", "path": "last"}`,
		`{"pa\u0074h": "escaped key"}`, `{"PATH": "not a key arg", "zeta": 1, "alpha": [1, {"b": "<&>"}]}`,
		`{"code": 1e21, "id": 12345678901234567890, "name": null}`, `{"query": {"nested": true}, "q": [1.50, "x"]}`,
		"{\"path\": \"bad \xff utf8 \\ud800 lone\"}", `{"file": "` + strings.Repeat("long line\n", 50) + `"}`,
		`"{\"path\": \"in a string\"}"`, `"not json"`, `null`, `[1, 2]`, `42`, `{}`, ``, `{"path": }`,
		`{"url": "https://x.y/z?q=1&r=2", "pattern": "a\tb\u00e9"}`,
		`{"path": "a", "n": 1e400}`, `{"path": 1e400}`, `"{\"path\": \"a\", \"n\": -1e400}"`, `{"path": "a", "n": [1e-400, 2]}`,
		`{"path": "a", "s": "1e400 in a string"}`, "\"{\\\"city\\\": \\\"Z\\u00fcrich\\\"}\"",
	}
	for _, c := range cases {
		if got, want := argsSummary(argsOf(c)), argsSummaryByMap(json.RawMessage(c)); got != want {
			t.Errorf("argsSummary(%.60q) = %q, by map %q", c, got, want)
		}
	}
}

func FuzzArgsSummary(f *testing.F) {
	f.Add(`{"path": "a", "command": "b"}`)
	f.Add(`"{\"query\": 1}"`)
	f.Add(`{"path": "a", "n": 1e400}`)
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := argsSummary(argsOf(s)), argsSummaryByMap(json.RawMessage(s)); got != want {
			t.Fatalf("argsSummary(%q) = %q, by map %q", s, got, want)
		}
	})
}

// TestResponseTextPlain: a tool response that is not a JSON object is
// quoted as it is (it used to panic: found in review).
func TestResponseTextPlain(t *testing.T) {
	for _, body := range []string{"plain output", "[1, 2]", "{broken", `"a string"`, "42"} {
		rs := toolResults(traj.Turn{Role: traj.RoleTool, Text: "<tool_response>\n" + body + "\n</tool_response>"})
		if len(rs) != 1 || rs[0].text != body || rs[0].name != "" {
			t.Errorf("toolResults of %q = %+v, want the body as is", body, rs)
		}
	}
	line := `{"conversations": [{"from": "human", "value": "go"}, {"from": "tool", "value": "<tool_response>\nplain output, exit code 2\n</tool_response>"}]}`
	r := shareGPT(t, line)
	res, _ := Deterministic{Counter: runeCounter{}}.Summarize(context.Background(), Request{Turns: r.Turns, TargetTokens: 400})
	if !strings.Contains(res.Text, "[1 error] plain output, exit code 2") {
		t.Errorf("summary lacks the plain tool output:\n%s", res.Text)
	}
}

// FuzzDeterministic: any turn texts (tool responses, calls, plain text)
// are summarised without panicking, within the budget, with the prefix.
func FuzzDeterministic(f *testing.F) {
	f.Add("<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}\n</tool_call>", "<tool_response>\n{\"name\": \"bash\", \"content\": \"Error: x\"}\n</tool_response>", 40)
	f.Add("<tool_call>[{\"name\": 1}]</tool_call>", "<tool_response>\nplain\n</tool_response><tool_response>", 3)
	f.Fuzz(func(t *testing.T, call, result string, budget int) {
		budget = 1 + (budget&0xffff)%500
		turns := []traj.Turn{
			{Role: traj.RoleUser, Text: result},
			{Role: traj.RoleAssistant, Text: call},
			{Role: traj.RoleTool, Text: result},
			{Role: traj.RoleAssistant, Text: call, Name: "function_call"},
			{Role: traj.RoleTool, Text: call},
		}
		res, err := Deterministic{Counter: runeCounter{}}.Summarize(context.Background(), Request{Turns: turns, Start: 1, TargetTokens: budget, Counter: runeCounter{}})
		if err != nil || !strings.HasPrefix(res.Text, Prefix[:min(len(Prefix), len(res.Text))]) {
			t.Fatalf("Summarize: %v, %q", err, res.Text)
		}
		if n := (runeCounter{}).Count(res.Text); n > budget && len(res.Text) > len(Prefix) {
			t.Fatalf("summary of %d tokens over the budget %d:\n%s", n, budget, res.Text)
		}
	})
}
