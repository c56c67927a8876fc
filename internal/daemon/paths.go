// Package daemon keeps one warm decision process per user and policy
// configuration, so a native hook costs a socket round trip instead of
// loading and compiling the policy on every tool call.
//
// The server side takes a Hooker (the cmd wiring runs the adapters over the
// engine); the client side needs only the adapters' Answer and the standard
// library, so the small hook binary never links OPA.
package daemon

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
)

// ErrUnsafeDir marks a runtime directory another user could tamper with.
var ErrUnsafeDir = errors.New("daemon: unsafe runtime directory")

// RuntimeDir returns (creating it, mode 0700) the directory that holds the
// daemon's socket and locks: $XDG_RUNTIME_DIR/ahp-opa, else
// ahp-opa-<uid> under the system temp dir. A directory that is not ours or
// is open to others is refused, not repaired: in /tmp another user could
// have planted it.
func RuntimeDir() (string, error) {
	base := os.Getenv("XDG_RUNTIME_DIR")
	name := "ahp-opa"
	if base == "" {
		base = os.TempDir()
		name = "ahp-opa-" + strconv.Itoa(os.Getuid())
	}
	dir := filepath.Join(base, name)
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("daemon: runtime directory: %w", err)
	}
	return dir, checkDir(dir)
}

func checkDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("daemon: runtime directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%w: %s is not a directory", ErrUnsafeDir, dir)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%w: %s has mode %04o, want 0700", ErrUnsafeDir, dir, fi.Mode().Perm())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%w: %s belongs to uid %d", ErrUnsafeDir, dir, st.Uid)
	}
	return nil
}

// Paths names the files of one daemon.
type Paths struct {
	Socket string // the Unix socket, mode 0600
	Life   string // flock held by the running daemon for its whole life
	Start  string // flock held by the one client that starts a daemon
	Noted  string // exists once the user was told the daemon was bypassed
	Log    string // the daemons' stderr, capped at MaxLogBytes (RotateLog)
}

// PathsAt gives the files of the daemon listening on socket; they sit
// beside it.
func PathsAt(socket string) Paths {
	base := strings.TrimSuffix(socket, ".sock")
	dir := filepath.Dir(socket)
	return Paths{Socket: socket, Life: base + ".life", Start: base + ".start", Noted: filepath.Join(dir, "fallback-noted"), Log: filepath.Join(dir, "daemon.log")}
}

// CheckDir refuses a socket directory another user could tamper with.
func CheckDir(dir string) error { return checkDir(dir) }

// buildVersion can be set with -ldflags "-X .../daemon.buildVersion=v1.2.3";
// otherwise it comes from the build info.
var buildVersion string

// Version identifies this build for the handshake: the module version and,
// for development builds, the VCS revision, time and dirty flag, so two
// different local builds do not mistake each other for the same one.
func Version() string {
	if buildVersion != "" {
		return buildVersion
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision", "vcs.time":
			v += " " + s.Value
		case "vcs.modified":
			if s.Value == "true" {
				v += " dirty"
			}
		}
	}
	return v
}
