package bundles

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/open-policy-agent/opa/v1/loader"

	"github.com/ahp-opa/ahp-opa/internal/testkit"
	"github.com/ahp-opa/ahp-opa/rego"
)

// TestParseBuiltinMatchesLoader: the parallel parse of the embedded
// library gives what OPA's loader gives (load), module for module, with
// the same revision, and with tests the same test modules. With the tests
// it parses the library's whole test suite twice (a minute under -race on
// a busy machine): that half is a long test.
func TestParseBuiltinMatchesLoader(t *testing.T) {
	variants := []bool{false}
	if testkit.LongEnabled() {
		variants = append(variants, true)
	}
	for _, tests := range variants {
		want, err := load(loader.NewFileLoader().WithFS(rego.FS), []string{"."}, LoadOptions{Tests: tests, Limits: Limits{}.WithDefaults()})
		if err != nil {
			t.Fatal(err)
		}
		got, err := parseBuiltin(rego.FS, tests)
		if err != nil {
			t.Fatal(err)
		}
		sameModules(t, got.Modules, want.Modules)
		sameModules(t, got.Tests, want.Tests)
		if tests != (len(got.Tests) > 0) {
			t.Errorf("tests=%v: %d test modules", tests, len(got.Tests))
		}
		if got.Revision != want.Revision || got.Data != nil {
			t.Errorf("tests=%v: revision %s, want %s", tests, got.Revision, want.Revision)
		}
		if !tests && got.Digest != want.Digest {
			t.Errorf("digest %s, want %s", got.Digest, want.Digest)
		}
	}
}

func sameModules(t *testing.T, got, want map[string]*ast.Module) {
	t.Helper()
	if g, w := slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)); !slices.Equal(g, w) {
		t.Fatalf("modules %q, want %q", g, w)
	}
	for name, m := range want {
		if !m.Equal(got[name]) || m.String() != got[name].String() {
			t.Errorf("module %s differs from the loader's", name)
		}
		if len(m.Annotations) != len(got[name].Annotations) || len(m.Comments) != len(got[name].Comments) {
			t.Errorf("module %s: annotations or comments differ from the loader's", name)
		}
	}
}

// TestBuiltinWithTests: the library with its tests serves the same modules
// under the same revision, and its test modules carry the same prefix.
//
// Long: it parses the library's test suite, which the quick run already
// does through cmd/ahp-opa's TestBuiltinAndExamplesPass and rego's tests.
func TestBuiltinWithTests(t *testing.T) {
	testkit.RequireLong(t)
	plain, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	withTests, err := BuiltinWithTests()
	if err != nil {
		t.Fatal(err)
	}
	if plain.Tests != nil || len(withTests.Tests) == 0 {
		t.Fatalf("tests: %d without, %d with", len(plain.Tests), len(withTests.Tests))
	}
	if plain.Revision != withTests.Revision || !slices.Equal(slices.Sorted(maps.Keys(plain.Modules)), slices.Sorted(maps.Keys(withTests.Modules))) {
		t.Errorf("served modules or revision differ: %s vs %s", plain.Revision, withTests.Revision)
	}
	for name := range withTests.Tests {
		if !strings.HasPrefix(name, BuiltinPrefix) || !isTest(name) {
			t.Errorf("test module %q", name)
		}
	}
}

// BenchmarkBuiltin measures reading and parsing the embedded library.
func BenchmarkBuiltin(b *testing.B) {
	for b.Loop() {
		if _, err := Builtin(); err != nil {
			b.Fatal(err)
		}
	}
}
