package readfile

import (
	"fmt"
	"os"
)

// OpenRegular opens the file at path for reading when it is a regular
// file (after symlinks), for files a record names (an image path): the
// path is opened without blocking (O_NONBLOCK, where the system has it)
// and the open descriptor is checked with fstat, so a FIFO, a device or a
// directory, even one swapped in for a regular file after any earlier
// look, is an error at once and never blocks the caller. Checking a path
// with stat and then opening it leaves a window in which the path can
// become a FIFO, whose open blocks until a writer comes: forever, in a
// worker of a run.
func OpenRegular(path string) (*os.File, error) {
	f, err := openNoBlock(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: not a regular file (%s)", path, st.Mode().Type())
	}
	return f, nil
}
