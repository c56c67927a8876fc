package bundles_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-opa/ahp-opa/bundles"
)

const gatedPolicy = `package ahp.tool.before.g

deny contains "no G" if input.tool.name == "G"
`

func gateTest(want string) string {
	return `package ahp.tool.before.g_test

import data.ahp.tool.before.g

test_denies_g if g.deny == {"` + want + `"} with input as {"tool": {"name": "G"}}
`
}

// TestVerifyTestsGate: with VerifyTests a policy whose own tests fail is
// refused, at startup and on reload.
func TestVerifyTestsGate(t *testing.T) {
	dir := t.TempDir()
	put(t, filepath.Join(dir, "g.rego"), gatedPolicy)
	put(t, filepath.Join(dir, "g_test.rego"), gateTest("no G"))
	s := newStand(t, bundles.Options{Paths: []string{dir}, VerifyTests: true, Watch: true, RescanInterval: -1})
	if got := s.reasons("G"); !equalStrings(got, []string{"no G"}) {
		t.Fatalf("reasons %q", got)
	}
	// The policy changes, its test does not follow: refused.
	put(t, filepath.Join(dir, "g.rego"), strings.Replace(gatedPolicy, `"no G"`, `"G is fine"`, 1))
	ev := s.waitEvent(bundles.Failed, 0)
	if !errors.Is(ev.Err, bundles.ErrTestsFailed) || !strings.Contains(ev.Err.Error(), "test_denies_g") {
		t.Errorf("error %v, want ErrTestsFailed naming the test", ev.Err)
	}
	if got := s.reasons("G"); !equalStrings(got, []string{"no G"}) {
		t.Errorf("after a failing test: %q, want the last good policy", got)
	}
	// The test is updated: accepted. Editing a test alone reloads too.
	put(t, filepath.Join(dir, "g_test.rego"), gateTest("G is fine"))
	s.waitReasons("G", "G is fine")
	_ = s.waitEvent(bundles.Activated, 1)

	t.Run("startup", func(t *testing.T) {
		dir := t.TempDir()
		put(t, filepath.Join(dir, "g.rego"), gatedPolicy)
		put(t, filepath.Join(dir, "g_test.rego"), gateTest("something else"))
		if _, err := tryStand(t, bundles.Options{Paths: []string{dir}, VerifyTests: true}); !errors.Is(err, bundles.ErrTestsFailed) {
			t.Errorf("Start: %v, want ErrTestsFailed", err)
		}
		// Without the gate the same policy is served.
		if _, err := tryStand(t, bundles.Options{Paths: []string{dir}}); err != nil {
			t.Errorf("Start without the gate: %v", err)
		}
	})
	t.Run("tests inside a bundle", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "b.tar.gz")
		bundleSpec{files: map[string]string{"g.rego": gatedPolicy, "g_test.rego": gateTest("wrong")}}.writeTarball(t, path)
		if _, err := tryStand(t, bundles.Options{Paths: []string{path}, VerifyTests: true}); !errors.Is(err, bundles.ErrTestsFailed) {
			t.Errorf("Start: %v, want ErrTestsFailed", err)
		}
	})
}
