package metrics_test

import (
	"os"

	"github.com/trajcompress/trajcompress/metrics"
	"github.com/trajcompress/trajcompress/outcome"
)

func ExampleSummary_Human() {
	var s metrics.Summary
	s.Observe(metrics.Observation{Outcome: outcome.SkippedUnderTarget, TokensBefore: 900, TurnsBefore: 6})
	s.Observe(metrics.Observation{Outcome: outcome.Compressed, TokensBefore: 20000, TokensAfter: 9000, TurnsBefore: 40, TurnsAfter: 9})
	s.Observe(metrics.Observation{Outcome: outcome.Uncompressible, Reason: string(outcome.NoMiddle), TokensBefore: 16000, TurnsBefore: 4})
	s.Observe(metrics.Observation{Outcome: outcome.Invalid, RejectReason: "not JSON"})
	s.Human(os.Stdout)
	// Output:
	// outcome                records  share
	// skipped_under_target   1        25.0%
	// compressed             1        25.0%
	// compressed_over_limit  0        0.0%
	// uncompressible         1        25.0%
	//   no_middle            1        25.0%
	// summary_failed         0        0.0%
	// invalid                1        25.0%
	// failed to fit          1        25.0%
	// records: 4 in, 3 out, 1 rejected
	// tokens:  36900 before, 25900 after, 11000 saved (ratio 0.7019)
}

func ExampleSummary_Merge() {
	var worker1, worker2, total metrics.Summary
	worker1.Observe(metrics.Observation{Outcome: outcome.Compressed, TokensBefore: 30000, TokensAfter: 15000, TurnsBefore: 50, TurnsAfter: 10})
	worker2.Observe(metrics.Observation{Outcome: outcome.SkippedUnderTarget, TokensBefore: 1000, TurnsBefore: 5})
	total.Merge(&worker1)
	total.Merge(&worker2)
	r := total.Report(metrics.RunInfo{Tokenizer: "o200k_base"})
	os.Stdout.WriteString(r.Averages.AvgCompressionRatio.String() + " " + r.Tokens.OverallCompressionRatio.String() + "\n")
	// Output: 0.5 0.5161
}
