package atomicfile

import "golang.org/x/sys/unix"

// startWriteback asks the kernel to start writing n bytes at off to disk
// without waiting for them (sync_file_range with SYNC_FILE_RANGE_WRITE).
// Errors are ignored: Commit's fsync reports any that matter.
func startWriteback(f *File, off, n int64) {
	unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
}
