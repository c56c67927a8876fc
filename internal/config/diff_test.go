package config

import (
	"slices"
	"testing"
	"time"
)

// TestChangedApply: Changed names exactly the keys an edit changed, an
// open section as one key, and Apply copies only the keys it is given.
func TestChangedApply(t *testing.T) {
	cases := []struct {
		name string
		edit func(*Config)
		want []string
	}{
		{"nothing", func(*Config) {}, nil},
		{"empty list is no list", func(c *Config) { c.Shadow = []string{} }, nil},
		{"top level", func(c *Config) { c.EvalTimeout = time.Minute }, []string{"eval_timeout"}},
		{"nested", func(c *Config) { c.Audit.File.Path = "/x" }, []string{"audit.file.path"}},
		{"squashed section", func(c *Config) { c.HTTP = "127.0.0.1:1"; c.RescanInterval = 0 }, []string{"http", "rescan_interval"}},
		{"open section", func(c *Config) { c.Library = map[string]any{"disabled_rules": []any{"x"}} }, []string{"library"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, b := Default(), Default()
			tc.edit(&b)
			got := Changed(a, b)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("Changed = %v, want %v", got, tc.want)
			}
			Apply(&a, b, got)
			if rest := Changed(a, b); len(rest) != 0 {
				t.Errorf("after Apply, still changed: %v", rest)
			}
		})
	}
	a, b := Default(), Default()
	b.EvalTimeout, b.HTTP = time.Minute, "127.0.0.1:1"
	Apply(&a, b, []string{"eval_timeout"})
	if a.EvalTimeout != time.Minute || a.HTTP != "" {
		t.Errorf("Apply of eval_timeout alone: eval_timeout %s, http %q", a.EvalTimeout, a.HTTP)
	}
}
