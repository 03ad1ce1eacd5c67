package trajbeam

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"

	"github.com/trajcompress/trajcompress/format"
)

// readUnitFn reads a unit of work through our readers (package format:
// gzip JSONL, Parquet row group by row group, Arrow record batches) and
// emits its records with their line or row numbers.
type readUnitFn struct {
	Sources []Source `json:"sources"`
	// TurnsKey is input.turns_key, for the early check that a tabular
	// file has a column to read trajectories from.
	TurnsKey string `json:"turns_key"`
}

func (fn *readUnitFn) ProcessElement(ctx context.Context, u Unit, emit func(Record)) error {
	if u.Source < 0 || u.Source >= len(fn.Sources) {
		return fmt.Errorf("trajbeam: unit of unknown source %d", u.Source)
	}
	return eachRecord(ctx, fn.Sources[u.Source], fn.TurnsKey, func(raw []byte, line int64) error {
		emit(Record{Source: u.Source, Line: line, Raw: raw})
		return nil
	})
}

// eachRecord calls f with every record of src and its line or row
// number, through format.Open (a remote file is first copied to a local
// temporary file: our readers read local files).
func eachRecord(ctx context.Context, src Source, turnsKey string, f func(raw []byte, line int64) error) error {
	local, cleanup, err := localCopy(ctx, src.Path)
	if err != nil {
		return err
	}
	defer cleanup()
	in, err := format.Open(local, format.Options{Ctx: ctx})
	if err != nil {
		return err
	}
	defer in.Close()
	if err := in.CheckTurnsColumn(src.Path, turnsKey); err != nil {
		return err
	}
	for {
		raw, line, err := in.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := f(raw, line); err != nil {
			return err
		}
	}
}

// localCopy is a local path holding the file p: p itself when it is
// local, else a temporary copy, removed by cleanup.
func localCopy(ctx context.Context, p string) (string, func(), error) {
	if !isRemote(p) {
		return p, func() {}, nil
	}
	fs, err := filesystem.New(ctx, p)
	if err != nil {
		return "", nil, err
	}
	defer fs.Close()
	r, err := fs.OpenRead(ctx, p)
	if err != nil {
		return "", nil, err
	}
	defer r.Close()
	f, err := os.CreateTemp("", "trajcompress-beam-*-"+path.Base(p))
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { os.Remove(f.Name()) }
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		cleanup()
		return "", nil, errors.Join(fmt.Errorf("copying %s to the worker", p), err)
	}
	return f.Name(), cleanup, nil
}
