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

// OpenAppend opens an existing file for appending without blocking: a
// FIFO with no reader fails at once instead of waiting for one. The caller
// checks the opened file is the one it expects.
func OpenAppend(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_APPEND|syscall.O_NONBLOCK, 0)
}
