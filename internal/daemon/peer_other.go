//go:build unix && !linux && !darwin && !freebsd

package daemon

import "errors"

// peerUID is not implemented here: without a way to learn who listens,
// no daemon is trusted and hooks decide in-process.
func peerUID(int) (int, error) {
	return -1, errors.New("peer credentials are not supported on this system")
}
