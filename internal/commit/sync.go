package commit

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// modeFor is the mode the staged file e takes: that of the file it
// replaces (a file written over keeps its mode), or a new file's.
func (e entry) modeFor() fs.FileMode {
	if fi, err := os.Stat(e.target); err == nil && fi.Mode().IsRegular() {
		return fi.Mode().Perm()
	}
	return e.mode
}

func syncTree(path string, dir bool) error {
	if !dir {
		return syncFile(path, 0)
	}
	err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			return syncFile(p, 0)
		}
		if d.IsDir() && p != path {
			return syncDir(p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return syncDir(path)
}

// syncFile makes the file at path durable, first giving it mode (unless
// 0): through the open file, so that a read-only mode does not keep it
// from being synced, and the sync covers the mode too.
func syncFile(path string, mode fs.FileMode) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	if mode != 0 {
		if fi, serr := f.Stat(); serr == nil && fi.Mode().Perm() != mode {
			err = f.Chmod(mode)
		}
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	d.Close()
	if errors.Is(err, unix.EINVAL) { // file systems that cannot sync a directory
		return nil
	}
	return err
}
