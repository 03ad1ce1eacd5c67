package readfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRead: a file within the limit is read whole; one over it is a
// TooLargeError naming the file and the limit, found from its size
// (regular) or by reading one byte past the limit (/dev/zero, a FIFO),
// never read whole.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "c.yaml")
	os.WriteFile(p, []byte("0123456789"), 0o644)
	if b, err := Read(p, "config file", 10); err != nil || string(b) != "0123456789" {
		t.Fatalf("at the limit: %q, %v", b, err)
	}
	_, err := Read(p, "config file", 9)
	var tl *TooLargeError
	if !errors.As(err, &tl) || !errors.Is(err, ErrTooLarge) || tl.Size != 10 || !strings.Contains(err.Error(), p+": 10 bytes, over the limit of 9 bytes for a config file") {
		t.Fatalf("over the limit: %v", err)
	}
	if _, err := Read("/dev/zero", "config file", 1<<20); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "/dev/zero: more than 1 MiB, over the limit of 1 MiB") {
		t.Fatalf("/dev/zero: %v", err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer w.Close()
		for range 100 {
			if _, err := w.Write(make([]byte, 1024)); err != nil {
				return
			}
		}
	}()
	if _, err := Read(fifo, "metrics file", 4096); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("FIFO: %v", err)
	}
	if _, err := Read(filepath.Join(dir, "none"), "config file", 10); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing: %v", err)
	}
}

// The limits a run reads with: TestWholeFilesAreSizeChecked (cmd) lowers
// them to test them, so their values are pinned here.
func TestDefaultLimits(t *testing.T) {
	if SmallLimit != 16<<20 || MetricsLimit != 256<<20 || TokenizerLimit != 256<<20 {
		t.Fatalf("limits %d, %d, %d", SmallLimit, MetricsLimit, TokenizerLimit)
	}
	if DefaultSmallLimit != SmallLimit || DefaultMetricsLimit != MetricsLimit || DefaultTokenizerLimit != TokenizerLimit {
		t.Fatal("a limit differs from its default")
	}
}
