//go:build !unix

package install

import "os"

// ownership is not tracked where files have no Unix owner.
type ownership struct{}

func ownerOf(string) (*ownership, error) { return nil, nil }
func (*ownership) apply(*os.File) error  { return nil }
func (*ownership) chown(string) error    { return nil }
