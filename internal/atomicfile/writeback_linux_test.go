package atomicfile

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestDropsWrittenPages writes five chunks and checks, with mincore(2),
// that the pages more than DropLag behind the end left the page cache while
// the last ones are still there, and that the committed file is whole.
func TestDropsWrittenPages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out")
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	block := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	const n = 5 * WritebackChunk
	for off := 0; off < n; off += len(block) {
		block[0] = byte(off >> 20)
		if _, err := f.Write(block); err != nil {
			t.Fatal(err)
		}
	}

	m, err := unix.Mmap(int(f.Fd()), 0, n, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	vec := make([]byte, n/os.Getpagesize())
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0])))
	unix.Munmap(m)
	if errno != 0 {
		t.Fatal(errno)
	}
	resident := func(from, to int) (k int) {
		for _, v := range vec[from/os.Getpagesize() : to/os.Getpagesize()] {
			k += int(v & 1)
		}
		return k
	}
	if dropped := n - DropLag; resident(0, dropped) != 0 {
		t.Errorf("%d of the pages before %d are still cached", resident(0, dropped), dropped)
	}
	if resident(n-WritebackChunk, n) == 0 {
		t.Errorf("the last chunk was dropped too")
	}

	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("file has %d bytes, want %d", len(got), n)
	}
	for off := 0; off < n; off += len(block) {
		block[0] = byte(off >> 20)
		if !bytes.Equal(got[off:off+len(block)], block) {
			t.Fatalf("MiB at %d differs", off)
		}
	}
}
