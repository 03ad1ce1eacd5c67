package metrics

import (
	"encoding/json"
	"fmt"

	"github.com/trajcompress/trajcompress/outcome"
)

// TrajectoryKey is the top-level field the per-trajectory metrics are
// written under in a compressed record.
const TrajectoryKey = "compression_metrics"

// TrajectoryMetrics is the per-trajectory compression_metrics object in the
// peer's layout (docs/peer.md §7), keys in the peer's order. The pipeline appends
// it to compressed records when per-trajectory metrics are on.
type TrajectoryMetrics struct {
	OriginalTokens        int           `json:"original_tokens"`
	CompressedTokens      int           `json:"compressed_tokens"`
	TokensSaved           int           `json:"tokens_saved"`
	CompressionRatio      Float         `json:"compression_ratio"` // round(compressed/max(original,1), 4)
	OriginalTurns         int           `json:"original_turns"`
	CompressedTurns       int           `json:"compressed_turns"`
	TurnsRemoved          int           `json:"turns_removed"`
	CompressionRegion     RegionMetrics `json:"compression_region"`
	WasCompressed         bool          `json:"was_compressed"`
	StillOverLimit        bool          `json:"still_over_limit"`
	SkippedUnderTarget    bool          `json:"skipped_under_target"`
	SummarizationAPICalls int           `json:"summarization_api_calls"`
	SummarizationErrors   int           `json:"summarization_errors"`
}

// RegionMetrics is the peer's compression_region: [StartIdx, EndIdx) in
// original turn indices; −1, −1, 0 when nothing was replaced.
type RegionMetrics struct {
	StartIdx   int `json:"start_idx"`
	EndIdx     int `json:"end_idx"`
	TurnsCount int `json:"turns_count"`
}

// NewTrajectoryMetrics returns the compression_metrics of the record o
// describes: o.Region is the replaced region (the plan's Start and End), the
// token and turn counts are those before and after assembly. WasCompressed
// is set for compressed and compressed_over_limit; StillOverLimit for every
// record written over target (compressed_over_limit, uncompressible,
// summary_failed), as in the aggregate.
func NewTrajectoryMetrics(o Observation) TrajectoryMetrics {
	o = o.normalized()
	m := TrajectoryMetrics{
		OriginalTokens:        o.TokensBefore,
		CompressedTokens:      o.TokensAfter,
		TokensSaved:           o.TokensBefore - o.TokensAfter,
		CompressionRatio:      Round(float64(o.TokensAfter)/float64(max(o.TokensBefore, 1)), 4),
		OriginalTurns:         o.TurnsBefore,
		CompressedTurns:       o.TurnsAfter,
		TurnsRemoved:          o.TurnsBefore - o.TurnsAfter,
		CompressionRegion:     RegionMetrics{StartIdx: -1, EndIdx: -1},
		WasCompressed:         o.Outcome.WasCompressed(),
		StillOverLimit:        o.Outcome.OverLimit(),
		SkippedUnderTarget:    o.Outcome == outcome.SkippedUnderTarget,
		SummarizationAPICalls: o.SummaryCalls,
		SummarizationErrors:   o.SummaryErrors,
	}
	if r := o.Region; r != nil {
		m.CompressionRegion = RegionMetrics{StartIdx: r[0], EndIdx: r[1], TurnsCount: r[1] - r[0]}
	}
	return m
}

// TrajectoryJSON returns the JSON of [NewTrajectoryMetrics](o), the value
// of the [TrajectoryKey] field.
func (o Observation) TrajectoryJSON() ([]byte, error) {
	b, err := json.Marshal(NewTrajectoryMetrics(o))
	if err != nil {
		return nil, fmt.Errorf("metrics: %s: %w", TrajectoryKey, err)
	}
	return b, nil
}
