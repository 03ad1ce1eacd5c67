package trajbeam

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/zeebo/xxh3"
)

// writeFn writes the records of a bundle to a part file of its own in the
// run's temporary directory, and emits the file when the bundle finishes.
// A part is committed (renamed into the output directory) only at the
// end of the run and only if the runner committed the bundle that emitted
// it: a bundle that failed, or was retried, leaves a file nobody names,
// which the commit removes with the temporary directory. No record is
// shuffled: records go from the compressor to the file in the bundle that
// read them.
type writeFn struct {
	Temp string `json:"temp"`

	w *partWriter
}

func (fn *writeFn) ProcessElement(ctx context.Context, rec []byte, _ func(Part)) error {
	if fn.w == nil {
		var err error
		if fn.w, err = newPartWriter(ctx, join(fn.Temp, partPrefix+randomID()+".jsonl"), -1); err != nil {
			return err
		}
	}
	return fn.w.write(rec)
}

func (fn *writeFn) FinishBundle(ctx context.Context, emit func(Part)) error {
	if fn.w == nil {
		return nil
	}
	p, err := fn.w.close()
	fn.w = nil
	if err != nil {
		return err
	}
	emit(p)
	return nil
}

// Teardown discards a part file a failed bundle left open.
func (fn *writeFn) Teardown(ctx context.Context) {
	if fn.w != nil {
		fn.w.abort(ctx)
		fn.w = nil
	}
}

// randomID is a random name for a run's or a bundle's files.
func randomID() string {
	var b [12]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// partWriter writes one JSONL file on a Beam file system: a record a line,
// hashed and counted as it goes.
type partWriter struct {
	part Part
	wc   io.WriteCloser
	bw   *bufio.Writer
	h    *xxh3.Hasher
}

func newPartWriter(ctx context.Context, path string, source int) (*partWriter, error) {
	var wc io.WriteCloser
	err := withFS(ctx, path, func(fs filesystem.Interface) (err error) {
		wc, err = fs.OpenWrite(ctx, path)
		return err
	})
	if err != nil {
		return nil, err
	}
	w := &partWriter{part: Part{Temp: path, Source: source}, wc: wc, h: xxh3.New()}
	w.bw = bufio.NewWriterSize(io.MultiWriter(wc, w.h), 1<<20)
	return w, nil
}

func (w *partWriter) write(rec []byte) error {
	w.bw.Write(rec)
	if err := w.bw.WriteByte('\n'); err != nil {
		return fmt.Errorf("%s: %w", w.part.Temp, err)
	}
	w.part.Records++
	w.part.Bytes += int64(len(rec)) + 1
	return nil
}

// copyFrom appends the bytes of r, whole lines, to the file.
func (w *partWriter) copyFrom(r io.Reader) error {
	n, err := io.Copy(w.bw, r)
	w.part.Bytes += n
	if err != nil {
		return fmt.Errorf("%s: %w", w.part.Temp, err)
	}
	return nil
}

// close flushes the file to stable storage (a local file is synced) and
// returns what it holds.
func (w *partWriter) close() (Part, error) {
	err := w.bw.Flush()
	if s, ok := w.wc.(interface{ Sync() error }); ok && err == nil {
		err = s.Sync()
	}
	if cerr := w.wc.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Part{}, fmt.Errorf("%s: %w", w.part.Temp, err)
	}
	sum := w.h.Sum128().Bytes()
	w.part.XXH3 = hex.EncodeToString(sum[:])
	return w.part, nil
}

// abort closes and removes an unfinished file.
func (w *partWriter) abort(ctx context.Context) {
	w.wc.Close()
	remove(ctx, w.part.Temp)
}
