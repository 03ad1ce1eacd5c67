package trajbeam

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/zeebo/xxh3"

	"github.com/trajcompress/trajcompress/config"
	"github.com/trajcompress/trajcompress/job/jobcore"
	"github.com/trajcompress/trajcompress/metrics"
	"github.com/trajcompress/trajcompress/pipeline"
	"github.com/trajcompress/trajcompress/traj"
)

// textFn turns a line textio read into records, by the pool's JSONL
// line rule: textio ends a line at LF only, while LF, CRLF and a lone CR
// each end one for our reader, so the line is cut at every CR (a CR just
// before the LF is a CRLF's: its empty remainder is no line), and blank
// lines are dropped. A file the plan does not name (a glob's match that
// is not a source) is dropped; textGlobs only uses a directory glob that
// matches the sources exactly.
type textFn struct {
	Index map[string]int `json:"index"`
}

func (fn *textFn) ProcessElement(file, line string, emit func(Record)) {
	i, ok := fn.Index[textKey(file)]
	if !ok {
		return
	}
	for {
		part, rest, cut := strings.Cut(line, "\r")
		if strings.TrimSpace(part) != "" {
			emit(Record{Source: i, Raw: []byte(part)})
		}
		if !cut {
			return
		}
		line = rest
	}
}

// compressFn runs the pool's per-record function,
// pipeline.Compressor.Compress, built from the config by
// jobcore.NewCompressor as `trajcompress compress` builds it. Each record's
// output goes to the first output, each rejected record to the second
// (keyed by its source, to be numbered), and the metrics of the bundle, a
// metrics.Summary, to the third when the bundle finishes.
type compressFn struct {
	Config  config.Config `json:"config"`
	GroupBy string        `json:"group_by"`
	Sources []Source      `json:"sources"`

	comp *pipeline.Compressor
	sum  *metrics.Summary
}

func (fn *compressFn) Setup() error {
	var err error
	fn.comp, err = compressorFor(fn.Config, fn.GroupBy)
	return err
}

func (fn *compressFn) StartBundle(_ context.Context, _ func([]byte), _ func(int, Rejected), _ func(*metrics.Summary)) {
	fn.sum = &metrics.Summary{}
}

func (fn *compressFn) ProcessElement(ctx context.Context, r Record, out func([]byte), reject func(int, Rejected), _ func(*metrics.Summary)) error {
	if r.Source < 0 || r.Source >= len(fn.Sources) {
		return fmt.Errorf("trajbeam: record of unknown source %d", r.Source)
	}
	src := fn.Sources[r.Source]
	res, err := fn.comp.Compress(ctx, r.Raw, traj.Pos{File: src.Path, Line: r.Line, Record: r.Record})
	if err != nil {
		return err // the run must stop: cancelled, or a fatal summarizer error
	}
	if fn.GroupBy == "" {
		res.Obs.Group = src.Name // the pool labels each file's Summary with it
	}
	fn.sum.Observe(res.Obs)
	if res.Reject != nil {
		reject(r.Source, Rejected{Hash: hashOf(r.Raw), Reason: res.Reject.Reason, Detail: res.Reject.Detail})
	}
	if res.Out != nil {
		out(res.Out)
	}
	return nil
}

func (fn *compressFn) FinishBundle(_ context.Context, _ func([]byte), _ func(int, Rejected), sum func(*metrics.Summary)) {
	if fn.sum.RecordsIn() > 0 {
		sum(fn.sum)
	}
	fn.sum = nil
}

// hashOf is the hex xxh3-128 of b.
func hashOf(b []byte) string {
	h := xxh3.Hash128(b).Bytes()
	return hex.EncodeToString(h[:])
}

// compressors holds one Compressor per config in a worker process, so
// that the bundles a worker runs at once share one token memo, as the
// pool's workers do (a Compressor is safe for concurrent use).
var compressors struct {
	sync.Mutex
	m map[string]*pipeline.Compressor
}

func compressorFor(cfg config.Config, groupBy string) (*pipeline.Compressor, error) {
	key, err := json.Marshal(struct {
		C config.Config
		G string
	}{cfg, groupBy})
	if err != nil {
		return nil, err
	}
	compressors.Lock()
	defer compressors.Unlock()
	if c, ok := compressors.m[string(key)]; ok {
		return c, nil
	}
	c, _, err := jobcore.NewCompressor(cfg, false, groupBy)
	if err != nil {
		return nil, err
	}
	if compressors.m == nil {
		compressors.m = map[string]*pipeline.Compressor{}
	}
	compressors.m[string(key)] = c
	return c, nil
}
