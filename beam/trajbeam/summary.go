package trajbeam

import (
	"github.com/trajcompress/trajcompress/metrics"
)

// summaryFn is the CombineFn of the run's metrics: the accumulator, the
// input and the output are metrics.Summary values, merged exactly
// (Summary.Merge is exact and order-independent, so however the runner
// splits and lifts the combine, the result equals the Summary of one
// process that observed every record). Its coder is the Summary's exact
// state (encodeSummary).
type summaryFn struct{}

func (summaryFn) CreateAccumulator() *metrics.Summary { return &metrics.Summary{} }

func (summaryFn) AddInput(acc, in *metrics.Summary) *metrics.Summary {
	acc.Merge(in)
	return acc
}

func (summaryFn) MergeAccumulators(a, b *metrics.Summary) *metrics.Summary {
	a.Merge(b)
	return a
}

func (summaryFn) ExtractOutput(acc *metrics.Summary) *metrics.Summary { return acc }

// encodeSummary and decodeSummary are the Beam coder of *metrics.Summary:
// its exact state (Summary.MarshalState), not the rounded report.
func encodeSummary(s *metrics.Summary) ([]byte, error) { return s.MarshalState() }

func decodeSummary(b []byte) (*metrics.Summary, error) {
	s := &metrics.Summary{}
	if err := s.UnmarshalState(b); err != nil {
		return nil, err
	}
	return s, nil
}
