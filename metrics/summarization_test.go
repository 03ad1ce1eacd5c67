package metrics

import (
	"bytes"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/outcome"
)

func TestSummarizationCostAndCauses(t *testing.T) {
	var s Summary
	s.Observe(Observation{Outcome: outcome.Compressed, TokensBefore: 100, TokensAfter: 50, TurnsBefore: 10, TurnsAfter: 5,
		Region: &[2]int{2, 7}, SummaryCalls: 2, SummaryErrors: 1, PromptTokens: 1_000_000, CompletionTokens: 500_000})
	s.Observe(Observation{Outcome: outcome.Compressed, TokensBefore: 100, TokensAfter: 60, TurnsBefore: 10, TurnsAfter: 5,
		Region: &[2]int{2, 7}, Fallback: true})
	misses := int64(2)
	rep := s.Report(RunInfo{Summarizer: "llm", Model: "m", PriceIn: 0.5, PriceOut: 2,
		RetriesByCause: map[string]int64{"rate_limit": 1}, CacheMisses: &misses})
	var b bytes.Buffer
	if err := rep.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"cost_usd": 1.5`, `"fallbacks": 1`, `"rate_limit": 1`, `"method": "llm"`, `"cache_misses": 2`, `"success_rate": 0.5`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %s:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "estimated") {
		t.Error("estimated must be absent outside a dry run")
	}
}
