//go:build unix

package readfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A FIFO without a writer, a device or a directory is refused at once,
// from the open descriptor; a regular file and a symlink to one open.
func TestOpenRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo unavailable: %v", err)
	}
	reg := filepath.Join(dir, "a")
	os.WriteFile(reg, []byte("x"), 0o644)
	os.Symlink("a", filepath.Join(dir, "link"))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, p := range []string{fifo, "/dev/null", dir} {
			if f, err := OpenRegular(p); err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("%s: %v, want not a regular file", p, err)
				if f != nil {
					f.Close()
				}
			}
		}
		for _, p := range []string{reg, filepath.Join(dir, "link")} {
			f, err := OpenRegular(p)
			if err != nil {
				t.Errorf("%s: %v", p, err)
				continue
			}
			b := make([]byte, 2)
			if n, _ := f.Read(b); n != 1 || b[0] != 'x' {
				t.Errorf("%s: read %q", p, b[:n])
			}
			f.Close()
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("OpenRegular blocked")
	}
}
