package trajbeam

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"

	"github.com/trajcompress/trajcompress/config"
	"github.com/trajcompress/trajcompress/format"
	"github.com/trajcompress/trajcompress/job/jobcore"
	"github.com/trajcompress/trajcompress/task"
)

// readUnitFn reads a unit of work through our readers (package format:
// gzip JSONL, Parquet row group by row group, Arrow record batches) and
// emits its records with their line or row numbers.
type readUnitFn struct {
	Sources []Source      `json:"sources"`
	Config  config.Config `json:"config"` // how to open and check inputs (jobcore.InputOptions)
}

func (fn *readUnitFn) ProcessElement(ctx context.Context, u Unit, emit func(Record)) error {
	if u.Source < 0 || u.Source >= len(fn.Sources) {
		return fmt.Errorf("trajbeam: unit of unknown source %d", u.Source)
	}
	var t *task.Task
	if u.Task.Parts > 1 {
		t = &u.Task
	}
	return eachRecord(ctx, fn.Sources[u.Source], fn.Config, t, func(raw []byte, line, record int64) error {
		emit(Record{Source: u.Source, Line: line, Record: record, Raw: raw})
		return nil
	})
}

// eachRecord calls f with every record of src (of its task t, when not
// nil), its line or row number and, in a JSON array, its index, through
// format.Open with the options compress opens it with (a remote file is first copied to a local
// temporary file: our readers read local files).
func eachRecord(ctx context.Context, src Source, cfg config.Config, t *task.Task, f func(raw []byte, line, record int64) error) error {
	local, cleanup, err := localCopy(ctx, src.Path)
	if err != nil {
		return err
	}
	defer cleanup()
	opts := jobcore.InputOptions(cfg)
	opts.Ctx, opts.Task = ctx, t
	in, err := format.Open(local, opts)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := in.CheckTurnsColumn(src.Path, cfg.Input.TurnsKey); err != nil {
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
		if err := f(raw, line, in.Record()); err != nil {
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
	r, err := openAt(ctx, p, 0)
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
