package metrics

import "github.com/trajcompress/trajcompress/snap"

// TrajectoryMetrics is the per-trajectory compression_metrics object in the
// peer's layout (PEER.md §7), keys in the peer's order. The pipeline appends
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
// describes: o.Region is the planned region (snap.Plan Start and End), the
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
		WasCompressed:         o.Outcome == snap.Compressed || o.Outcome == snap.CompressedOverLimit,
		StillOverLimit:        o.Outcome == snap.CompressedOverLimit || o.Outcome == snap.Uncompressible || o.Outcome == snap.SummaryFailed,
		SkippedUnderTarget:    o.Outcome == snap.SkippedUnderTarget,
		SummarizationAPICalls: o.SummaryCalls,
		SummarizationErrors:   o.SummaryErrors,
	}
	if r := o.Region; r != nil {
		m.CompressionRegion = RegionMetrics{StartIdx: r[0], EndIdx: r[1], TurnsCount: r[1] - r[0]}
	}
	return m
}
