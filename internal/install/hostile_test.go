package install

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ahp-opa/ahp-opa/internal/testkit"
)

// TestAgentTimeoutAboveHookDeadline: the agent waits longer than the hook
// takes at most (its --timeout, plus a margin), so the hook always
// answers, a deny if need be: Codex, Gemini CLI and Copilot run a call
// whose hook they killed. Each agent in its own unit (CONTRACTS.md:
// seconds, Gemini CLI milliseconds).
func TestAgentTimeoutAboveHookDeadline(t *testing.T) {
	for _, tc := range []struct {
		name, agent, cmd string
		given            time.Duration
		field            string
		want             float64
		warning          string
	}{
		{"codex, --timeout 20s", "codex", "ahp-opa-hook --timeout 20s", 0, "timeout", 21, ""},
		{"gemini-cli in ms", "gemini-cli", "/opt/ahp-opa-hook --timeout=20s", 0, "timeout", 21000, ""},
		{"copilot", "copilot", "ahp-opa-hook --fail-open --timeout 20s", 0, "timeoutSec", 21, ""},
		{"claude-code, default deadline", "claude-code", "ahp-opa-hook", 0, "timeout", 10, ""},
		{"cursor, short deadline", "cursor", "ahp-opa-hook --timeout 1500ms", 0, "timeout", 10, ""},
		{"rounded up", "codex", "ahp-opa-hook --timeout 20500ms", 0, "timeout", 22, ""},
		{"ahp-opa hook", "codex", "'/usr/local/bin/ahp-opa' hook --timeout 30s", 0, "timeout", 31, ""},
		{"given above", "codex", "ahp-opa-hook --timeout 20s", 40 * time.Second, "timeout", 40, ""},
		{"given below: warned", "codex", "ahp-opa-hook --timeout 20s", 15 * time.Second, "timeout", 15,
			"warning: the agent timeout 15s is not above the hook's own deadline 20s plus 1s: when the hook needs its whole time the agent kills it first and Codex runs the call"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := opts(t, tc.agent)
			o.Command, o.AgentTimeout, o.Observe = tc.cmd, tc.given, true
			res, err := Apply(o)
			if err != nil {
				t.Fatal(err)
			}
			path, _ := Path(o)
			hs := ours(t, tc.agent, decode(t, path))
			if len(hs) != 1 || hs[0][tc.field] != tc.want {
				t.Errorf("handlers %v, want %s %v", hs, tc.field, tc.want)
			}
			for _, ev := range agents[tc.agent].observe {
				for _, h := range oursAt(t, tc.agent, decode(t, path), ev) {
					if h[tc.field] != tc.want {
						t.Errorf("%s handler %v, want %s %v", ev, h, tc.field, tc.want)
					}
				}
			}
			var warnings []string
			for _, n := range res.Notes {
				if strings.HasPrefix(n, "warning: ") {
					warnings = append(warnings, n)
				}
			}
			if strings.Join(warnings, "\n") != tc.warning {
				t.Errorf("warnings %q, want %q", warnings, tc.warning)
			}
		})
	}
}

// TestHookCommandTimeoutUnreadable: a hook command whose --timeout does
// not parse (or is written -timeout) would deny every call; install says
// so and writes nothing.
func TestHookCommandTimeoutUnreadable(t *testing.T) {
	for _, cmd := range []string{"ahp-opa-hook --timeout soon", "ahp-opa-hook --timeout", "ahp-opa-hook --timeout=-3s",
		// One dash: neither hook knows the flag, and refuses every call.
		"ahp-opa-hook -timeout 20s", "ahp-opa hook -timeout=20s"} {
		t.Run(cmd, func(t *testing.T) {
			o := opts(t, "codex")
			o.Command = cmd
			before := testkit.SnapshotTree(t, o.Project)
			if _, err := Apply(o); !errors.Is(err, ErrHookCommand) {
				t.Errorf("Apply: %v, want ErrHookCommand", err)
			}
			testkit.AssertSameTree(t, before, testkit.SnapshotTree(t, o.Project))
		})
	}
}

// TestInstallRefusesHostileFiles: what sits in place of a settings file
// is read with bounds and never followed out of the project: a FIFO is
// refused at once (not waited on), a project file or directory linked
// outside the project is refused, naming it, and nothing anywhere changes.
func TestInstallRefusesHostileFiles(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, path, outside string)
		err   error
		says  string // in the error, with the path
	}{
		{"a FIFO", func(t *testing.T, path, _ string) {
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Fatal(err)
			}
		}, ErrUnsafeFile, "is a named pipe (FIFO), not a regular file"},
		{"a directory", func(t *testing.T, path, _ string) {
			os.Mkdir(path, 0o755)
		}, ErrUnsafeFile, "is a directory, not a regular file"},
		{"a symlink out of the project", func(t *testing.T, path, outside string) {
			foreign := filepath.Join(outside, "victim.json")
			os.WriteFile(foreign, []byte(existing["codex"]), 0o644)
			os.Symlink(foreign, path)
		}, ErrUnsafeFile, "victim.json, outside the project"},
		{"a symlink to a missing file out of the project", func(t *testing.T, path, outside string) {
			os.Symlink(filepath.Join(outside, "new.json"), path)
		}, ErrUnsafeFile, "new.json, outside the project"},
		{"the settings directory linked out", func(t *testing.T, path, outside string) {
			os.Remove(filepath.Dir(path))
			os.Symlink(outside, filepath.Dir(path))
		}, ErrUnsafeFile, "hooks.json, outside the project"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := opts(t, "codex")
			outside := t.TempDir()
			path, _ := Path(o)
			os.MkdirAll(filepath.Dir(path), 0o755)
			tc.plant(t, path, outside)
			beforeP, beforeO := testkit.SnapshotTree(t, o.Project), testkit.SnapshotTree(t, outside)
			done := make(chan error, 1)
			go func() { _, err := Apply(o); done <- err }()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("install hangs") // the bound of a failure, not a timed assertion
			}
			if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.says) || !strings.HasSuffix(err.Error(), "nothing was changed") {
				t.Errorf("Apply: %v; want %v naming %s and saying %q", err, tc.err, path, tc.says)
			}
			testkit.AssertSameTree(t, beforeP, testkit.SnapshotTree(t, o.Project))
			testkit.AssertSameTree(t, beforeO, testkit.SnapshotTree(t, outside))
		})
	}
}

// TestInstallKeepsOwner: run as root for another user's HOME, install
// keeps the settings file's owner, group and mode; the backup and any
// file or directory it creates belong to the owner of the directory it
// is made in.
func TestInstallKeepsOwner(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to own files as another user")
	}
	const uid, gid = 65534, 65533
	owned := func(t *testing.T, p string) string {
		t.Helper()
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		return strings.Join([]string{fi.Mode().Perm().String(), strconv.Itoa(int(st.Uid)), strconv.Itoa(int(st.Gid))}, " ")
	}
	for _, tc := range []struct {
		name     string
		existing bool
	}{
		{"existing file", true},
		{"new file and directory", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := opts(t, "claude-code")
			o.Scope, o.Home = User, t.TempDir()
			os.Chown(o.Home, uid, gid)
			path, _ := Path(o)
			if tc.existing {
				os.MkdirAll(filepath.Dir(path), 0o750)
				os.WriteFile(path, []byte(existing["claude-code"]), 0o640)
				os.Chown(filepath.Dir(path), uid, gid)
				os.Chown(path, uid, gid)
			}
			res, err := Apply(o)
			if err != nil {
				t.Fatal(err)
			}
			want := "-rw-r----- 65534 65533"
			if !tc.existing {
				want = "-rw------- 65534 65533"
				if got := owned(t, filepath.Dir(path)); got != "-rwxr-xr-x 65534 65533" {
					t.Errorf("new directory %s, want -rwxr-xr-x 65534 65533", got)
				}
			}
			if got := owned(t, path); got != want {
				t.Errorf("settings file %s, want %s", got, want)
			}
			if tc.existing {
				if got := owned(t, res.Backup); got != "-rw------- 65534 65533" {
					t.Errorf("backup %s, want -rw------- 65534 65533", got)
				}
			}
		})
	}
}

// FuzzHookDeadline: any hook command gives a positive deadline or an
// ErrHookCommand, never a panic.
func FuzzHookDeadline(f *testing.F) {
	for _, s := range []string{"ahp-opa-hook --timeout 20s", "ahp-opa hook --timeout=1m", "ahp-opa-hook --timeout", "'/a b/ahp-opa' hook", "x --timeout -1s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		d, err := HookDeadline(cmd)
		if (err == nil) != (d > 0) || (err != nil && !errors.Is(err, ErrHookCommand)) {
			t.Fatalf("HookDeadline(%q) = %s, %v", cmd, d, err)
		}
	})
}

// TestAgentTimeoutFollowsConfiguredDeadline: 'ahp-opa hook' also takes its
// deadline from hook.timeout, in its --config file or in an
// AHP_OPA_HOOK__TIMEOUT assignment on the command line, and the agent
// must wait longer than that too; a file install cannot read registers
// the default with a warning.
func TestAgentTimeoutFollowsConfiguredDeadline(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "ahp-opa.yaml")
	if err := os.WriteFile(cfg, []byte("hook:\n  timeout: 30s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, cmd string
		want      float64
		warning   string
	}{
		{"hook.timeout in --config", "/usr/bin/ahp-opa hook --config " + cfg, 31, ""},
		{"hook.timeout in --config=", "ahp-opa hook --config=" + cfg, 31, ""},
		{"environment assignment", "AHP_OPA_HOOK__TIMEOUT=40s ahp-opa hook", 41, ""},
		{"env and an assignment", "env AHP_OPA_HOOK__TIMEOUT=40s /usr/bin/ahp-opa hook --config " + cfg, 41, ""},
		{"--timeout wins over the file", "ahp-opa hook --config " + cfg + " --timeout 12s", 13, ""},
		{"ahp-opa-hook keeps its --timeout", "ahp-opa-hook --config " + cfg, 10, ""},
		{"unreadable file", "ahp-opa hook --config " + filepath.Join(dir, "missing.yaml"), 10,
			"warning: the hook's deadline could not be read from " + filepath.Join(dir, "missing.yaml") + " (it is taken as 9s): pass --agent-timeout above its hook.timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := opts(t, "codex")
			o.Command = tc.cmd
			res, err := Apply(o)
			if err != nil {
				t.Fatal(err)
			}
			path, _ := Path(o)
			if hs := ours(t, "codex", decode(t, path)); len(hs) != 1 || hs[0]["timeout"] != tc.want {
				t.Errorf("handlers %v, want timeout %v", hs, tc.want)
			}
			var warnings []string
			for _, n := range res.Notes {
				if strings.HasPrefix(n, "warning: ") {
					warnings = append(warnings, n)
				}
			}
			if strings.Join(warnings, "\n") != tc.warning {
				t.Errorf("warnings %q, want %q", warnings, tc.warning)
			}
		})
	}
}

// TestHookCommandNotOurs: a hook command whose entry install would not
// recognise again (a wrapper script) is refused, since a second install
// would add a second entry and --uninstall would leave it; an env prefix
// is recognised.
func TestHookCommandNotOurs(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		ours bool
	}{
		{"/opt/bin/guard.sh", false},
		{"sh -c ahp-opa-hook", false},
		{"AHP_OPA_POLICY=/p ahp-opa-hook", true},
		{"env AHP_OPA_HOOK__TIMEOUT=20s /usr/bin/ahp-opa hook", true},
		{"env A=1 B=2 '/opt/my tools/ahp-opa-hook' --timeout 20s", true},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			o := opts(t, "codex")
			o.Command = tc.cmd
			_, err := Apply(o)
			if tc.ours {
				if err != nil {
					t.Fatal(err)
				}
				// A second install keeps one entry; uninstall removes it.
				if _, err := Apply(o); err != nil {
					t.Fatal(err)
				}
				path, _ := Path(o)
				if hs := ours(t, "codex", decode(t, path)); len(hs) != 1 {
					t.Fatalf("after two installs: %v, want one entry", hs)
				}
				o.Uninstall = true
				if _, err := Apply(o); err != nil {
					t.Fatal(err)
				}
				if hs := ours(t, "codex", decode(t, path)); len(hs) != 0 {
					t.Errorf("after uninstall: %v", hs)
				}
				return
			}
			if !errors.Is(err, ErrHookCommand) {
				t.Fatalf("err = %v, want ErrHookCommand", err)
			}
			if p, _ := Path(o); fileExists(p) {
				t.Errorf("%s written for a refused command", p)
			}
		})
	}
}

func fileExists(p string) bool { _, err := os.Lstat(p); return err == nil }
