package job

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"

	"github.com/zeebo/xxh3"

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
	comp, _, err := compressor(cfg, counter, dryRun, groupBy, nil)
	if err != nil {
		return nil, nil, err
	}
	return comp, counter, nil
}

// WalkInputs lists the input files under the directory root, relative to
// it, in the order a run reads them (hidden entries left out; into
// subdirectories when recursive; links to files outside root left out):
// the listing of [NewPlan]. leftOut names what could look like data but is
// not read, each with the reason.
func WalkInputs(root string, recursive bool) (files, leftOut []string, err error) {
	files, _, leftOut, err = walkInputs(root, recursive, false)
	return files, leftOut, err
}

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

// BlockHashes returns the fingerprint block hashes (package task's
// blocks, as a task of a run hashes them) of the bytes of r, which start
// on a block boundary: a runner other than Run computes the run's input
// fingerprint with them and [Fingerprint].
func BlockHashes(r io.Reader) ([]string, error) {
	b := newBlockHasher()
	_, err := io.Copy(b, r)
	return b.done(), err
}

// Fingerprint is the input fingerprint of a run as Run computes it from
// its tasks: for each input file in run order, File, then Block for each
// of its blocks in order.
type Fingerprint struct{ h *xxh3.Hasher }

// NewFingerprint starts an input fingerprint.
func NewFingerprint() *Fingerprint { return &Fingerprint{h: xxh3.New()} }

// File starts the blocks of the input file at path.
func (f *Fingerprint) File(path string) { fmt.Fprintf(f.h, "%s\n", filepath.Base(path)) }

// Block adds the hash of the file's next block (as BlockHashes returns it).
func (f *Fingerprint) Block(hash string) error {
	raw, err := hex.DecodeString(hash)
	if err != nil || len(raw) != 8 {
		return fmt.Errorf("bad block hash %q", hash)
	}
	f.h.Write(raw)
	return nil
}

// String is the fingerprint, as the metrics' run block records it.
func (f *Fingerprint) String() string { return inputFingerprint(f.h) }
