package metrics

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/zeebo/xxh3"
)

// HashFile returns the size and hex xxh3-128 of the file at path, as
// [OutputFile] records them.
func HashFile(path string) (int64, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	h := xxh3.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return 0, "", err
	}
	b := h.Sum128().Bytes()
	return n, hex.EncodeToString(b[:]), nil
}

// VerifyOutputs checks that the files a metrics document at metricsPath
// vouches for (run.outputs; paths relative to its directory) are there
// with the recorded size and hash. It returns nil for metrics that vouch
// for nothing (dry runs, outputs written to devices, older versions).
func VerifyOutputs(metricsPath string, outputs []OutputFile) error {
	var errs []error
	dir := filepath.Dir(metricsPath)
	for _, o := range outputs {
		p := filepath.Join(dir, filepath.FromSlash(o.Path))
		n, sum, err := HashFile(p)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%s names output %s, which cannot be read: %w", metricsPath, p, err))
		case n != o.Bytes || sum != o.XXH3:
			errs = append(errs, fmt.Errorf("%s vouches for %s as %d bytes, xxh3-128 %s, but it has %d bytes, %s: these are not the outputs of that run", metricsPath, p, o.Bytes, o.XXH3, n, sum))
		}
	}
	return errors.Join(errs...)
}
