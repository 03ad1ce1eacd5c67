package llm

import (
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/trajcompress/trajcompress/internal/testenv"
)

// TestCacheEntryMode: a cache entry is 0666 &^ umask like every file the
// tool creates (it was 0600 whatever the umask). Not parallel: the umask
// is process-wide.
func TestCacheEntryMode(t *testing.T) {
	testenv.Umasks(t, func(t *testing.T, umask fs.FileMode) {
		c, err := openCache(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		key := strings.Repeat("ab", 32)
		if err := c.put(key, entry{Text: "s"}); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(c.path(key))
		if err != nil {
			t.Fatal(err)
		}
		if m, want := fi.Mode().Perm(), 0o666&^umask; m != want {
			t.Fatalf("mode %03o, want %03o", m, want)
		}
	})
}
