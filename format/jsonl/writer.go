package jsonl

import (
	"bufio"

	"github.com/trajcompress/trajcompress/internal/atomicfile"
)

// Writer writes JSONL to a temporary file that becomes the target path only
// when [Writer.Close] succeeds.
type Writer struct {
	f   *atomicfile.File
	bw  *bufio.Writer
	err error
}

// Create starts writing path (see [atomicfile.Create]).
func Create(path string) (*Writer, error) {
	f, err := atomicfile.Create(path)
	if err != nil {
		return nil, err
	}
	return &Writer{f: f, bw: bufio.NewWriterSize(f, 1<<20)}, nil
}

// Write writes one record and a newline. Errors are sticky.
func (w *Writer) Write(rec []byte) error {
	if w.err != nil {
		return w.err
	}
	if _, err := w.bw.Write(rec); err != nil {
		w.err = err
		return err
	}
	w.err = w.bw.WriteByte('\n')
	return w.err
}

// Close flushes, syncs and renames the file into place. On any error the
// temporary file is removed and the target is left as it was.
func (w *Writer) Close() error {
	err := w.err
	if err == nil {
		err = w.bw.Flush()
	}
	return w.f.Finish(err)
}

// Abort discards everything written; the target is left as it was.
func (w *Writer) Abort() error { return w.f.Abort() }
