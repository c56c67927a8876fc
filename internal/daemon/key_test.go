package daemon

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ahp-opa/ahp-opa/internal/testkit"
)

// hookSetup is one hook's configuration: where it runs and what it says.
type hookSetup struct {
	cwd, config string
	policies    []string
	env         []string
}

// TestResolveKeysOnEffectiveConfiguration: two hooks share a daemon
// exactly when their effective configuration is the same: the same files
// (by absolute path and identity) and the same settings, wherever they
// run. The daemon gets absolute paths only.
func TestResolveKeysOnEffectiveConfiguration(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"a/rules", "b/rules", "shared"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(root, "shared", "cfg.yaml")
	if err := os.WriteFile(cfg, []byte("log_level: warn\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	before := testkit.SnapshotTree(t, root)

	for _, tc := range []struct {
		name  string
		x, y  hookSetup
		share bool
	}{
		{"relative AHP_OPA_POLICY in two projects", hookSetup{cwd: a, env: []string{"AHP_OPA_POLICY=rules"}}, hookSetup{cwd: b, env: []string{"AHP_OPA_POLICY=rules"}}, false},
		{"relative --policy in two projects", hookSetup{cwd: a, policies: []string{"rules"}}, hookSetup{cwd: b, policies: []string{"rules"}}, false},
		{"absolute AHP_OPA_POLICY from two directories", hookSetup{cwd: a, env: []string{"AHP_OPA_POLICY=" + a + "/rules"}}, hookSetup{cwd: b, env: []string{"AHP_OPA_POLICY=" + a + "/rules"}}, true},
		{"one directory named two ways", hookSetup{cwd: a, policies: []string{"rules"}}, hookSetup{cwd: root, policies: []string{"a/rules/"}}, true},
		{"a setting that changes decisions", hookSetup{cwd: a, env: []string{"AHP_OPA_ON_RULE_ERROR=deny"}}, hookSetup{cwd: a, env: []string{"AHP_OPA_ON_RULE_ERROR=ignore"}}, false},
		{"settings in another order", hookSetup{cwd: a, env: []string{"AHP_OPA_LOG_LEVEL=warn", "AHP_OPA_SHADOW=x"}}, hookSetup{cwd: b, env: []string{"AHP_OPA_SHADOW=x", "AHP_OPA_LOG_LEVEL=warn"}}, true},
		{"the token is no setting", hookSetup{cwd: a, env: []string{"AHP_OPA_TOKEN=one", "HOME=/home/u"}}, hookSetup{cwd: a, env: []string{"AHP_OPA_TOKEN=two", "HOME=/home/u"}}, true},
		// The policy expands ~ and finds the home directory with HOME when
		// the session's directories do not show it: rm -rf of one home is
		// "the home directory" only to a daemon started with that HOME.
		{"another home directory", hookSetup{cwd: a, env: []string{"HOME=/home/u"}}, hookSetup{cwd: a, env: []string{"HOME=/srv/agent"}}, false},
		{"other variables are no setting", hookSetup{cwd: a, env: []string{"HOME=/home/u", "TERM=xterm"}}, hookSetup{cwd: a, env: []string{"HOME=/home/u", "TERM=dumb"}}, true},
		{"one config file from two directories", hookSetup{cwd: a, config: cfg}, hookSetup{cwd: b, config: cfg}, false},
		{"one config file from one directory", hookSetup{cwd: a, config: cfg}, hookSetup{cwd: a, config: "../shared/cfg.yaml"}, true},
		{"with and without a config file", hookSetup{cwd: a}, hookSetup{cwd: a, config: cfg}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := Resolve(tc.x.cwd, tc.x.config, tc.x.policies, false, tc.x.env)
			y := Resolve(tc.y.cwd, tc.y.config, tc.y.policies, false, tc.y.env)
			if share := PathsFor("/r", x.Key) == PathsFor("/r", y.Key); share != tc.share {
				t.Errorf("share = %v, want %v\nkey x: %q\nkey y: %q", share, tc.share, x.Key, y.Key)
			}
			for _, l := range []Launch{x, y} {
				if strings.Contains(strings.Join(l.Key, "\n"), "AHP_OPA_TOKEN") {
					t.Errorf("the token is in the key: %q", l.Key)
				}
				for _, arg := range l.Args[1:] {
					if !strings.HasPrefix(arg, "--") && !filepath.IsAbs(arg) {
						t.Errorf("daemon argument %q is relative", arg)
					}
				}
			}
		})
	}
	testkit.AssertSameTree(t, before, testkit.SnapshotTree(t, root))
}

// TestResolveLaunch: the exact arguments, environment and directory a
// daemon is started with. Only a configuration file, which may name
// relative paths, ties the daemon to the hook's directory.
func TestResolveLaunch(t *testing.T) {
	for _, tc := range []struct {
		name          string
		cwd, config   string
		policies      []string
		builtin       bool
		env           []string
		args, wantEnv []string
		dir           string
	}{
		{
			name: "flags and environment", cwd: "/p", policies: []string{"r.rego", "/abs"}, builtin: true,
			env:     []string{"HOME=/h", "AHP_OPA_POLICY=rules, /x ,oci://reg/p", "AHP_OPA_CANARY=c", "AHP_OPA_AUDIT__FILE__PATH=audit.jsonl", "AHP_OPA_TOKEN=t", "AHP_OPA_LOG_LEVEL=debug"},
			args:    []string{"daemon", "--policy", "/p/r.rego", "--policy", "/abs", "--with-builtin"},
			wantEnv: []string{"HOME=/h", "AHP_OPA_POLICY=/p/rules,/x,oci://reg/p", "AHP_OPA_CANARY=/p/c", "AHP_OPA_AUDIT__FILE__PATH=/p/audit.jsonl", "AHP_OPA_TOKEN=t", "AHP_OPA_LOG_LEVEL=debug"},
			dir:     "/",
		},
		{
			name: "config file", cwd: "/p", config: "c.yaml",
			env:     []string{"AHP_OPA_AUDIT__FILE__PATH=-", "AHP_OPA_VERIFICATION_KEY=-----BEGIN PUBLIC KEY-----\nx"},
			args:    []string{"daemon", "--config", "/p/c.yaml"},
			wantEnv: []string{"AHP_OPA_AUDIT__FILE__PATH=-", "AHP_OPA_VERIFICATION_KEY=-----BEGIN PUBLIC KEY-----\nx"},
			dir:     "/p",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := Resolve(tc.cwd, tc.config, tc.policies, tc.builtin, tc.env)
			if !slices.Equal(l.Args, tc.args) || !slices.Equal(l.Env, tc.wantEnv) || l.Dir != tc.dir {
				t.Errorf("got args %q env %q dir %q\nwant args %q env %q dir %q", l.Args, l.Env, l.Dir, tc.args, tc.wantEnv, tc.dir)
			}
		})
	}
}

// TestResolveFollowsFileIdentity: the same path naming another file (a
// checkout replaced, a symlink moved) is another configuration.
func TestResolveFollowsFileIdentity(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "policy.rego")
	if err := os.WriteFile(p, []byte("package x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	first := Resolve(dir, "", []string{"policy.rego"}, false, nil)
	// Edited in place: the same file, the same daemon (which reloads it).
	if err := os.WriteFile(p, []byte("package y\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if edited := Resolve(dir, "", []string{"policy.rego"}, false, nil); !slices.Equal(first.Key, edited.Key) {
		t.Errorf("an edit in place changed the key: %q vs %q", first.Key, edited.Key)
	}
	tmp := filepath.Join(dir, "new.rego")
	if err := os.WriteFile(tmp, []byte("package z\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
	if replaced := Resolve(dir, "", []string{"policy.rego"}, false, nil); slices.Equal(first.Key, replaced.Key) {
		t.Errorf("a replaced file kept the key %q", first.Key)
	}
}

func TestPathsForSeparatesConfigurations(t *testing.T) {
	a := PathsFor("/r", []string{"--policy", "/a.rego"})
	b := PathsFor("/r", []string{"--policy", "/b.rego"})
	if a.Socket == b.Socket || a.Life == b.Life || a.Start == b.Start {
		t.Errorf("two configurations share files: %+v %+v", a, b)
	}
	if a != PathsFor("/r", []string{"--policy", "/a.rego"}) {
		t.Error("PathsFor is not deterministic")
	}
	// No two key lists encode alike.
	if PathsFor("/r", []string{"a", "b"}) == PathsFor("/r", []string{"a\x00b"}) || PathsFor("/r", []string{"ab"}) == PathsFor("/r", []string{"a", "b"}) {
		t.Error("key lists joined ambiguously")
	}
}
