package bundles

import (
	"fmt"
	"maps"
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
