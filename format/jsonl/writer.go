package jsonl

import (
	"bufio"
	"os"

	"github.com/trajcompress/trajcompress/internal/atomicfile"
	"github.com/trajcompress/trajcompress/internal/commit"
)

// Writer writes JSONL to a temporary file that becomes the target path only
// when [Writer.Close] succeeds.
type Writer struct {
	f   finisher
	bw  *bufio.Writer
	err error
}

// finisher ends a write: Finish(nil) puts it in place, Abort discards.
type finisher interface {
	Finish(err error) error
	Abort() error
}

var _ finisher = (*atomicfile.File)(nil)

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

// direct is a file written in place: a device, a FIFO or standard output.
type direct struct {
	*os.File
	close bool
}

func (d direct) Finish(err error) error {
	if d.close {
		if cerr := d.File.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

func (d direct) Abort() error { return d.Finish(nil) }

// OpenDirect opens path for writing in place — "-" is standard output —
// for outputs that cannot be renamed into place: character devices and
// FIFOs. There is no atomicity: what was written stays written.
//
// A path that names a descriptor of this process (/dev/stdout, /dev/fd/3:
// see [commit.FD]) is written through that descriptor, where the shell's
// redirection put it (appending to a log, say), not opened again.
func OpenDirect(path string) (*os.File, error) {
	switch fd, ok := commit.FD(path); {
	case ok && fd == 1:
		return os.Stdout, nil
	case ok && fd == 2:
		return os.Stderr, nil
	case ok:
		return os.NewFile(uintptr(fd), path), nil
	}
	return os.OpenFile(path, os.O_WRONLY, 0)
}

// NewDirect is a Writer that writes path in place (see [OpenDirect]);
// Close flushes, Abort stops writing.
func NewDirect(path string) (*Writer, error) {
	f, err := OpenDirect(path)
	if err != nil {
		return nil, err
	}
	_, fd := commit.FD(path)
	d := direct{File: f, close: !fd} // a descriptor of the process stays open
	return &Writer{f: d, bw: bufio.NewWriterSize(f, 1<<20)}, nil
}

// ArrayWriter writes a JSON array of records: "[", then one record per
// line, separated by commas, then "]" and a newline ("[]" for none). Like
// [Writer] it writes to a temporary file that becomes the target only when
// [ArrayWriter.Close] succeeds, so the target is always a complete, valid
// array (a run interrupted half-way leaves the previous file, or none).
type ArrayWriter struct {
	w *Writer
	n int64
}

// CreateArray starts writing a JSON array at path (see [atomicfile.Create]).
func CreateArray(path string) (*ArrayWriter, error) {
	w, err := Create(path)
	if err != nil {
		return nil, err
	}
	return &ArrayWriter{w: w}, nil
}

// Write writes one record, a JSON value on one line. Errors are sticky.
func (a *ArrayWriter) Write(rec []byte) error {
	w := a.w
	if w.err != nil {
		return w.err
	}
	sep := ",\n"
	if a.n == 0 {
		sep = "[\n"
	}
	a.n++
	if _, err := w.bw.WriteString(sep); err != nil {
		w.err = err
		return err
	}
	_, w.err = w.bw.Write(rec)
	return w.err
}

// Close ends the array, flushes, syncs and renames the file into place. On
// any error the temporary file is removed and the target left as it was.
func (a *ArrayWriter) Close() error {
	w := a.w
	if w.err == nil {
		end := "\n]\n"
		if a.n == 0 {
			end = "[]\n"
		}
		_, w.err = w.bw.WriteString(end)
	}
	return w.Close()
}

// Abort discards everything written; the target is left as it was.
func (a *ArrayWriter) Abort() error { return a.w.Abort() }
