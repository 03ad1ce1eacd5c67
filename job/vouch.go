package job

import (
	"encoding/hex"
	"fmt"
	"path/filepath"

	"github.com/zeebo/xxh3"

	"github.com/trajcompress/trajcompress/check/checkfile"
	"github.com/trajcompress/trajcompress/format"
	"github.com/trajcompress/trajcompress/metrics"
)

// vouched is an output the metrics vouch for: its final path, and its
// size and hash, taken as it is written (JSONL: the records and their
// newlines are the file's bytes) or from the staged file once closed
// (Parquet, Arrow).
type vouched struct {
	path   string
	staged string // read after Close when h is nil and sum ""
	h      *xxh3.Hasher
	n      int64
	sum    string // the hash (hex), when known before (a segment renamed into place)
}

// hashing is a JSONL writer that hashes what it writes.
type hashing struct {
	format.Writer
	v *vouched
}

var newline = []byte{'\n'}

func (w hashing) Write(rec []byte) error {
	if err := w.Writer.Write(rec); err != nil {
		return err
	}
	w.v.h.Write(rec)
	w.v.h.Write(newline)
	w.v.n += int64(len(rec)) + 1
	return nil
}

// vouch registers the output at path, staged at staged, written as
// format fmtName through w, and returns the writer to use.
func (a *assembler) vouch(path, staged, fmtName string, w format.Writer) format.Writer {
	v := &vouched{path: path, staged: staged}
	a.vouched = append(a.vouched, v)
	if fmtName != format.JSONL {
		return w
	}
	v.h = xxh3.New()
	return hashing{w, v}
}

// hexSum is the hash of what h was given, as markers and the metrics
// record it: hex xxh3-128.
func hexSum(h *xxh3.Hasher) string {
	b := h.Sum128().Bytes()
	return hex.EncodeToString(b[:])
}

// outputs lists the vouched outputs for the metrics at metricsPath, with
// paths relative to its directory.
func (a *assembler) outputs(metricsPath string) ([]metrics.OutputFile, error) {
	base, _ := filepath.Abs(filepath.Dir(metricsPath))
	var out []metrics.OutputFile
	for _, v := range a.vouched {
		n, sum := v.n, v.sum
		switch {
		case sum != "": // known already
		case v.h != nil:
			sum = hexSum(v.h)
		default:
			var err error
			if n, sum, err = checkfile.Hash(v.staged); err != nil {
				return nil, fmt.Errorf("output %s: %w", v.path, err)
			}
		}
		p, _ := filepath.Abs(v.path)
		if rel, err := filepath.Rel(base, p); err == nil {
			p = rel
		}
		out = append(out, metrics.OutputFile{Path: filepath.ToSlash(p), Bytes: n, XXH3: sum})
	}
	return out, nil
}
