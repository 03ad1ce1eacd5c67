//go:build !unix

package readfile

import "os"

// openNoBlock opens path read-only: systems without FIFOs that block on
// open need nothing more.
func openNoBlock(path string) (*os.File, error) { return os.Open(path) }
