// Package atomicfile writes files that appear at their path only when
// complete: a [File] is a temporary file in the destination's directory
// (so the final rename cannot cross file systems) that [File.Commit]
// syncs and renames into place and [File.Abort] removes. Whatever fails,
// the destination holds either its old content or the whole new file.
// Every output of trajcompress (records, rejects, outcomes, metrics) goes
// through it. A File is not safe for concurrent use.
//
// Commit's fsync makes the new file durable before it replaces the old
// one. So that it does not have to write a whole multi-GB output at the
// end while the run waits, File asks the kernel to start writing back each
// [WritebackChunk] as soon as it has been written (Linux; elsewhere the
// fsync does it all).
package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
)

// WritebackChunk is how many bytes File lets accumulate before it starts
// their write-back.
const WritebackChunk = 8 << 20

// File is an output being written; write to it as to an *os.File.
type File struct {
	*os.File
	path    string
	done    bool
	written int64 // bytes written through Write
	flushed int64 // bytes whose write-back was started
}

// Write writes to the temporary file, starting write-back of each
// completed WritebackChunk.
func (f *File) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	f.written += int64(n)
	if f.written-f.flushed >= WritebackChunk {
		startWriteback(f, f.flushed, f.written-f.flushed)
		f.flushed = f.written
	}
	return n, err
}

// Create starts writing path. The temporary file is named
// ".<name>.tmp-*" beside it and has mode 0644 (CreateTemp's 0600 would make
// a data file private).
func Create(path string) (*File, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return &File{File: f, path: path}, nil
}

// Path is the destination.
func (f *File) Path() string { return f.path }

// Commit syncs, closes and renames the file into place, then syncs the
// directory. On error the temporary file is removed and the destination is
// untouched. Commit after Commit or Abort is a no-op.
func (f *File) Commit() error {
	if f.done {
		return nil
	}
	f.done = true
	err := f.Sync()
	if cerr := f.File.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), f.path)
	}
	if err != nil {
		os.Remove(f.Name())
		return err
	}
	if d, derr := os.Open(filepath.Dir(f.path)); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// Finish ends a write whose outcome is err: nil commits (and returns
// Commit's error), anything else aborts and returns err. It is the one
// place where "finished writing" turns into "in place or gone".
func (f *File) Finish(err error) error {
	if err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

// Abort closes and removes the temporary file; the destination is
// untouched. Abort after Commit or Abort is a no-op.
func (f *File) Abort() error {
	if f.done {
		return nil
	}
	f.done = true
	f.File.Close()
	if err := os.Remove(f.Name()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
