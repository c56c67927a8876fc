package bundles

import (
	"maps"
	"slices"
	"testing"

	"github.com/open-policy-agent/opa/v1/loader"

	"github.com/ahp-opa/ahp-opa/rego"
)

// TestParseBuiltinMatchesLoader: the parallel parse of the embedded
// library gives what OPA's loader gives (load), module for module, with
// the same revision.
func TestParseBuiltinMatchesLoader(t *testing.T) {
	want, err := load(loader.NewFileLoader().WithFS(rego.FS), []string{"."}, false, Limits{}.WithDefaults())
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseBuiltin(rego.FS)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := slices.Sorted(maps.Keys(got.Modules)), slices.Sorted(maps.Keys(want.Modules)); !slices.Equal(g, w) {
		t.Fatalf("modules %q, want %q", g, w)
	}
	for name, m := range want.Modules {
		if !m.Equal(got.Modules[name]) || m.String() != got.Modules[name].String() {
			t.Errorf("module %s differs from the loader's", name)
		}
		if len(m.Annotations) != len(got.Modules[name].Annotations) || len(m.Comments) != len(got.Modules[name].Comments) {
			t.Errorf("module %s: annotations or comments differ from the loader's", name)
		}
	}
	if got.Revision != want.Revision || got.Digest != want.Digest || got.Data != nil {
		t.Errorf("revision %s digest %s, want %s %s", got.Revision, got.Digest, want.Revision, want.Digest)
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
