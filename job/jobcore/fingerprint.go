package jobcore

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"

	"github.com/trajcompress/trajcompress/config"
	"github.com/trajcompress/trajcompress/task"
	"github.com/zeebo/xxh3"
)

// ConfigFingerprint is the effective config as the metrics' run block
// records it, and its fingerprint (as [Run] computes them for a run
// without a sample).
func ConfigFingerprint(cfg config.Config) (json.RawMessage, string) {
	return SampledConfigFingerprint(cfg, nil)
}

// SampledConfigFingerprint returns the effective config as JSON, and a sha256 over the
// settings that can change the output: not the worker counts, request
// limits, cache location or output names, nor the LLM settings when the
// deterministic summarizer is in use; sampling is included (it changes
// which records are processed).
func SampledConfigFingerprint(cfg config.Config, sample *Sample) (json.RawMessage, string) {
	full, _ := json.Marshal(cfg) // plain data: cannot fail
	fp := struct {
		Config  config.Config `json:"config"`
		Percent float64       `json:"sample_percent,omitempty"`
		Seed    uint64        `json:"sample_seed,omitempty"`
	}{Config: OutputSettings(cfg)}
	if sample != nil {
		fp.Percent, fp.Seed = sample.Percent, sample.Seed
	}
	b, _ := json.Marshal(fp)
	sum := sha256.Sum256(b)
	return full, "sha256:" + hex.EncodeToString(sum[:])
}

// OutputSettings is cfg with the settings that cannot change the output
// zeroed: what the config fingerprint hashes.
func OutputSettings(cfg config.Config) config.Config {
	c := cfg
	c.Processing.NumWorkers, c.Processing.MaxConcurrentRequests = 0, 0
	c.Summarization.CacheDir, c.Summarization.RPM, c.Summarization.TPM = "", 0, 0
	c.Metrics.OutputFile, c.Output.OutputSuffix = "", ""
	if c.Summarization.Method == "deterministic" {
		c.Summarization = config.Summarization{Method: c.Summarization.Method}
		c.Processing.PerTrajectoryTimeout = 0
	}
	return c
}

func inputFingerprint(h *xxh3.Hasher) string {
	sum := h.Sum128().Bytes()
	return "xxh3-128:" + hex.EncodeToString(sum[:])
}

// BlockHasher cuts the bytes written to it, which start on a block
// boundary, into fingerprint blocks (package task) and keeps the xxh3-64
// of each.
type BlockHasher struct {
	h      *xxh3.Hasher
	n      int64 // bytes of the current block
	blocks []string
}

// NewBlockHasher starts the block hashes of one input.
func NewBlockHasher() *BlockHasher { return &BlockHasher{h: xxh3.New()} }

func (b *BlockHasher) Write(p []byte) (int, error) {
	total := len(p)
	for len(p) > 0 {
		k := min(int64(len(p)), task.BlockSize-b.n)
		b.h.Write(p[:k])
		b.n += k
		p = p[k:]
		if b.n == task.BlockSize {
			b.cut()
		}
	}
	return total, nil
}

func (b *BlockHasher) cut() {
	var sum [8]byte
	binary.BigEndian.PutUint64(sum[:], b.h.Sum64())
	b.blocks = append(b.blocks, hex.EncodeToString(sum[:]))
	b.h.Reset()
	b.n = 0
}

// Done returns the block hashes, the last (partial) block included.
func (b *BlockHasher) Done() []string {
	if b.n > 0 {
		b.cut()
	}
	return b.blocks
}

// BlockHashes returns the fingerprint block hashes (package task's
// blocks, as a task of a run hashes them) of the bytes of r, which start
// on a block boundary: a runner other than Run computes the run's input
// fingerprint with them and [Fingerprint].
func BlockHashes(r io.Reader) ([]string, error) {
	b := NewBlockHasher()
	_, err := io.Copy(b, r)
	return b.Done(), err
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
