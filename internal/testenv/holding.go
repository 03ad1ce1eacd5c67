package testenv

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
)

// FileHolding returns the first file under dir (walked in lexical order)
// whose bytes contain s, or "" when none does: a test's check that a
// secret reached no output or cache file.
func FileHolding(dir, s string) string {
	found := ""
	//nolint:errcheck // the walk returns only SkipAll: unreadable entries are skipped on purpose
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if b, rerr := os.ReadFile(p); rerr == nil && bytes.Contains(b, []byte(s)) {
			found = p
			return filepath.SkipAll
		}
		return nil
	})
	return found
}
