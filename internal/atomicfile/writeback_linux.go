package atomicfile

import "golang.org/x/sys/unix"

// startWriteback asks the kernel to start writing n bytes at off to disk
// without waiting for them (sync_file_range with SYNC_FILE_RANGE_WRITE).
// Errors are ignored: Commit's fsync reports any that matter.
func startWriteback(f *File, off, n int64) {
	unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
}

// dropCache waits for the write-back of n bytes at off (started by an
// earlier startWriteback, so normally already done) and drops their pages
// from the page cache: POSIX_FADV_DONTNEED only drops clean pages. Errors
// are ignored: the data stays in the file either way, and Commit's fsync
// reports write errors.
func dropCache(f *File, off, n int64) {
	fd := int(f.Fd())
	unix.SyncFileRange(fd, off, n, unix.SYNC_FILE_RANGE_WAIT_BEFORE|unix.SYNC_FILE_RANGE_WRITE|unix.SYNC_FILE_RANGE_WAIT_AFTER)
	unix.Fadvise(fd, off, n, unix.FADV_DONTNEED)
}
