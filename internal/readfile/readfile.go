// Package readfile reads a file that is read whole (a config, a
// tokenizer, a metrics or baseline JSON, a run manifest) with a bound on
// its size, so that a wrong path — /dev/zero, a FIFO fed without end, a
// multi-GB data file given as a config — is a clear error naming the file
// and the limit, never an out-of-memory crash.
package readfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// The limits of the files read whole. Each is far above any real file of
// its kind and far below what would strain memory. They are variables so
// that a test of a limit can lower it (and read kilobytes, not the
// hundreds of megabytes the real limit takes); nothing else sets them.
var (
	// SmallLimit: configs, rules, tokenizer configs, dataset metadata,
	// run manifests (real ones: a few kB).
	SmallLimit int64 = DefaultSmallLimit
	// MetricsLimit: metrics and baseline JSON (real ones: well under
	// 1 MiB; the per-source breakdown names at most 64 groups).
	MetricsLimit int64 = DefaultMetricsLimit
	// TokenizerLimit: tokenizer.json and tiktoken files (the largest
	// known, Gemma's, is 33 MB).
	TokenizerLimit int64 = DefaultTokenizerLimit
)

// The limits' values in a run.
const (
	DefaultSmallLimit     = 16 << 20
	DefaultMetricsLimit   = 256 << 20
	DefaultTokenizerLimit = 256 << 20
)

// ErrTooLarge is wrapped by the error of [Read] for a file over its limit.
var ErrTooLarge = errors.New("file too large")

// TooLargeError is the error of [Read] for a file larger than the limit.
type TooLargeError struct {
	Path  string
	What  string // what the file was read as: "config file", "tokenizer file", …
	Limit int64
	Size  int64 // the file's size when known (a regular file), else -1
}

func (e *TooLargeError) Error() string {
	size := "more than " + Bytes(e.Limit)
	if e.Size >= 0 {
		size = Bytes(e.Size)
	}
	return fmt.Sprintf("%s: %s, over the limit of %s for a %s (is it the right file?)", e.Path, size, Bytes(e.Limit), e.What)
}

func (e *TooLargeError) Unwrap() error { return ErrTooLarge }

// Read returns the contents of the file at path, or a *[TooLargeError]
// when it holds more than limit bytes. The size of a regular file is
// checked before anything is read; any other file (a device, a FIFO, a
// /proc file) is read up to limit+1 bytes. what names the file's role in
// the error. Other errors are those of os.Open and reading.
func Read(path, what string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := int64(-1)
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		size = st.Size()
		if size > limit {
			return nil, &TooLargeError{Path: path, What: what, Limit: limit, Size: size}
		}
	}
	var w bytes.Buffer
	if size >= 0 {
		w.Grow(int(size) + 1)
	}
	n, err := io.Copy(&w, io.LimitReader(f, limit+1))
	if err != nil {
		return nil, &os.PathError{Op: "read", Path: path, Err: err}
	}
	if n > limit {
		return nil, &TooLargeError{Path: path, What: what, Limit: limit, Size: -1}
	}
	return w.Bytes(), nil
}

// Bytes formats n as the limits are given: "256 MiB", "16 MiB", "1 GiB",
// or bytes.
func Bytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
