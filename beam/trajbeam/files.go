package trajbeam

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
)

// The pipeline reads and writes every file through Beam's file systems
// (local paths, gs://, and memfs:// in the tests), with these helpers.

// withFS calls f with the file system of path p.
func withFS(ctx context.Context, p string, f func(filesystem.Interface) error) error {
	fs, err := filesystem.New(ctx, p)
	if err != nil {
		return err
	}
	defer fs.Close()
	return f(fs)
}

// openAt opens a file on its file system, positioned at off.
func openAt(ctx context.Context, p string, off int64) (io.ReadCloser, error) {
	var r io.ReadCloser
	err := withFS(ctx, p, func(fs filesystem.Interface) (err error) {
		r, err = fs.OpenRead(ctx, p)
		return err
	})
	if err != nil || off == 0 {
		return r, err
	}
	if sk, ok := r.(io.Seeker); ok {
		_, err = sk.Seek(off, io.SeekStart)
	} else {
		_, err = io.CopyN(io.Discard, r, off)
	}
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return r, nil
}

// readHead reads the first n bytes of a file (fewer if it is shorter).
func readHead(ctx context.Context, p string, n int) ([]byte, error) {
	r, err := openAt(ctx, p, 0)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	b := make([]byte, n)
	k, err := io.ReadFull(r, b)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return b[:k], nil
}

// fileSize is the size of a file on its file system.
func fileSize(ctx context.Context, p string) (n int64, err error) {
	err = withFS(ctx, p, func(fs filesystem.Interface) error {
		n, err = fs.Size(ctx, p)
		return err
	})
	return n, err
}

// listGlob lists a glob on its file system.
func listGlob(ctx context.Context, glob string) (names []string, err error) {
	err = withFS(ctx, glob, func(fs filesystem.Interface) error {
		names, err = fs.List(ctx, glob)
		return err
	})
	return names, err
}

// exists reports whether the file p exists.
func exists(ctx context.Context, p string) (bool, error) {
	names, err := listGlob(ctx, escapeGlob(p))
	return len(names) > 0, err
}

// rename moves a file within its file system (a copy and a delete where
// the file system cannot rename, as on object stores).
func rename(ctx context.Context, from, to string) error {
	return withFS(ctx, from, func(fs filesystem.Interface) error {
		if err := filesystem.Rename(ctx, fs, from, to); err != nil {
			return fmt.Errorf("renaming %s to %s: %w", from, to, err)
		}
		return nil
	})
}

// remove deletes a file.
func remove(ctx context.Context, p string) error {
	return withFS(ctx, p, func(fs filesystem.Interface) error {
		rm, ok := fs.(filesystem.Remover)
		if !ok {
			return fmt.Errorf("%s: the file system cannot remove files", p)
		}
		return rm.Remove(ctx, p)
	})
}

// removeLocalDir removes an empty local directory.
func removeLocalDir(dir string) error { return os.Remove(dir) }
