package bundles_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-opa/ahp-opa/bundles"
)

// TestReloadLocalSources changes local sources in every way a user, an
// editor, a CI job or Kubernetes does, and checks that the next decision
// follows; fsnotify alone must see each change (rescans are off).
func TestReloadLocalSources(t *testing.T) {
	cases := []struct {
		name   string
		setup  func(t *testing.T, dir string) []string // writes v1, returns --policy paths
		change func(t *testing.T, dir string)
		tool   string
		before []string
		after  []string
	}{
		{
			name:   "edit in place",
			setup:  oneFile,
			change: func(t *testing.T, dir string) { put(t, filepath.Join(dir, "a.rego"), rule("a", "A", "a2")) },
			tool:   "A", before: []string{"a1"}, after: []string{"a2"},
		},
		{
			name:   "new file",
			setup:  oneFile,
			change: func(t *testing.T, dir string) { put(t, filepath.Join(dir, "b.rego"), rule("b", "A", "b1")) },
			tool:   "A", before: []string{"a1"}, after: []string{"a1", "b1"},
		},
		{
			name:  "new nested subdirectories",
			setup: oneFile,
			change: func(t *testing.T, dir string) {
				put(t, filepath.Join(dir, "team", "x", "c.rego"), rule("c", "A", "c1"))
			},
			tool: "A", before: []string{"a1"}, after: []string{"a1", "c1"},
		},
		{
			name: "rename-save",
			setup: func(t *testing.T, dir string) []string {
				paths := oneFile(t, dir)
				put(t, filepath.Join(dir, "sub", "s.rego"), rule("s", "S", "s1"))
				return paths
			},
			change: func(t *testing.T, dir string) {
				// What vim and most IDEs do: write a new file, rename it over.
				tmp := filepath.Join(dir, "sub", ".s.rego.swp")
				put(t, tmp, rule("s", "S", "s2"))
				must(t, os.Rename(tmp, filepath.Join(dir, "sub", "s.rego")))
			},
			tool: "S", before: []string{"s1"}, after: []string{"s2"},
		},
		{
			name: "deleted file is unloaded",
			setup: func(t *testing.T, dir string) []string {
				put(t, filepath.Join(dir, "b.rego"), rule("b", "A", "b1"))
				return oneFile(t, dir)
			},
			change: func(t *testing.T, dir string) { must(t, os.Remove(filepath.Join(dir, "b.rego"))) },
			tool:   "A", before: []string{"a1", "b1"}, after: []string{"a1"},
		},
		{
			name: "deleted rule is unloaded",
			setup: func(t *testing.T, dir string) []string {
				put(t, filepath.Join(dir, "a.rego"), rule("a", "A", "a1")+"deny contains \"a-extra\" if input.tool.name == \"A\"\n")
				return []string{dir}
			},
			change: func(t *testing.T, dir string) { put(t, filepath.Join(dir, "a.rego"), rule("a", "A", "a1")) },
			tool:   "A", before: []string{"a-extra", "a1"}, after: []string{"a1"},
		},
		{
			name: "data document",
			setup: func(t *testing.T, dir string) []string {
				put(t, filepath.Join(dir, "d.rego"), "package ahp.tool.before.d\n\ndeny contains data.d.reason if input.tool.name == \"D\"\n")
				put(t, filepath.Join(dir, "d", "data.json"), `{"reason": "d1"}`)
				return []string{dir}
			},
			change: func(t *testing.T, dir string) { put(t, filepath.Join(dir, "d", "data.json"), `{"reason": "d2"}`) },
			tool:   "D", before: []string{"d1"}, after: []string{"d2"},
		},
		{
			name: "single file path, rename-save",
			setup: func(t *testing.T, dir string) []string {
				put(t, filepath.Join(dir, "only.rego"), rule("o", "O", "o1"))
				put(t, filepath.Join(dir, "other.rego"), rule("x", "O", "not served"))
				return []string{filepath.Join(dir, "only.rego")}
			},
			change: func(t *testing.T, dir string) {
				put(t, filepath.Join(dir, "only.rego.new"), rule("o", "O", "o2"))
				must(t, os.Rename(filepath.Join(dir, "only.rego.new"), filepath.Join(dir, "only.rego")))
			},
			tool: "O", before: []string{"o1"}, after: []string{"o2"},
		},
		{
			name: "kubernetes configmap symlink swap",
			setup: func(t *testing.T, dir string) []string {
				put(t, filepath.Join(dir, "..2026_01_01", "k.rego"), rule("k", "K", "k1"))
				must(t, os.Symlink("..2026_01_01", filepath.Join(dir, "..data")))
				must(t, os.Symlink(filepath.Join("..data", "k.rego"), filepath.Join(dir, "k.rego")))
				return []string{dir}
			},
			change: func(t *testing.T, dir string) {
				// The kubelet's atomic writer: new timestamped directory, new
				// ..data symlink renamed over the old one, old directory gone.
				put(t, filepath.Join(dir, "..2026_01_02", "k.rego"), rule("k", "K", "k2"))
				must(t, os.Symlink("..2026_01_02", filepath.Join(dir, "..data_tmp")))
				must(t, os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")))
				must(t, os.RemoveAll(filepath.Join(dir, "..2026_01_01")))
			},
			tool: "K", before: []string{"k1"}, after: []string{"k2"},
		},
		{
			name: "bundle tarball replaced",
			setup: func(t *testing.T, dir string) []string {
				path := filepath.Join(dir, "bundle.tar.gz")
				bundleSpec{revision: "v1", files: map[string]string{"t.rego": rule("t", "T", "t1")}}.writeTarball(t, path)
				return []string{path}
			},
			change: func(t *testing.T, dir string) {
				bundleSpec{revision: "v2", files: map[string]string{"t.rego": rule("t", "T", "t2")}}.writeTarball(t, filepath.Join(dir, "bundle.tar.gz"))
			},
			tool: "T", before: []string{"t1"}, after: []string{"t2"},
		},
		{
			name: "bundle directory",
			setup: func(t *testing.T, dir string) []string {
				put(t, filepath.Join(dir, "b", ".manifest"), `{"revision": "r1", "roots": ["ahp/tool/before/bd"]}`)
				put(t, filepath.Join(dir, "b", "p.rego"), rule("bd", "BD", "bd1"))
				return []string{filepath.Join(dir, "b")}
			},
			change: func(t *testing.T, dir string) { put(t, filepath.Join(dir, "b", "p.rego"), rule("bd", "BD", "bd2")) },
			tool:   "BD", before: []string{"bd1"}, after: []string{"bd2"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			s := newStand(t, bundles.Options{Paths: c.setup(t, dir), Watch: true, RescanInterval: -1})
			if got := s.reasons(c.tool); !equalStrings(got, c.before) {
				t.Fatalf("before: %q, want %q", got, c.before)
			}
			c.change(t, dir)
			s.waitReasons(c.tool, c.after...)
			st := s.rl.Status()
			if st.Revision != s.eng.Snapshot().Revision || st.Reloads[bundles.Activated] < 2 || st.LastError != nil {
				t.Errorf("status %+v; engine has revision %q", st, s.eng.Snapshot().Revision)
			}
		})
	}
}

func oneFile(t *testing.T, dir string) []string {
	put(t, filepath.Join(dir, "a.rego"), rule("a", "A", "a1"))
	return []string{dir}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func equalStrings(a, b []string) bool { return strings.Join(a, "\x00") == strings.Join(b, "\x00") }

// TestReloadKeepsLastGood: a broken version is refused with its file and
// line, the last good policy keeps deciding, and the fix goes through.
func TestReloadKeepsLastGood(t *testing.T) {
	cases := []struct {
		name    string
		broken  string
		wantErr string
	}{
		{"syntax error", "package ahp.tool.before.a\n\ndeny contains if {\n", "a.rego:3"},
		{"compile error", "package ahp.tool.before.a\n\ndeny contains x if { x := undefined_fn(1) }\n", "a.rego:3"},
		{"deny is not a set", "package ahp.tool.before.a\n\ndeny := \"everything\"\n", "a.rego:3"},
		{"no rule left", "package ahp.tool.before.a\n", "no deny rule"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			s := newStand(t, bundles.Options{Paths: oneFile(t, dir), Watch: true, RescanInterval: -1})
			good := s.rl.Status().Revision
			put(t, filepath.Join(dir, "a.rego"), c.broken)
			ev := s.waitEvent(bundles.Failed, 0)
			if ev.Err == nil || !strings.Contains(ev.Err.Error(), c.wantErr) {
				t.Errorf("error %v, want it to mention %q", ev.Err, c.wantErr)
			}
			if got := s.reasons("A"); !equalStrings(got, []string{"a1"}) {
				t.Errorf("after a broken write: %q, want the last good answer", got)
			}
			st := s.rl.Status()
			if st.Revision != good || st.LastError == nil || st.Reloads[bundles.Failed] != 1 {
				t.Errorf("status %+v, want revision %s kept and one failure", st, good)
			}
			put(t, filepath.Join(dir, "a.rego"), rule("a", "A", "fixed"))
			s.waitReasons("A", "fixed")
		})
	}
}

// TestReloadRescanOnly: without change events (network file systems), the
// periodic rescan finds the change by its content hash.
func TestReloadRescanOnly(t *testing.T) {
	dir := t.TempDir()
	s := newStand(t, bundles.Options{Paths: oneFile(t, dir), RescanInterval: 30 * testDebounce})
	put(t, filepath.Join(dir, "a.rego"), rule("a", "A", "a2"))
	s.waitReasons("A", "a2")
	// A rescan that finds the same content does nothing.
	activated := s.count(bundles.Activated)
	s.rl.Reload()
	s.rl.Reload()
	if got := s.reasons("A"); !equalStrings(got, []string{"a2"}) || s.count(bundles.Failed) != 0 {
		t.Fatalf("after rescans: %q, %d failures", got, s.count(bundles.Failed))
	}
	if n := s.count(bundles.Activated); n != activated {
		t.Errorf("%d activations after rescans of unchanged content, want %d", n, activated)
	}
}

// TestReloadWatchAfter: a delayed watch still sees a change made before it
// began (one rescan as it starts), and the changes after it (rescans are
// off).
func TestReloadWatchAfter(t *testing.T) {
	dir := t.TempDir()
	s := newStand(t, bundles.Options{Paths: oneFile(t, dir), Watch: true, WatchAfter: 5 * testDebounce, RescanInterval: -1})
	put(t, filepath.Join(dir, "a.rego"), rule("a", "A", "a2"))
	s.waitReasons("A", "a2")
	put(t, filepath.Join(dir, "a.rego"), rule("a", "A", "a3"))
	s.waitReasons("A", "a3")
}

// TestReloadIgnoresTouch: chmod and identical rewrites change nothing.
func TestReloadIgnoresTouch(t *testing.T) {
	dir := t.TempDir()
	s := newStand(t, bundles.Options{Paths: oneFile(t, dir), Watch: true, RescanInterval: -1})
	path := filepath.Join(dir, "a.rego")
	must(t, os.Chmod(path, 0o600))
	put(t, path, rule("a", "A", "a1")) // same bytes: fingerprint unchanged
	put(t, filepath.Join(dir, "a.rego"), rule("a", "A", "a2"))
	s.waitReasons("A", "a2")
	if n := s.count(bundles.Activated); n != 2 { // startup, then a2
		t.Errorf("%d activations, want 2\n%s", n, s.eventLog())
	}
}

// TestReloadStartup: what Start does with sources that do not load.
func TestReloadStartup(t *testing.T) {
	dir := t.TempDir()
	put(t, filepath.Join(dir, "broken", "p.rego"), "package ahp.tool.before.x\n\ndeny contains if {\n")
	put(t, filepath.Join(dir, "tests-only", "p_test.rego"), "package x\n\ntest_x if true\n")
	cases := []struct {
		name  string
		paths []string
		want  error
	}{
		{"missing path", []string{filepath.Join(dir, "nope")}, os.ErrNotExist},
		{"syntax error", []string{filepath.Join(dir, "broken")}, nil},
		{"only tests", []string{filepath.Join(dir, "tests-only")}, bundles.ErrNoPolicy},
		{"nothing", nil, bundles.ErrNoPolicy},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := tryStand(t, bundles.Options{Paths: c.paths, Watch: true})
			if err == nil {
				t.Fatal("Start succeeded")
			}
			if c.want != nil && !errors.Is(err, c.want) {
				t.Errorf("error %v, want %v", err, c.want)
			}
		})
	}
}

// TestReloadPrepare: Prepare sees every merged policy before activation,
// and an error from it refuses the policy.
func TestReloadPrepare(t *testing.T) {
	dir := t.TempDir()
	put(t, filepath.Join(dir, "p.rego"), "package ahp.tool.before.p\n\ndeny contains data.extra.reason if input.tool.name == \"P\"\n")
	refuse := errors.New("refused by Prepare")
	s := newStand(t, bundles.Options{Paths: []string{dir}, Watch: true, RescanInterval: -1,
		Prepare: func(p *bundles.Policy) (*bundles.Policy, error) {
			if _, ok := p.Data["stop"]; ok {
				return nil, refuse
			}
			out := *p
			out.Data = map[string]any{"extra": map[string]any{"reason": "from Prepare"}}
			return &out, nil
		}})
	if got := s.reasons("P"); !equalStrings(got, []string{"from Prepare"}) {
		t.Fatalf("reasons %q", got)
	}
	put(t, filepath.Join(dir, "stop", "data.json"), "true")
	if ev := s.waitEvent(bundles.Failed, 0); !errors.Is(ev.Err, refuse) {
		t.Errorf("error %v", ev.Err)
	}
}

// TestReloadDirectoryComesBack (issue 30): a policy directory deleted and
// put back is reported as the failure was, whether its content is the
// same or new, and the answers follow it.
func TestReloadDirectoryComesBack(t *testing.T) {
	for _, c := range []struct {
		name    string
		reason  string
		outcome bundles.Outcome
	}{
		{"same content", "a1", bundles.Unchanged},
		{"new content", "a2", bundles.Activated},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "policies")
			s := newStand(t, bundles.Options{Paths: oneFile(t, dir), RescanInterval: -1})
			must(t, os.RemoveAll(dir))
			s.rl.Reload()
			s.waitEvent(bundles.Failed, 0)
			put(t, filepath.Join(dir, "a.rego"), rule("a", "A", c.reason))
			s.rl.Reload()
			ev := s.waitMatch("a recovery", func(ev bundles.Event) bool { return ev.Recovered })
			if ev.Outcome != c.outcome {
				t.Errorf("recovery outcome %s, want %s", ev.Outcome, c.outcome)
			}
			if got := s.reasons("A"); !equalStrings(got, []string{c.reason}) {
				t.Errorf("answers %q, want %q", got, c.reason)
			}
		})
	}
}
