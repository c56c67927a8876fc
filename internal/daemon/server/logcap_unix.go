//go:build unix

package server

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/ahp-opa/ahp-opa/internal/daemon"
)

// capLog keeps the daemon's stderr (fd), when it is the daemon.log the hook
// client opened for it, under maxBytes: past it the file is rotated
// (daemon.RotateLog) and a fresh daemon.log takes over the descriptor, so
// the logger and a crash report alike go to the new file. When another
// daemon already rotated it, this one just moves over to the new file.
// A stderr that is anything else (a terminal, a file of the user's) is
// left alone.
func capLog(fd int, path string, maxBytes int64) {
	if path == "" {
		return
	}
	var cur syscall.Stat_t
	if syscall.Fstat(fd, &cur) != nil || cur.Mode&syscall.S_IFMT != syscall.S_IFREG || cur.Size <= maxBytes {
		return
	}
	same := func(p string) bool {
		var st syscall.Stat_t
		return syscall.Stat(p, &st) == nil && st.Dev == cur.Dev && st.Ino == cur.Ino
	}
	switch {
	case same(path):
		if daemon.RotateLog(path, maxBytes) != nil {
			return
		}
	case same(path + ".1"):
		// rotated by another daemon sharing the directory
	default:
		return
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	unix.Dup2(int(f.Fd()), fd)
}
