package imagetok

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/trajcompress/trajcompress/internal/readfile"
)

// An OpenFunc opens a local image file by its resolved path.
type OpenFunc func(path string) (io.ReadCloser, error)

// fileConfig reads the size of the local image at ref (relative to f.Dir
// unless absolute) from its first [MaxHeader] bytes. A missing or
// unreadable file, or one that is not an image, is of unknown size.
func (f *Finder) fileConfig(ref string) (format string, w, h int, ok bool) {
	path := ref
	if !filepath.IsAbs(path) && f.Dir != "" {
		path = filepath.Join(f.Dir, path)
	}
	if fh, seen := f.files[path]; seen {
		return fh.format, fh.w, fh.h, fh.ok
	}
	format, w, h, ok = f.readHeader(path)
	if f.Memo {
		if f.files == nil {
			f.files = map[string]fileHeader{}
		}
		f.files[path] = fileHeader{format, w, h, ok}
	}
	return format, w, h, ok
}

// readHeader opens the file at path with f.Open (or openRegular) and reads
// its image header.
func (f *Finder) readHeader(path string) (format string, w, h int, ok bool) {
	open := f.Open
	if open == nil {
		open = openRegular
	}
	r, err := open(path)
	if err != nil {
		return "", 0, 0, false
	}
	defer r.Close()
	return Config(r)
}

// openRegular opens the file at path when it is a regular file (after
// symlinks), non-blocking and checked on the open descriptor
// (readfile.OpenRegular): a FIFO, device or directory, even one swapped in
// after an earlier look, would block the read or never end, and is of
// unknown size.
func openRegular(path string) (io.ReadCloser, error) {
	f, err := readfile.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// LoadAuto reads the rule of the model whose preprocessor_config.json is
// at path (see [ParseAuto]); errors name the file, and one for a config no
// loader reads is an [ErrUnknownProcessor].
func LoadAuto(path string) (Rule, error) {
	b, err := readfile.Read(path, "preprocessor config", readfile.SmallLimit)
	if err != nil {
		return nil, err
	}
	r, err := ParseAuto(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// LoadQwen reads the Qwen rule from the preprocessor_config.json at path
// (see [ParseQwen]); errors name the file.
func LoadQwen(path string) (Qwen, error) {
	b, err := readfile.Read(path, "preprocessor config", readfile.SmallLimit)
	if err != nil {
		return Qwen{}, err
	}
	q, err := ParseQwen(b)
	if err != nil {
		return Qwen{}, fmt.Errorf("%s: %w", path, err)
	}
	return q, nil
}
