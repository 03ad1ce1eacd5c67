package job

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"

	"github.com/trajcompress/trajcompress/format"
	"github.com/trajcompress/trajcompress/pipeline"
)

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
