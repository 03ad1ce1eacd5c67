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
// comes. A symlink to an image is read, and
// so is a file: URL naming one.
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

// A path that is a regular image when looked at and a FIFO when opened
// (swapped between the two, as a shared or hostile dataset directory can)
// never blocks the worker: the file is opened non-blocking and checked on
// the open descriptor, not stat'ed and then opened.
func TestPathSwappedForFIFONeverBlocks(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo unavailable: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.png"), pngBytes(t, 64, 48), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "img.png")
	point := func(target string) error {
		tmp := path + ".tmp"
		os.Remove(tmp)
		if err := os.Symlink(target, tmp); err != nil {
			return err
		}
		return os.Rename(tmp, path) // atomic: the path is always one or the other
	}
	if err := point("a.png"); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	swapped := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				swapped <- n
				return
			default:
			}
			target := "a.png"
			if n%2 == 0 {
				target = "fifo"
			}
			if point(target) != nil {
				continue
			}
			n++
		}
	}()
	done := make(chan [2]int)
	go func() {
		var known, unknown int
		for range 20000 {
			f := Finder{}
			if _, w, _, ok := f.readHeader(path); ok && w == 64 {
				known++
			} else {
				unknown++
			}
		}
		done <- [2]int{known, unknown}
	}()
	select {
	case got := <-done:
		close(stop)
		n := <-swapped
		t.Logf("%d reads while the path was swapped %d times: %d read as the image, %d as unknown", got[0]+got[1], n, got[0], got[1])
	case <-time.After(20 * time.Second):
		close(stop)
		// Release the blocked open so the process can end.
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		t.Fatal("reading an image whose path was swapped for a FIFO blocked")
	}
}
