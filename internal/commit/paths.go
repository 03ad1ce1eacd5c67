package commit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/trajcompress/trajcompress/internal/atomicfile"
)

// NotLink refuses a symbolic link at path, a name the program chose for
// an output rather than one the user gave: writing through it would write
// wherever it points, and replacing it would remove what someone put
// there. A link is written through only at a path the user named.
func NotLink(path string) error {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return nil
	}
	to, _ := os.Readlink(path)
	return fmt.Errorf("%s is a symbolic link (to %s) at a name trajcompress chose, not one you gave: refusing to write through it", path, to)
}

// FD reports the file descriptor of this process that path names: 1 for
// "-"; /dev/stdout, /dev/stderr, /dev/stdin, /dev/fd/N and
// /proc/self/fd/N by their number. Such a path is written through the
// descriptor itself: opened again, or replaced by a rename, it would be the
// file the descriptor leads to (a log the shell appends to, say), truncated
// or overwritten from its start.
func FD(path string) (int, bool) {
	if path == "-" {
		return 1, true
	}
	switch p := filepath.Clean(path); p {
	case "/dev/stdin":
		return 0, true
	case "/dev/stdout":
		return 1, true
	case "/dev/stderr":
		return 2, true
	default:
		for _, dir := range []string{"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"} {
			if n, err := strconv.Atoi(strings.TrimPrefix(p, dir)); strings.HasPrefix(p, dir) && err == nil && n >= 0 {
				return n, true
			}
		}
	}
	return 0, false
}

// IsDirect reports whether path names an output that is written directly:
// "-" or another name of a descriptor of this process (see [FD]), or an
// existing character device or FIFO (following links).
func IsDirect(path string) bool {
	if _, ok := FD(path); ok {
		return true
	}
	fi, err := os.Stat(path)
	return err == nil && fi.Mode()&(fs.ModeCharDevice|fs.ModeNamedPipe|fs.ModeDevice) != 0
}

// Writable reports whether a run can write the output at path, before it
// does any work: a direct output (see [IsDirect]) is taken as it is;
// otherwise the directory the file goes in (or its nearest existing
// parent, when the run is to make it) must be a directory in which a
// file can be made, which it tries by making and removing a temporary
// file of atomicfile's name pattern. The error names path.
func Writable(path string) error {
	if IsDirect(path) {
		return nil
	}
	target := atomicfile.Resolve(path)
	dir := filepath.Dir(target)
	for {
		fi, err := os.Stat(dir)
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("%s: %s is not a directory", path, dir)
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, unix.ENOTDIR) || filepath.Dir(dir) == dir {
			return fmt.Errorf("%s: %w", path, err)
		}
		dir = filepath.Dir(dir)
	}
	f, err := os.CreateTemp(dir, "."+atomicfile.ShortName(filepath.Base(target))+".tmp-*")
	if err != nil {
		return fmt.Errorf("%s: cannot write in %s: %w", path, dir, errors.Unwrap(err))
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}
