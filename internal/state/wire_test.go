package state

import (
	"context"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/bundles"
	"github.com/ahp-opa/ahp-opa/engine"
)

// TestReadsSession: facts are read only for a policy that reads
// input.ahp.session; before any policy is active that is not known, and
// they are read, since the decision waits for a policy that may read them.
func TestReadsSession(t *testing.T) {
	load := func(t *testing.T, src string) *engine.Engine {
		t.Helper()
		eng := engine.New(engine.Options{})
		m, err := ast.ParseModule("p.rego", src)
		if err != nil {
			t.Fatal(err)
		}
		if err := eng.Load(context.Background(), &bundles.Policy{Modules: map[string]*ast.Module{"p.rego": m}, Revision: "r1"}); err != nil {
			t.Fatal(err)
		}
		return eng
	}
	for _, tc := range []struct {
		name string
		eng  func(t *testing.T) *engine.Engine
		want bool
	}{
		{"no engine yet", func(*testing.T) *engine.Engine { return nil }, true},
		{"no policy active yet", func(*testing.T) *engine.Engine { return engine.New(engine.Options{}) }, true},
		{"a policy that reads the session", func(t *testing.T) *engine.Engine { return load(t, sessionPolicy) }, true},
		{"a policy that does not", func(t *testing.T) *engine.Engine {
			return load(t, "package ahp.tool.before.plain\n\ndeny contains {\"reason\": \"no\", \"code\": \"t.no\"} if input.tool.name == \"Danger\"\n")
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eng := tc.eng(t)
			if got := readsSession(func() *engine.Engine { return eng })(); got != tc.want {
				t.Errorf("readsSession = %v, want %v", got, tc.want)
			}
		})
	}
}
