//go:build unix

package daemon

import (
	"os"
	"syscall"
)

// dial connects to the daemon's Unix socket. It does without the net
// package on purpose: net links the cgo resolver, which makes every start
// of the hook binary load libc dynamically, about 1.3 ms of a warm hook.
// The connection is a non-blocking *os.File, so deadlines work on it.
func dial(path string) (*os.File, error) {
	// ForkLock keeps the descriptor from leaking into a child started
	// between socket and CloseOnExec (the daemon or ahp-opa hook).
	syscall.ForkLock.RLock()
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	// A Unix socket connects at once or fails (no daemon, a stale socket
	// file); a full backlog blocks until the daemon accepts.
	if err := syscall.Connect(fd, &syscall.SockaddrUnix{Name: path}); err != nil {
		syscall.Close(fd)
		return nil, &os.PathError{Op: "connect", Path: path, Err: err}
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return nil, os.NewSyscallError("setnonblock", err)
	}
	return os.NewFile(uintptr(fd), path), nil
}
