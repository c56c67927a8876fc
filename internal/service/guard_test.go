package service

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/ahp-opa/ahp-opa/internal/config"
)

func TestWithGuardPaths(t *testing.T) {
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		return filepath.ToSlash(a)
	}
	tests := []struct {
		name string
		cfg  config.Config
		want []any
	}{
		{"nothing to guard", config.Config{}, nil},
		{"config and policies", config.Config{ConfigPath: "ahp.yaml", Policy: []string{"/etc/p", "rel/q"}}, []any{abs("ahp.yaml"), "/etc/p", abs("rel/q")}},
		{"user entries kept", config.Config{Library: map[string]any{"guard_paths": []any{"~/x"}, "disabled_rules": []any{}}, ConfigPath: "/c.yaml"}, []any{"~/x", "/c.yaml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(tt.cfg.Library)
			lib := WithGuardPaths(tt.cfg)
			got, _ := lib["guard_paths"].([]any)
			if !slices.Equal(got, tt.want) {
				t.Errorf("guard_paths = %v, want %v", got, tt.want)
			}
			if len(tt.cfg.Library) != before {
				t.Error("the configuration's own library map was changed")
			}
		})
	}
}
