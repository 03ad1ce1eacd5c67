//go:build unix

package imagetok

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// An images entry naming a FIFO, a directory or a device is of unknown
// size and is never read: opening a FIFO for reading blocks until a writer
// comes (review of issue 25, item 7). A symlink to an image is read, and
// so is a file: URL naming one (item 11b).
func TestOnlyRegularFilesOpened(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Skipf("mkfifo unavailable: %v", err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.png"), pngBytes(t, 64, 48), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.png", filepath.Join(dir, "link.png")); err != nil {
		t.Fatal(err)
	}
	type result struct {
		ims []Image
		err error
	}
	done := make(chan result, 1)
	go func() {
		f := Finder{Dir: dir}
		ims, err := f.Record([][]byte{[]byte(`"<image><image><image><image><image><image>"`)},
			[]byte(`["fifo", "sub", "/dev/null", "link.png", "a.png", "file://`+filepath.ToSlash(filepath.Join(dir, "a.png"))+`"]`))
		done <- result{ims, err}
	}()
	select {
	case r := <-done:
		if r.err != nil || len(r.ims) != 6 {
			t.Fatalf("images %+v, %v", r.ims, r.err)
		}
		for k, im := range r.ims[:3] {
			if im.Known() || im.Source != SourceFile {
				t.Errorf("entry %d (%s): %+v, want a file of unknown size", k, im.Ref, im)
			}
		}
		for _, im := range r.ims[3:] {
			if im.Width != 64 || im.Height != 48 {
				t.Errorf("%s: %dx%d, want 64x48", im.Ref, im.Width, im.Height)
			}
		}
	case <-time.After(10 * time.Second):
		t.Fatal("reading an images list naming a FIFO blocked")
	}
}
