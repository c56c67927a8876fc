package effects

import (
	"fmt"
	"sync"

	"github.com/ahp-opa/ahp-opa/rego"
)

// BuiltinTable is the table the library ships (rego/lib/effects/clis.json).
var BuiltinTable = sync.OnceValues(func() (*Table, error) {
	t, err := Parse(rego.EffectsTable)
	if err != nil {
		return nil, fmt.Errorf("built-in %w", err)
	}
	return t, nil
})

// Builtin is the matcher of the built-in table, compiled once.
var Builtin = sync.OnceValues(func() (*Matcher, error) {
	t, err := BuiltinTable()
	if err != nil {
		return nil, err
	}
	return Compile(t)
})

// WithTeam returns the matcher of the built-in table extended by a team's
// document (data.ahp_opa.config.effects); the built-in matcher when doc is
// nil.
func WithTeam(doc any) (*Matcher, error) {
	if doc == nil {
		return Builtin()
	}
	base, err := BuiltinTable()
	if err != nil {
		return nil, err
	}
	team, err := FromDocument(doc)
	if err != nil {
		return nil, fmt.Errorf("library effects: %w", err)
	}
	return Compile(base.Merge(team))
}
