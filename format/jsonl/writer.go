package jsonl

import (
	"bufio"
	"os"
	"path/filepath"
)

// Writer writes JSONL to a temporary file that becomes the target path only
// when [Writer.Close] succeeds.
type Writer struct {
	path string
	tmp  *os.File
	bw   *bufio.Writer
	err  error
}

// Create starts writing path. The temporary file lives in the same
// directory, so the final rename is atomic.
func Create(path string) (*Writer, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, err
	}
	// CreateTemp makes the file private (0600); the output is an ordinary
	// data file, readable as any file the user creates.
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, err
	}
	return &Writer{path: path, tmp: tmp, bw: bufio.NewWriterSize(tmp, 1<<20)}, nil
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
	if err == nil {
		err = w.tmp.Sync()
	}
	if cerr := w.tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(w.tmp.Name(), w.path)
	}
	if err != nil {
		os.Remove(w.tmp.Name())
	}
	return err
}

// Abort discards everything written; the target is left as it was.
func (w *Writer) Abort() error {
	w.tmp.Close()
	return os.Remove(w.tmp.Name())
}
