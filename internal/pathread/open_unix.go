//go:build unix

package pathread

import (
	"os"
	"syscall"
)

// openNonBlocking opens without waiting for a writer on a FIFO; regular
// files ignore O_NONBLOCK.
func openNonBlocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
