package atomicfile

import (
	"errors"

	"golang.org/x/sys/unix"
)

// syncFileRange is unix.SyncFileRange; tests replace it to inject errors.
var syncFileRange = unix.SyncFileRange

// startWriteback asks the kernel to start writing n bytes at off to disk
// without waiting for them (sync_file_range with SYNC_FILE_RANGE_WRITE).
// Errors are ignored: this form does not consume write-back errors, so
// Commit's fsync still reports any that matter.
func startWriteback(f *File, off, n int64) {
	syncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE) //nolint:errcheck // see above: ignored on purpose
}

// dropCache waits for the write-back of n bytes at off (started by an
// earlier startWriteback, so normally already done) and drops their pages
// from the page cache: POSIX_FADV_DONTNEED only drops clean pages.
//
// The waiting form of sync_file_range reports a failed write-back (EIO,
// ENOSPC, EDQUOT, …) and marks it as seen for this open file, so that a
// later fsync no longer does: dropCache must return it, or Commit would
// rename a damaged file into place. Errors that only say the file system
// cannot do this (ENOSYS, EINVAL, ESPIPE, EOPNOTSUPP) are not write errors,
// and the pages then simply stay cached.
func dropCache(f *File, off, n int64) error {
	fd := int(f.Fd())
	err := syncFileRange(fd, off, n, unix.SYNC_FILE_RANGE_WAIT_BEFORE|unix.SYNC_FILE_RANGE_WRITE|unix.SYNC_FILE_RANGE_WAIT_AFTER)
	switch {
	case err == nil:
		unix.Fadvise(fd, off, n, unix.FADV_DONTNEED) //nolint:errcheck // advice: nothing to report
		return nil
	case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EINVAL), errors.Is(err, unix.ESPIPE), errors.Is(err, unix.EOPNOTSUPP):
		return nil
	}
	return err
}
