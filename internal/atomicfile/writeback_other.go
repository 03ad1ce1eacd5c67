//go:build !linux

package atomicfile

// startWriteback is a no-op where sync_file_range does not exist: Commit's
// fsync writes everything at the end.
func startWriteback(*File, int64, int64) {}

// dropCache is a no-op there too: the pages stay cached.
func dropCache(*File, int64, int64) error { return nil }
