package service

import (
	"maps"
	"path/filepath"

	"github.com/ahp-opa/ahp-opa/internal/config"
)

// WithGuardPaths returns the library configuration with guard_paths set to
// the files this process runs with: its --config file and its --policy
// paths, made absolute. The built-in guard rules (dev.ahp-opa.guard.*)
// deny an agent changing or removing them, so an agent cannot blind its
// own guard by editing the policy it is judged by. A guard_paths the user
// set is kept and added to.
func WithGuardPaths(cfg config.Config) map[string]any {
	var paths []any
	if list, ok := cfg.Library["guard_paths"].([]any); ok {
		paths = append(paths, list...)
	}
	add := func(p string) {
		if p == "" {
			return
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		paths = append(paths, filepath.ToSlash(p))
	}
	add(cfg.ConfigPath)
	for _, p := range cfg.Policy {
		add(p)
	}
	if len(paths) == 0 {
		return cfg.Library
	}
	lib := maps.Clone(cfg.Library)
	if lib == nil {
		lib = map[string]any{}
	}
	lib["guard_paths"] = paths
	return lib
}
