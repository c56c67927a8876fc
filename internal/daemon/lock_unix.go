//go:build unix

package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// ErrLocked says another process holds the lock.
var ErrLocked = errors.New("daemon: lock held by another process")

// LockFile takes an exclusive flock on path. With wait it retries until
// ctx ends; the kernel releases the lock when the holder dies, so a crashed
// daemon never leaves a lock behind.
func LockFile(ctx context.Context, path string, wait bool) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("daemon: lock: %w", err)
	}
	delay := time.Millisecond
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("daemon: lock %s: %w", path, err)
		}
		if !wait {
			f.Close()
			return nil, ErrLocked
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("daemon: waiting for lock %s: %w", path, ctx.Err())
		case <-time.After(delay):
		}
		delay = min(2*delay, 20*time.Millisecond)
	}
}

// UnlockFile releases a lock LockFile took.
func UnlockFile(f *os.File) {
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	f.Close()
}
