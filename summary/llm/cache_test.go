package llm

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
)

// TestCacheEntryMode: a cache entry is 0666 &^ umask like every file the
// tool creates (it was 0600 whatever the umask). Not parallel: the umask
// is process-wide.
func TestCacheEntryMode(t *testing.T) {
	for _, umask := range []int{0o077, 0o022} {
		t.Run(fmt.Sprintf("umask %03o", umask), func(t *testing.T) {
			old := syscall.Umask(umask)
			defer syscall.Umask(old)
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
			if m, want := fi.Mode().Perm(), os.FileMode(0o666&^umask); m != want {
				t.Fatalf("mode %03o, want %03o", m, want)
			}
		})
	}
}
