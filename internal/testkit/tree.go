package testkit

// Directory snapshots, so that a test can show that code pointed at a tree
// changed nothing: no entry renamed, truncated, replaced or added outside
// what the test allows.

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// Tree maps a path relative to the root to a description of its entry:
// type, size, inode and, for regular files, a content hash.
type Tree map[string]string

// SnapshotTree describes every entry under root without following symlinks
// and without opening anything that is not a regular file.
func SnapshotTree(t testing.TB, root string) Tree {
	t.Helper()
	tree := Tree{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		desc := fmt.Sprintf("%s size=%d", info.Mode().Type(), info.Size())
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			desc += fmt.Sprintf(" ino=%d", st.Ino)
		}
		switch {
		case info.Mode().IsRegular():
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			desc += " sha=" + hex.EncodeToString(sum[:8])
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			desc += " -> " + target
		}
		tree[rel] = desc
		return nil
	})
	if err != nil {
		t.Fatalf("snapshot of %s: %v", root, err)
	}
	return tree
}

// AssertSameTree fails the test unless after equals before, except for the
// entries named in allowed (relative paths), which may appear or change.
func AssertSameTree(t testing.TB, before, after Tree, allowed ...string) {
	t.Helper()
	var diffs []string
	for p, d := range before {
		if slices.Contains(allowed, p) {
			continue
		}
		if a, ok := after[p]; !ok {
			diffs = append(diffs, fmt.Sprintf("removed %s (%s)", p, d))
		} else if a != d {
			diffs = append(diffs, fmt.Sprintf("changed %s: %s -> %s", p, d, a))
		}
	}
	for p, a := range after {
		if _, ok := before[p]; !ok && !slices.Contains(allowed, p) {
			diffs = append(diffs, fmt.Sprintf("added %s (%s)", p, a))
		}
	}
	if len(diffs) > 0 {
		slices.Sort(diffs)
		t.Errorf("the tree changed:\n%s", strings.Join(diffs, "\n"))
	}
}
