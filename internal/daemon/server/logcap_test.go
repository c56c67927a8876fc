package server

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ahp-opa/ahp-opa/internal/testkit"
)

// TestCapLog: the daemon's stderr, when it is daemon.log, stays under the
// cap: past it the file becomes daemon.log.1 (replacing the one before)
// and the descriptor writes to a fresh daemon.log. A stderr that is some
// other file is never touched.
func TestCapLog(t *testing.T) {
	const max = 100
	big := strings.Repeat("x", max+1)
	for _, tc := range []struct {
		name     string
		size     string // content of the file stderr is
		other    bool   // stderr is a file of the user's, not daemon.log
		rotated  bool   // another daemon already rotated it
		log, one string // afterwards, after writing "next"
	}{
		{"under the cap", "small\n", false, false, "small\nnext", "old"},
		{"over the cap", big, false, false, "next", big},
		{"already rotated by another daemon", big, false, true, "fresh\nnext", big},
		{"stderr is another file", big, true, false, "", "old"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			log := filepath.Join(dir, "daemon.log")
			os.WriteFile(log+".1", []byte("old"), 0o600)
			target := log
			if tc.other {
				target = filepath.Join(dir, "mine.txt")
			}
			if err := os.WriteFile(target, []byte(tc.size), 0o600); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(target, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if tc.rotated {
				os.Rename(log, log+".1")
				os.WriteFile(log, []byte("fresh\n"), 0o600)
			}
			capLog(int(f.Fd()), log, max)
			if _, err := syscall.Write(int(f.Fd()), []byte("next")); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(log)
			one, _ := os.ReadFile(log + ".1")
			if string(got) != tc.log || string(one) != tc.one {
				t.Errorf("daemon.log %q, daemon.log.1 %.20q; want %q, %.20q", got, one, tc.log, tc.one)
			}
			if tc.other {
				mine, _ := os.ReadFile(target)
				if string(mine) != big+"next" {
					t.Errorf("the user's file became %.20q", mine)
				}
			}
		})
	}
}

// TestCapLogLeavesOthersAlone: nothing outside the daemon's two log
// files changes, whatever the cap does.
func TestCapLogLeavesOthersAlone(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "daemon.log")
	os.WriteFile(filepath.Join(dir, "d-x.life"), nil, 0o600)
	os.WriteFile(log, []byte(strings.Repeat("y", 10)), 0o600)
	before := testkit.SnapshotTree(t, dir)
	f, _ := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0)
	defer f.Close()
	capLog(int(f.Fd()), log, 5)
	testkit.AssertSameTree(t, before, testkit.SnapshotTree(t, dir), "daemon.log", "daemon.log.1")
}
