//go:build !unix

package pathread

import (
	"io/fs"
	"os"
)

// openNonBlocking checks the path before opening where O_NONBLOCK is not
// available.
func openNonBlocking(path string) (*os.File, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrInvalid}
	}
	return os.Open(path)
}

// OpenAppend opens an existing regular file for appending; the caller
// checks the opened file is the one it expects.
func OpenAppend(path string) (*os.File, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrInvalid}
	}
	return os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
}
