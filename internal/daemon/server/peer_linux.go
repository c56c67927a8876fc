package server

import (
	"fmt"
	"net"
	"syscall"
)

// PeerUID returns the uid of the process at the other end of c, as the
// kernel recorded it at connect time (SO_PEERCRED).
func PeerUID(c *net.UnixConn) (int, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return -1, err
	}
	var (
		cred *syscall.Ucred
		cerr error
	)
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return -1, err
	}
	if cerr != nil {
		return -1, fmt.Errorf("daemon: SO_PEERCRED: %w", cerr)
	}
	return int(cred.Uid), nil
}
