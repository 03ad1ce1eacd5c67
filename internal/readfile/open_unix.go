//go:build unix

package readfile

import (
	"os"
	"syscall"
)

// openNoBlock opens path read-only with O_NONBLOCK: the open of a FIFO
// with no writer returns at once; on a regular file the flag changes
// nothing. O_NOCTTY keeps a terminal device from becoming the process's
// controlling terminal.
func openNoBlock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
}
