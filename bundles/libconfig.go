package bundles

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/ahp-opa/ahp-opa/internal/effects"
	"github.com/ahp-opa/ahp-opa/internal/suggest"
	"github.com/open-policy-agent/opa/v1/ast"
)

// LibraryConfigPath is where the built-in library reads its configuration:
// data.ahp_opa.config (docs/policy.md lists the keys).
var LibraryConfigPath = []string{"ahp_opa", "config"}

// WithLibraryConfig returns p with cfg, the `library` section of the
// configuration file, placed at data.ahp_opa.config, so that users can
// disable built-in rules and add exceptions without writing a data.json.
// p itself is not changed. A data document that already sets a key of
// data.ahp_opa.config that cfg sets too is an error: two sources for one
// setting would make the result depend on load order.
func WithLibraryConfig(p *Policy, cfg map[string]any) (*Policy, error) {
	if len(cfg) == 0 {
		return p, nil
	}
	out := *p
	out.Data = copyDocument(p.Data)
	if out.Data == nil {
		out.Data = map[string]any{}
	}
	wrapped := map[string]any{LibraryConfigPath[0]: map[string]any{LibraryConfigPath[1]: copyDocument(cfg)}}
	if err := mergeData(out.Data, wrapped, "data"); err != nil {
		return nil, fmt.Errorf("library configuration: %w", err)
	}
	return &out, nil
}

// copyDocument copies the objects of a data document, so that merging into
// the copy leaves the original alone; other values are shared.
func copyDocument(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := maps.Clone(m)
	for k, v := range out {
		if sub, ok := v.(map[string]any); ok {
			out[k] = copyDocument(sub)
		}
	}
	return out
}

// LibraryConfigError is a key or rule id in the library configuration that
// the built-in library does not know. Key is the dotted key within the
// library section ("exceptions.pths", or "disabled_rules" for a rule id).
type LibraryConfigError struct {
	Key     string
	Value   string // the unknown rule id; "" for an unknown key
	Nearest string // the closest valid key or rule id; "" for none
}

func (e *LibraryConfigError) Error() string {
	var b strings.Builder
	if e.Value != "" && e.Key == "disabled_effects" {
		fmt.Fprintf(&b, "unknown effect %q in library.%s", e.Value, e.Key)
	} else if e.Value != "" {
		fmt.Fprintf(&b, "unknown rule id %q in library.%s", e.Value, e.Key)
	} else {
		fmt.Fprintf(&b, "unknown key %q in library", e.Key)
	}
	if e.Nearest != "" {
		fmt.Fprintf(&b, "; did you mean %q?", e.Nearest)
	}
	return b.String()
}

// LibrarySchema is what the built-in library understands in its
// configuration, read from the library's own source so it cannot drift:
// the keys are the fields package ahp.lib.config reads from raw, the rule
// ids are the codes the built-in deny rules return.
type LibrarySchema struct {
	Keys     []string // dotted: "disabled_rules", "exceptions.paths"
	Sections []string // keys that hold further keys: "exceptions"
	RuleIDs  []string
}

// BuiltinLibrarySchema derives the LibrarySchema from the embedded library.
var BuiltinLibrarySchema = sync.OnceValues(func() (LibrarySchema, error) {
	p, err := Builtin()
	if err != nil {
		return LibrarySchema{}, err
	}
	return librarySchema(p), nil
})

func librarySchema(p *Policy) LibrarySchema {
	keys, sections, ids := map[string]bool{}, map[string]bool{}, map[string]bool{}
	configPkg := ast.MustParseRef("data.ahp.lib.config")
	builtinPkg := ast.MustParseRef("data.ahp.tool.before.builtin")
	for _, m := range p.Modules {
		switch {
		case m.Package.Path.Equal(configPkg):
			ast.WalkRefs(m, func(r ast.Ref) bool {
				if len(r) < 2 || !r[0].Equal(ast.VarTerm("raw")) {
					return false
				}
				var path []string
				for _, t := range r[1:] {
					s, ok := t.Value.(ast.String)
					if !ok {
						break
					}
					path = append(path, string(s))
				}
				for i := range path {
					k := strings.Join(path[:i+1], ".")
					if i < len(path)-1 {
						sections[k] = true
					} else {
						keys[k] = true
					}
				}
				return false
			})
		case m.Package.Path.Equal(builtinPkg):
			ast.WalkTerms(m, func(t *ast.Term) bool {
				obj, ok := t.Value.(ast.Object)
				if !ok {
					return false
				}
				if v := obj.Get(ast.StringTerm("code")); v != nil {
					if s, ok := v.Value.(ast.String); ok {
						ids[string(s)] = true
					}
				}
				return false
			})
		}
	}
	for k := range sections {
		delete(keys, k)
	}
	return LibrarySchema{Keys: sortedSet(keys), Sections: sortedSet(sections), RuleIDs: sortedSet(ids)}
}

func sortedSet(m map[string]bool) []string {
	out := slices.Collect(maps.Keys(m))
	slices.Sort(out)
	return out
}

// CheckLibraryConfig returns a *LibraryConfigError for the first key of cfg
// (the library section) or rule id in its disabled_rules that the built-in
// library does not know: a typo there would otherwise protect nothing while
// looking as if it did.
func CheckLibraryConfig(cfg map[string]any) error {
	if len(cfg) == 0 {
		return nil
	}
	s, err := BuiltinLibrarySchema()
	if err != nil {
		return err
	}
	return s.Check(cfg)
}

// Check is CheckLibraryConfig against s.
func (s LibrarySchema) Check(cfg map[string]any) error {
	all := append(slices.Clone(s.Keys), s.Sections...)
	var walk func(m map[string]any, prefix string) error
	walk = func(m map[string]any, prefix string) error {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			key := prefix + k
			switch {
			case slices.Contains(s.Sections, key):
				if sub, ok := m[k].(map[string]any); ok {
					if err := walk(sub, key+"."); err != nil {
						return err
					}
				}
			case !slices.Contains(s.Keys, key):
				return &LibraryConfigError{Key: key, Nearest: suggest.Nearest(key, all)}
			}
		}
		return nil
	}
	if err := walk(cfg, ""); err != nil {
		return err
	}
	if names, ok := cfg["disabled_effects"].([]any); ok {
		for _, n := range names {
			if str, ok := n.(string); ok && !slices.Contains(effects.Vocabulary, str) {
				return &LibraryConfigError{Key: "disabled_effects", Value: str, Nearest: suggest.Nearest(str, effects.Vocabulary)}
			}
		}
	}
	if ids, ok := cfg["disabled_rules"].([]any); ok {
		for _, id := range ids {
			if str, ok := id.(string); ok && !slices.Contains(s.RuleIDs, str) {
				return &LibraryConfigError{Key: "disabled_rules", Value: str, Nearest: suggest.Nearest(str, s.RuleIDs)}
			}
		}
	}
	return nil
}
