package bundles_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-opa/ahp-opa/bundles"
)

// TestLoadSources: what LoadWith accepts and how it names what it read.
func TestLoadSources(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	put(t, filepath.Join(plain, "a.rego"), rule("a", "A", "a"))
	put(t, filepath.Join(plain, "a_test.rego"), "package ahp.tool.before.a_test\n\ntest_x if true\n")
	tarball := filepath.Join(dir, "b.tar.gz")
	bundleSpec{revision: "rev-7", roots: []string{"ahp/tool/before/b"}, files: map[string]string{"b.rego": rule("b", "B", "b")}}.writeTarball(t, tarball)
	other := filepath.Join(dir, "c.tar.gz")
	bundleSpec{roots: []string{"ahp/tool/before"}, files: map[string]string{"c.rego": rule("c", "C", "c")}}.writeTarball(t, other)
	broken := filepath.Join(dir, "broken.tar.gz")
	bundleSpec{files: map[string]string{"x.rego": "package ahp.tool.before.b\n\ndeny contains x if {\n"}}.writeTarball(t, broken)
	outside := filepath.Join(dir, "outside.tar.gz")
	bundleSpec{roots: []string{"somewhere"}, files: map[string]string{"b.rego": rule("b", "B", "b")}}.writeTarball(t, outside)

	cases := []struct {
		name     string
		paths    []string
		tests    bool
		modules  []string
		revision string // "" : not checked
		wantErr  string
	}{
		{name: "plain", paths: []string{plain}, modules: []string{plain + "/a.rego"}},
		{name: "plain with tests", paths: []string{plain}, tests: true, modules: []string{plain + "/a.rego"}},
		{name: "tarball", paths: []string{tarball}, modules: []string{tarball + "/b.rego"}, revision: "rev-7"},
		{name: "plain and tarball", paths: []string{plain, tarball}, modules: []string{plain + "/a.rego", tarball + "/b.rego"}},
		{name: "overlapping roots", paths: []string{tarball, other}, wantErr: "roots overlap"},
		{name: "broken module in a tarball", paths: []string{broken}, wantErr: broken + "/x.rego:4: rego_parse_error"},
		{name: "module outside the roots", paths: []string{outside}, wantErr: "do not permit"},
		{name: "not a policy", paths: []string{filepath.Join(dir, "readme.txt")}, wantErr: "no such file"},
	}
	put(t, filepath.Join(dir, "notes.txt"), "hello")
	cases = append(cases, struct {
		name     string
		paths    []string
		tests    bool
		modules  []string
		revision string
		wantErr  string
	}{name: "unknown file type", paths: []string{filepath.Join(dir, "notes.txt")}, wantErr: "not a .rego file"})

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := bundles.LoadWith(c.paths, bundles.LoadOptions{Tests: c.tests})
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for name := range p.Modules {
				got = append(got, name)
			}
			if !equalStrings(sorted(got), sorted(c.modules)) {
				t.Errorf("modules %q, want %q", got, c.modules)
			}
			if c.tests != (len(p.Tests) == 1) {
				t.Errorf("tests %v with Tests=%v", p.Tests, c.tests)
			}
			if c.revision != "" && p.Revision != c.revision {
				t.Errorf("revision %q, want %q", p.Revision, c.revision)
			}
			if p.Digest == "" {
				t.Error("no digest")
			}
		})
	}
	if _, err := bundles.Load([]string{filepath.Join(dir, "missing")}); err == nil || errors.Is(err, bundles.ErrNoPolicy) {
		t.Errorf("missing path: %v", err)
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestDigestFollowsContent: the digest changes with any content, even when
// a bundle keeps its manifest revision.
func TestDigestFollowsContent(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "b.tar.gz")
	digest := func(reason string) (string, string) {
		bundleSpec{revision: "same", files: map[string]string{"b.rego": rule("b", "B", reason)}}.writeTarball(t, path)
		p, err := bundles.Load([]string{path})
		if err != nil {
			t.Fatal(err)
		}
		return p.Revision, p.Digest
	}
	r1, d1 := digest("one")
	r2, d2 := digest("two")
	if r1 != r2 || d1 == d2 {
		t.Errorf("revisions %s %s, digests %s %s: want equal revisions, different digests", r1, r2, d1, d2)
	}
}

// TestLoadTests: the loader of `ahp-opa test` reads what LoadWith reads,
// tests included, accepts a folder of tests only, and is held to the same
// limits with the same errors.
func TestLoadTests(t *testing.T) {
	dir := t.TempDir()
	testsOnly := filepath.Join(dir, "tests")
	put(t, filepath.Join(testsOnly, "x_test.rego"), "package x_test\n\ntest_x if true\n")
	put(t, filepath.Join(testsOnly, "data.json"), `{"k": 1}`)
	put(t, filepath.Join(testsOnly, "notes.json"), `{"not": "served"}`)
	empty := filepath.Join(dir, "empty")
	put(t, filepath.Join(empty, "README.md"), "no policy here")
	many := filepath.Join(dir, "many")
	for i := range 3 {
		put(t, filepath.Join(many, fmt.Sprintf("p%d.rego", i)), rule(fmt.Sprintf("p%d", i), "P", "p"))
	}

	p, err := bundles.LoadTests([]string{testsOnly}, bundles.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Modules) != 0 || len(p.Tests) != 1 {
		t.Errorf("modules %v, tests %v: want one test module only", p.Modules, p.Tests)
	}
	if want := map[string]any{"k": json.Number("1")}; fmt.Sprint(p.Data) != fmt.Sprint(want) {
		t.Errorf("data %v, want only data.json's %v, as served", p.Data, want)
	}
	if _, err := bundles.LoadWith([]string{testsOnly}, bundles.LoadOptions{Tests: true}); !errors.Is(err, bundles.ErrNoPolicy) {
		t.Errorf("LoadWith of tests only: %v, want ErrNoPolicy (nothing to serve)", err)
	}
	if _, err := bundles.LoadTests([]string{empty}, bundles.LoadOptions{}); !errors.Is(err, bundles.ErrNoPolicy) {
		t.Errorf("no Rego at all: %v, want ErrNoPolicy", err)
	}

	lim := bundles.LoadOptions{Limits: bundles.Limits{MaxFiles: 2}}
	_, served := bundles.LoadWith([]string{many}, lim)
	_, tested := bundles.LoadTests([]string{many}, lim)
	if !errors.Is(served, bundles.ErrOverLimit) || tested == nil || tested.Error() != served.Error() {
		t.Errorf("over max_files: LoadTests %v, LoadWith %v: want the same ErrOverLimit", tested, served)
	}
}
