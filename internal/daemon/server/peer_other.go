//go:build !linux

package server

import (
	"errors"
	"net"
)

// PeerUID is only implemented on Linux; elsewhere every peer is refused
// and hooks decide in-process.
func PeerUID(*net.UnixConn) (int, error) {
	return -1, errors.New("daemon: peer credentials are not supported on this system")
}
