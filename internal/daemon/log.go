package daemon

import (
	"errors"
	"os"
)

// MaxLogBytes caps daemon.log, where a daemon's stderr goes: past it the
// file becomes daemon.log.1 (replacing the one before) and a new
// daemon.log starts, so the runtime directory (often a small tmpfs)
// holds at most about twice this much log.
const MaxLogBytes = 1 << 20

// RotateLog moves path to path.1 when it has grown past max bytes; an
// absent or small file is left as it is.
func RotateLog(path string, max int64) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() || fi.Size() <= max {
		return nil
	}
	return os.Rename(path, path+".1")
}
