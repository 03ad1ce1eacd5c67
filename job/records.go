package job

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"unicode/utf8"

	"github.com/zeebo/xxh3"

	"github.com/trajcompress/trajcompress/config"
	"github.com/trajcompress/trajcompress/format"
	"github.com/trajcompress/trajcompress/pipeline"
)

// RejectLine is one line of the rejects file: where the line came from
// (and, in a JSON array, the record's index), why it was rejected, and the
// line itself ("raw" when it is valid UTF-8, "raw_base64" otherwise, so
// nothing is lost).
func RejectLine(r *pipeline.Reject) []byte {
	type line struct {
		File      string `json:"file"`
		Line      int64  `json:"line"`
		Record    int64  `json:"record,omitempty"`
		Reason    string `json:"reason"`
		Detail    string `json:"detail,omitempty"`
		Raw       string `json:"raw,omitempty"`
		RawBase64 string `json:"raw_base64,omitempty"`
	}
	l := line{File: r.Pos.File, Line: r.Pos.Line, Record: r.Pos.Record, Reason: r.Reason, Detail: r.Detail}
	if utf8.Valid(r.Raw) {
		l.Raw = string(r.Raw)
	} else {
		l.RawBase64 = base64.StdEncoding.EncodeToString(r.Raw)
	}
	b, _ := json.Marshal(l) // strings only: cannot fail
	return b
}

// sampleLines picks k = max(1, ⌊n·pct/100⌋) of the n records of path,
// reproducibly from (seed, file index), and returns their 0-based record
// indices as a set. Records keep their input order.
func sampleLines(ctx context.Context, path string, pct float64, seed uint64, fileIdx int, maxRecord int64) (map[int64]bool, error) {
	rd, err := format.Open(path, format.Options{MaxRecordBytes: maxRecord}) // a record too long counts, unread
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	var n int64
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		_, _, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil && !tooLarge(err) {
			return nil, err
		}
		n++
	}
	keep := map[int64]bool{}
	if n == 0 {
		return keep, nil
	}
	k := max(1, int64(float64(n)*pct/100))
	rng := rand.New(rand.NewPCG(seed, uint64(fileIdx)))
	// Floyd's algorithm: k distinct indices in O(k).
	for j := n - k; j < n; j++ {
		t := rng.Int64N(j + 1)
		if keep[t] {
			keep[j] = true
		} else {
			keep[t] = true
		}
	}
	return keep, nil
}

// tooLarge reports whether err is the per-record error of a record too
// long to read (pipeline.TooLarge), which a reader goes on after.
func tooLarge(err error) bool {
	var big pipeline.TooLarge
	return errors.As(err, &big)
}

// sampledSource passes on only the records whose index is in keep.
type sampledSource struct {
	src  pipeline.Source
	keep map[int64]bool
	idx  int64
}

func (s *sampledSource) Next() ([]byte, int64, error) {
	for {
		b, line, err := s.src.Next()
		if err != nil && !tooLarge(err) {
			return nil, 0, err
		}
		i := s.idx
		s.idx++
		if s.keep[i] {
			return b, line, err
		}
	}
}

// Record is the source's record index (see pipeline.Indexed).
func (s *sampledSource) Record() int64 {
	if ix, ok := s.src.(pipeline.Indexed); ok {
		return ix.Record()
	}
	return 0
}

// fingerprint returns the effective config as JSON, and a sha256 over the
// settings that can change the output: not the worker counts, request
// limits, cache location or output names, nor the LLM settings when the
// deterministic summarizer is in use; sampling is included (it changes
// which records are processed).
func fingerprint(cfg config.Config, sample *Sample) (json.RawMessage, string) {
	full, _ := json.Marshal(cfg) // plain data: cannot fail
	fp := struct {
		Config  config.Config `json:"config"`
		Percent float64       `json:"sample_percent,omitempty"`
		Seed    uint64        `json:"sample_seed,omitempty"`
	}{Config: outputSettings(cfg)}
	if sample != nil {
		fp.Percent, fp.Seed = sample.Percent, sample.Seed
	}
	b, _ := json.Marshal(fp)
	sum := sha256.Sum256(b)
	return full, "sha256:" + hex.EncodeToString(sum[:])
}

// outputSettings is cfg with the settings that cannot change the output
// zeroed: what the config fingerprint hashes.
func outputSettings(cfg config.Config) config.Config {
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
