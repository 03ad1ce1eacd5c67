package atomicfile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestDropsWrittenPages writes five chunks and checks, with mincore(2),
// that the pages more than DropLag behind the end left the page cache while
// the last ones are still there, and that the committed file is whole.
func TestDropsWrittenPages(t *testing.T) {
	dir := t.TempDir()
	// The drop works where write() goes through the file's own page cache
	// and sync_file_range writes it back: ext2/3/4 (measured), XFS and
	// Btrfs (expected; the test runs there to find out). tmpfs
	// pages are never clean; overlayfs (a container's root) keeps them in
	// the upper file's mapping, out of sync_file_range's reach (measured:
	// every page stayed cached); ZFS caches in its own ARC. There the
	// drop does nothing, which costs speed, not correctness
	// (TestWritebackErrorFailsCommit and the commit tests still run everywhere).
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	switch uint32(st.Type) { // int32 on 386 and arm
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC:
	default:
		t.Skipf("%s is on filesystem type %#x, not ext4, XFS or Btrfs; set TMPDIR to a directory on one of those to run this test", dir, st.Type)
	}
	path := filepath.Join(dir, "out")
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

// writeChunks writes n MiB of 'x' to f and returns the first error.
func writeChunks(f *File, n int) error {
	block := bytes.Repeat([]byte("x"), 1<<20)
	for range n {
		if _, err := f.Write(block); err != nil {
			return err
		}
	}
	return nil
}

// fakeSyncFileRange makes the waiting form of sync_file_range fail with
// errno for the rest of the test.
func fakeSyncFileRange(t *testing.T, errno error) {
	real := syncFileRange
	t.Cleanup(func() { syncFileRange = real })
	syncFileRange = func(fd int, off, n int64, flags int) error {
		if flags&unix.SYNC_FILE_RANGE_WAIT_AFTER != 0 {
			return errno
		}
		return real(fd, off, n, flags)
	}
}

// TestWritebackErrorFailsCommit: a failed write-back seen while dropping
// pages (which an fsync would then no longer report) fails that Write,
// every later one and Commit, and leaves nothing in place.
func TestWritebackErrorFailsCommit(t *testing.T) {
	fakeSyncFileRange(t, unix.EIO)
	dir := t.TempDir()
	path := filepath.Join(dir, "out")
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	err = writeChunks(f, 5*WritebackChunk>>20)
	if !errors.Is(err, unix.EIO) || !strings.Contains(err.Error(), path) {
		t.Fatalf("Write after a failed write-back: %v, want EIO naming %s", err, path)
	}
	if _, err := f.Write([]byte("more")); !errors.Is(err, unix.EIO) {
		t.Fatalf("the next Write: %v, want EIO", err)
	}
	if err := f.Commit(); !errors.Is(err, unix.EIO) {
		t.Fatalf("Commit: %v, want EIO", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("failed Commit left files: %v", ents)
	}
}

// TestWritebackUnsupported: a file system without sync_file_range is not
// an error; the file is written whole.
func TestWritebackUnsupported(t *testing.T) {
	fakeSyncFileRange(t, unix.ENOSYS)
	path := filepath.Join(t.TempDir(), "out")
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeChunks(f, 5*WritebackChunk>>20); err != nil {
		t.Fatal(err)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Size() != 5*WritebackChunk {
		t.Fatalf("stat: %v, %v", st, err)
	}
}
