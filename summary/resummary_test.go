package summary

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestSummaryHelpers(t *testing.T) {
	s := "\n" + Prefix + " did A, then B.\n" + EndMarker + "\ntrailing"
	if !IsSummary(s) || IsSummary("text "+Prefix) || SummaryBody(s) != "did A, then B." {
		t.Fatalf("IsSummary/SummaryBody wrong: %q", SummaryBody(s))
	}
}

// TestDeterministicFoldsEarlier: an earlier summary among the turns is
// carried line by line into one updated summary (ours and an LLM's).
func TestDeterministicFoldsEarlier(t *testing.T) {
	earlierOurs := Prefix + " 30 turns (4–33) condensed. 12 tool calls, 1 errors.\nTools: bash ×10, read_file ×2\n[5 call] bash(command=make test)\n[6 error] FAIL: TestX\n[9 call] same as turn 5\nAlso named: src/x.go; go vet ./...;"
	earlierLLM := Prefix + " Goal: fix the build.\nCompleted actions: ran make test (bash).\n" + EndMarker
	for _, earlier := range []string{earlierOurs, earlierLLM} {
		line := `{"conversations": [{"from": "human", "value": ` + quote(earlier) + `},` +
			`{"from": "gpt", "value": "<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\": \"go test ./x\"}}\n</tool_call>"},` +
			`{"from": "tool", "value": "ok"}]}`
		r := shareGPT(t, line)
		res, _ := Deterministic{Counter: wordCounter{}}.Summarize(context.Background(), Request{Turns: r.Turns, Start: 4, TargetTokens: 300})
		if strings.Count(res.Text, Prefix) != 1 || strings.Contains(res.Text, EndMarker) || strings.Contains(res.Text, "[4 user]") {
			t.Errorf("nested or quoted earlier summary:\n%s", res.Text)
		}
		want := []string{"Completed actions: ran make test (bash).", "[5 call] bash(command=go test ./x)"}
		if earlier == earlierOurs {
			want = []string{"Tools: bash ×11, read_file ×2", "[earlier call] bash(command=make test)", "[earlier error] FAIL: TestX", "src/x.go", "go vet ./..."}
		}
		for _, w := range want {
			if !strings.Contains(res.Text, w) {
				t.Errorf("summary lacks %q:\n%s", w, res.Text)
			}
		}
	}
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }
