package trajbeam

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/trajcompress/trajcompress/job/jobcore"
	"github.com/trajcompress/trajcompress/task"
)

// hashFn hashes a span of a source's fingerprint blocks (jobcore.BlockHashes:
// the blocks compress hashes), so that the metrics carry the input
// fingerprint compress computes for the same files.
type hashFn struct {
	Sources []Source `json:"sources"`
}

func (fn *hashFn) ProcessElement(ctx context.Context, sp Span, emit func(Blocks)) error {
	src := fn.Sources[sp.Source]
	r, err := openAt(ctx, src.Path, sp.First*task.BlockSize)
	if err != nil {
		return err
	}
	defer r.Close()
	hashes, err := jobcore.BlockHashes(io.LimitReader(r, (sp.End-sp.First)*task.BlockSize))
	if err != nil {
		return fmt.Errorf("%s: %w", src.Path, err)
	}
	if int64(len(hashes)) != sp.End-sp.First {
		return fmt.Errorf("%s: shorter than when the run started (%d bytes): it changed during the run", src.Path, src.Size)
	}
	emit(Blocks{Source: sp.Source, First: sp.First, Hashes: hashes})
	return nil
}

// inputFingerprint is the input fingerprint of the sources, in their
// order, from the blocks of their spans.
func inputFingerprint(srcs []Source, iter func(*Blocks) bool) (string, error) {
	by := make([][]Blocks, len(srcs))
	var b Blocks
	for iter(&b) {
		by[b.Source] = append(by[b.Source], b)
	}
	fp := jobcore.NewFingerprint()
	for i, src := range srcs {
		fp.File(src.Path)
		slices.SortFunc(by[i], func(a, b Blocks) int { return int(a.First - b.First) })
		next := int64(0)
		for _, b := range by[i] {
			if b.First != next {
				return "", fmt.Errorf("%s: fingerprint blocks from %d missing", src.Path, next)
			}
			for _, h := range b.Hashes {
				if err := fp.Block(h); err != nil {
					return "", fmt.Errorf("%s: %w", src.Path, err)
				}
			}
			next += int64(len(b.Hashes))
		}
		if want := (src.Size + task.BlockSize - 1) / task.BlockSize; next != want {
			return "", fmt.Errorf("%s: %d fingerprint blocks, %d expected", src.Path, next, want)
		}
	}
	return fp.String(), nil
}
