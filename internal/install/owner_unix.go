//go:build unix

package install

import (
	"fmt"
	"os"
	"syscall"
)

// ownership is a file's owner and group, kept across a rewrite: run as
// root for another user's HOME, install must not hand that user's
// settings file to root.
type ownership struct{ uid, gid int }

func ownerOf(path string) (*ownership, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil, nil
	}
	return &ownership{int(st.Uid), int(st.Gid)}, nil
}

// apply gives f the owner and group, when they are not already its own.
// A user who may not (not root, another owner) gets an error: the file
// would change hands.
func (o *ownership) apply(f *os.File) error {
	if o == nil {
		return nil
	}
	cur, err := ownerOf(f.Name())
	if err != nil || cur == nil || *cur == *o {
		return err
	}
	if err := f.Chown(o.uid, o.gid); err != nil {
		return fmt.Errorf("keeping owner %d and group %d: %w", o.uid, o.gid, err)
	}
	return nil
}

func (o *ownership) chown(path string) error {
	if o == nil {
		return nil
	}
	cur, err := ownerOf(path)
	if err != nil || cur == nil || *cur == *o {
		return err
	}
	return os.Chown(path, o.uid, o.gid)
}
