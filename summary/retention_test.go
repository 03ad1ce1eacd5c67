package summary

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

func TestRetention(t *testing.T) {
	r := shareGPT(t, region)
	cases := []struct {
		text                string
		tools, tk, args, ak int
	}{
		{"", 2, 0, 2, 0},
		{"read_file pkg/a/a_test.go", 2, 1, 2, 1},
		{"bash(command=go   test ./pkg/a) and read_file", 2, 2, 2, 1}, // blanks collapsed
		{"bashful read_files", 2, 0, 2, 0},                            // names as whole words only
	}
	for _, c := range cases {
		tools, tk, args, ak := Retention(r.Turns, c.text)
		if tools != c.tools || tk != c.tk || args != c.args || ak != c.ak {
			t.Errorf("Retention(%q) = %d %d %d %d, want %d %d %d %d", c.text, tools, tk, args, ak, c.tools, c.tk, c.args, c.ak)
		}
	}
	// OpenAI arguments as a JSON string; a long command by its first line's start.
	long := "python - <<'EOF'\\\\nimport sys\\\\nEOF"
	line := `{"messages": [{"role": "assistant", "content": null, "tool_calls": [` +
		`{"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": "{\"command\": \"` + strings.Repeat("x", 70) + `\"}"}},` +
		`{"id": "c2", "type": "function", "function": {"name": "terminal", "arguments": "{\"cmd\": \"` + long + `\"}"}}]},` +
		`{"role": "tool", "tool_call_id": "c1", "content": "ok"}, {"role": "tool", "tool_call_id": "c2", "content": "ok"}]}`
	o := shareGPT(t, line)
	tools, tk, args, ak := Retention(o.Turns, "terminal "+strings.Repeat("x", 60)+"… python - <<'EOF'")
	if tools != 1 || tk != 1 || args != 2 || ak != 2 {
		t.Errorf("OpenAI: %d %d %d %d, want 1 1 2 2", tools, tk, args, ak)
	}
}

// TestSummaryNamesManyPaths: a region of more calls than the summary can
// quote one by one still has every tool named and the paths of the calls
// that did not fit named on the "Also named" line, within the budget.
func TestSummaryNamesManyPaths(t *testing.T) {
	var turns []string
	for i := range 60 {
		turns = append(turns,
			fmt.Sprintf(`{"from": "gpt", "value": "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"src/pkg%d/file%d.go\"}}\n</tool_call>"}`, i, i),
			fmt.Sprintf(`{"from": "tool", "value": "<tool_response>\n{\"name\": \"read_file\", \"content\": \"%s\"}\n</tool_response>"}`, strings.Repeat("line of code ", 30)))
	}
	r := shareGPT(t, `{"conversations": [{"from": "human", "value": "read them all"}, `+strings.Join(turns, ", ")+`]}`)
	for _, budget := range []int{150, 300, 750} {
		res, _ := Deterministic{Counter: wordCounter{}}.Summarize(context.Background(), Request{Turns: r.Turns, TargetTokens: budget})
		if n := (wordCounter{}).Count(res.Text); n > budget {
			t.Fatalf("budget %d: %d tokens", budget, n)
		}
		tools, tk, args, ak := Retention(r.Turns, res.Text)
		if tk != tools || (budget >= 300 && ak < args) {
			t.Errorf("budget %d: tools %d/%d, paths %d/%d:\n%s", budget, tk, tools, ak, args, res.Text)
		}
		if budget == 150 && !strings.Contains(res.Text, "Also named:") {
			t.Errorf("budget 150: no Also named line:\n%s", res.Text)
		}
	}
}
