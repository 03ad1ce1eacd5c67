package metrics

import (
	"testing"

	"github.com/trajcompress/trajcompress/outcome"
)

// A record left as it came (here: a template refused what compression
// made of it, after its summary was measured) reports no retention: no
// summary of its was written.
func TestLeaveClearsRetention(t *testing.T) {
	o := Observation{Outcome: outcome.Compressed, Region: &[2]int{3, 7}, Retention: Retention{Tools: 2, ToolsKept: 2, Args: 3, ArgsKept: 1}}
	o.Leave(outcome.Uncompressible, string(outcome.ChatTemplate))
	if o.Retention != (Retention{}) || o.Region != nil {
		t.Errorf("retention %+v, region %v after Leave: want none", o.Retention, o.Region)
	}
	var s Summary
	s.Observe(o)
	if got := s.Report(RunInfo{}).Retention.Regions; got != 0 {
		t.Errorf("retention.regions %d, want 0", got)
	}
}
