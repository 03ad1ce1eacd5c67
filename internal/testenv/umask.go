//go:build unix

package testenv

import (
	"fmt"
	"io/fs"
	"syscall"
	"testing"
)

// Umasks runs f as a subtest under umask 077 and under umask 022, and
// gives the process its umask back after each. The umask is process-wide:
// the caller must not be a parallel test, nor run beside ones that create
// files.
func Umasks(t *testing.T, f func(t *testing.T, umask fs.FileMode)) {
	t.Helper()
	for _, umask := range []fs.FileMode{0o077, 0o022} {
		t.Run(fmt.Sprintf("umask %03o", umask), func(t *testing.T) {
			old := syscall.Umask(int(umask))
			defer syscall.Umask(old)
			f(t, umask)
		})
	}
}
