//go:build unix

package daemon

import (
	"fmt"
	"os"
	"syscall"
)

// ownUID is whom a daemon must run as; a variable so that a test can play
// a client of another user.
var ownUID = os.Getuid()

// dial connects to the daemon's Unix socket. It does without the net
// package on purpose: net links the cgo resolver, which makes every start
// of the hook binary load libc dynamically, about 1.3 ms of a warm hook.
// The connection is a non-blocking *os.File, so deadlines work on it.
//
// Whoever listens must be this user: the kernel's record of the peer is
// checked on every connection, so a socket planted or swapped in by
// anyone else is refused (ErrPeer) before a byte is sent or read.
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
	uid, err := peerUID(fd)
	if err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("%w: %s: reading the peer's credentials: %w", ErrPeer, path, err)
	}
	if uid != ownUID {
		syscall.Close(fd)
		return nil, fmt.Errorf("%w: %s is answered by uid %d, not %d", ErrPeer, path, uid, ownUID)
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return nil, os.NewSyscallError("setnonblock", err)
	}
	return os.NewFile(uintptr(fd), path), nil
}
