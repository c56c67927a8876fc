package daemon

import (
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// Launch is what a hook resolved about the daemon it may use: the
// daemon's arguments and environment with every path made absolute, the
// directory it runs in, and the key that names it. Hooks whose effective
// configuration differs get different keys, hence different daemons;
// hooks that mean the same files share one, whatever their directory.
type Launch struct {
	Args []string // "daemon" and the policy flags; --socket is added by the caller
	Env  []string // the environment, AHP_OPA_* paths made absolute
	Dir  string   // the daemon's working directory
	Key  []string // what the daemon's files are named after (PathsFor)
}

// pathSettings are the AHP_OPA_* variables that name files. A relative
// value means a file in the hook's working directory, so the daemon gets
// it made absolute: it must never depend on the directory of the hook
// that happened to start it.
var pathSettings = map[string]bool{
	"AHP_OPA_POLICY":            true, // comma-separated list
	"AHP_OPA_CANARY":            true, // comma-separated list
	"AHP_OPA_AUDIT__FILE__PATH": true,
	"AHP_OPA_TOKEN_FILE":        true,
	"AHP_OPA_TLS_CERT":          true,
	"AHP_OPA_TLS_KEY":           true,
	"AHP_OPA_VERIFICATION_KEY":  true, // a PEM key or a file holding one
}

// policySettings are the path variables whose files are the policy: their
// identities go into the key, as those of --policy do.
var policySettings = map[string]bool{"AHP_OPA_POLICY": true, "AHP_OPA_CANARY": true}

// Resolve resolves a hook's configuration against its working directory
// cwd (absolute): the --config file, the --policy paths, --with-builtin
// and the environment. The key holds
//
//   - the daemon's arguments, paths absolute;
//   - every AHP_OPA_* setting but the token, paths absolute;
//   - HOME, which the decisions expand ~ with and call the home
//     directory when the session's directories do not name one;
//   - the identity (device and inode) of the configuration file and of
//     every policy path, so a path that now names another file (a
//     symlink moved, a checkout replaced) gets a new daemon;
//   - with a configuration file, the working directory: a file may name
//     relative paths, which resolve there, so only hooks started in the
//     same directory share that daemon, which runs in it.
//
// Without a configuration file every path is absolute and the daemon runs
// in "/", so hooks from any directory share it.
func Resolve(cwd, configPath string, policies []string, withBuiltin bool, environ []string) Launch {
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return filepath.Clean(p)
		}
		return filepath.Join(cwd, p)
	}
	l := Launch{Args: []string{"daemon"}, Dir: "/"}
	var files []string // whose identity counts
	if configPath != "" {
		c := abs(configPath)
		l.Args = append(l.Args, "--config", c)
		files = append(files, c)
		l.Dir = cwd
	}
	for _, p := range policies {
		a := abs(p)
		l.Args = append(l.Args, "--policy", a)
		files = append(files, a)
	}
	if withBuiltin {
		l.Args = append(l.Args, "--with-builtin")
	}
	var settings []string
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, envPrefix) {
			l.Env = append(l.Env, kv)
			if name == "HOME" {
				settings = append(settings, kv)
			}
			continue
		}
		if pathSettings[name] && !isPEM(value) && value != "-" {
			parts := strings.Split(value, ",")
			for i, p := range parts {
				// A URL is no file of the hook's directory.
				if p = strings.TrimSpace(p); p != "" && !strings.Contains(p, "://") {
					parts[i] = abs(p)
					if policySettings[name] {
						files = append(files, parts[i])
					}
				}
			}
			value = strings.Join(parts, ",")
			kv = name + "=" + value
		}
		l.Env = append(l.Env, kv)
		// The bearer token is a secret, not a setting of the decision.
		if name != "AHP_OPA_TOKEN" {
			settings = append(settings, kv)
		}
	}
	slices.Sort(settings)
	l.Key = append(slices.Clone(l.Args), settings...)
	for _, f := range files {
		l.Key = append(l.Key, "file "+f+" "+fileID(f))
	}
	if l.Dir != "/" {
		l.Key = append(l.Key, "cwd "+l.Dir)
	}
	return l
}

// envPrefix starts every variable that configures ahp-opa.
const envPrefix = "AHP_OPA_"

func isPEM(v string) bool { return strings.Contains(v, "-----BEGIN") }

// fileID is the device and inode of path (symlinks followed), or why
// there is none: a missing file is part of the configuration too.
func fileID(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return "absent"
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprintf("dev=%d ino=%d", st.Dev, st.Ino)
	}
	return "present"
}

// PathsFor gives the files of the daemon serving the configuration named
// by key (Launch.Key): hooks configured alike share a daemon, hooks with
// another configuration get their own. The name is 96 bits of SHA-256,
// so no configuration can be crafted to land on another's daemon, and
// short enough to keep the socket's path within the 104 bytes a Unix
// socket address holds on every system.
func PathsFor(dir string, key []string) Paths {
	h := sha256.New()
	for _, k := range key {
		// Length-prefixed: no two key lists encode alike.
		fmt.Fprintf(h, "%d:%s", len(k), k)
	}
	id := strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(h.Sum(nil)[:12]))
	return PathsAt(filepath.Join(dir, "d-"+id+".sock"))
}
