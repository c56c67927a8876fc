// Package pathread reads files that a user names (token files, config
// files, certificates, keys, policies, data) with bounds: only regular
// files, never more than a size cap, never longer than a deadline. A FIFO
// or a device (/dev/zero) named by mistake is refused at once with an error
// that says which path and why, instead of hanging startup or a reload, or
// growing until the process runs out of memory.
package pathread

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
)

// Reasons a path is refused; test with errors.Is.
var (
	ErrNotRegular = errors.New("not a regular file")
	ErrTooLarge   = errors.New("file too large")
	ErrTimeout    = errors.New("read timed out")
)

// Defaults when Limits leave a field zero.
const (
	DefaultMaxBytes = 1 << 20 // 1 MiB: tokens, keys, certificates, config
	DefaultTimeout  = 10 * time.Second
)

// Limits bound one read.
type Limits struct {
	MaxBytes int64         // refuse files larger than this; 0: DefaultMaxBytes
	Timeout  time.Duration // give up after this long; 0: DefaultTimeout
}

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	return l
}

// Error says which path was refused and why. Unwrap gives the reason
// (ErrNotRegular, ErrTooLarge, ErrTimeout) or the system error.
type Error struct {
	Path   string
	Reason string // for people: "is a named pipe (FIFO)", "is 62914560 bytes, over the 4 MiB limit"
	Err    error
}

func (e *Error) Error() string { return e.Path + ": " + e.Reason }
func (e *Error) Unwrap() error { return e.Err }

// Read returns the content of the regular file at path (symlinks
// followed), refusing anything else, anything over the size cap, and
// reads that take longer than the timeout.
func Read(path string, lim Limits) ([]byte, error) {
	lim = lim.withDefaults()
	f, info, err := Open(path)
	if err != nil {
		return nil, err
	}
	if info.Size() > lim.MaxBytes {
		f.Close()
		return nil, tooLarge(path, info.Size(), lim.MaxBytes)
	}
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer f.Close()
		// One byte more than the cap tells a file that grew past it.
		b, err := io.ReadAll(io.LimitReader(f, lim.MaxBytes+1))
		done <- result{b, err}
	}()
	timer := time.NewTimer(lim.Timeout)
	defer timer.Stop()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, &Error{Path: path, Reason: "reading: " + r.err.Error(), Err: r.err}
		}
		if int64(len(r.b)) > lim.MaxBytes {
			return nil, tooLarge(path, int64(len(r.b)), lim.MaxBytes)
		}
		return r.b, nil
	case <-timer.C:
		// The reader goroutine ends when the read does; the caller is free.
		return nil, &Error{Path: path, Reason: fmt.Sprintf("no data after %s (a network file system?)", lim.Timeout), Err: ErrTimeout}
	}
}

// Open opens path for reading if it is a regular file (symlinks
// followed). It never blocks on a FIFO: the file is opened non-blocking and
// checked through the opened descriptor, so a path swapped between a check
// and the open is caught too.
func Open(path string) (*os.File, fs.FileInfo, error) {
	f, err := openNonBlocking(path)
	if err != nil {
		return nil, nil, &Error{Path: path, Reason: describeOpenError(err), Err: err}
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, &Error{Path: path, Reason: "stat: " + err.Error(), Err: err}
	}
	if err := CheckRegular(path, info); err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, info, nil
}

// CheckRegular returns an *Error unless info describes a regular file.
func CheckRegular(path string, info fs.FileInfo) error {
	if info.Mode().IsRegular() {
		return nil
	}
	return &Error{Path: path, Reason: "is " + Describe(info.Mode()) + ", not a regular file", Err: ErrNotRegular}
}

// Describe names a file type for an error message.
func Describe(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsRegular():
		return "a regular file"
	}
	return "an irregular file"
}

func tooLarge(path string, size, max int64) error {
	return &Error{Path: path, Reason: fmt.Sprintf("is %s, over the %s limit", Size(size), Size(max)), Err: ErrTooLarge}
}

func describeOpenError(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "does not exist"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// Size formats a byte count for people: exact, in MiB when round.
func Size(n int64) string {
	const mib = 1 << 20
	if n >= mib && n%mib == 0 {
		return fmt.Sprintf("%d MiB", n/mib)
	}
	return fmt.Sprintf("%d bytes", n)
}
