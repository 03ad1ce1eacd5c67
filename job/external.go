package job

import (
	"encoding/json"

	"github.com/trajcompress/trajcompress/config"
	"github.com/trajcompress/trajcompress/format"
	"github.com/trajcompress/trajcompress/metrics"
	"github.com/trajcompress/trajcompress/pipeline"
	"github.com/trajcompress/trajcompress/tokenize"
)

// newCounter is the token counter of a config: its tokenizer behind the
// run's memo.
func newCounter(cfg config.Config) (*tokenize.MemoCounter, error) {
	base, err := tokenize.NewRevision(cfg.Tokenizer.Name, cfg.Tokenizer.Revision)
	if err != nil {
		return nil, usagef("tokenizer.name %q: %v (set tokenizer.name in the config or pass --tokenizer)", cfg.Tokenizer.Name, err)
	}
	// 512 texts of at most 64 KiB: at most 32 MiB, plenty for the system
	// prompts and tool schemas that repeat (bench/README.md, "End to end").
	return tokenize.Memo(base, 512), nil
}

// NewCompressor builds the record path of cfg exactly as [Run] does — the
// tokenizer behind the same memo, the summarizer, the
// [pipeline.Compressor] — for a runner of records other than
// [pipeline.Run] (the Apache Beam pipeline, module beam/). The counter is
// returned for [tokenize.Describe] in the metrics' run block. A remote
// summarizer's client is built too, but its statistics are not reported:
// callers that cannot bound its requests should refuse the LLM
// summarizer.
func NewCompressor(cfg config.Config, dryRun bool, groupBy string) (*pipeline.Compressor, *tokenize.MemoCounter, error) {
	counter, err := newCounter(cfg)
	if err != nil {
		return nil, nil, err
	}
	comp, _, err := compressor(cfg, counter, dryRun, groupBy)
	if err != nil {
		return nil, nil, err
	}
	return comp, counter, nil
}

// WalkInputs lists the input files under the directory root, relative to
// it, in the order a run reads them (hidden entries left out; into
// subdirectories when recursive): the listing of [NewPlan].
func WalkInputs(root string, recursive bool) ([]string, error) { return walkInputs(root, recursive) }

// ConfigFingerprint is the effective config as the metrics' run block
// records it, and its fingerprint (as [Run] computes them for a run
// without a sample).
func ConfigFingerprint(cfg config.Config) (json.RawMessage, string) { return fingerprint(cfg, nil) }

// InputOptions are the options an input is opened with (format.Open)
// under cfg.
func InputOptions(cfg config.Config) format.Options {
	var o format.Options
	if cfg.Metrics.PerTrajectory {
		o.JSONText = []string{metrics.TrajectoryKey} // written as text by earlier versions
	}
	return o
}
