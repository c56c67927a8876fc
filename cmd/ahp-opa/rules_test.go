package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRuleSettings reads on_rule_error and shadow from each source and
// refuses a value on_rule_error does not know.
func TestRuleSettings(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "ahp-opa.yaml")
	tests := []struct {
		name    string
		yaml    string
		env     []string
		flags   []string
		onError string
		shadow  []string
		err     string
	}{
		{name: "defaults", onError: "deny"},
		{name: "file", yaml: "on_rule_error: ignore\nshadow: [dev.ahp-opa.git.force-push, ahp.tool.before.team]\n",
			onError: "ignore", shadow: []string{"dev.ahp-opa.git.force-push", "ahp.tool.before.team"}},
		{name: "environment", env: []string{"AHP_OPA_ON_RULE_ERROR=error", "AHP_OPA_SHADOW=a.b,c.d"}, onError: "error", shadow: []string{"a.b", "c.d"}},
		{name: "flags", flags: []string{"--on-rule-error=ignore", "--shadow", "a.b", "--shadow", "c.d"}, onError: "ignore", shadow: []string{"a.b", "c.d"}},
		{name: "unknown mode", yaml: "on_rule_error: allow\n", err: `on_rule_error "allow": want deny, ignore or error`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := ""
			if tt.yaml != "" {
				if err := os.WriteFile(cfgFile, []byte(tt.yaml), 0o600); err != nil {
					t.Fatal(err)
				}
				path = cfgFile
			}
			cfg, err := loadConfig(policyFlags(t, tt.flags...), path, func() []string { return tt.env })
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.OnRuleError != tt.onError || !slices.Equal(cfg.Shadow, tt.shadow) {
				t.Errorf("on_rule_error %q shadow %q; want %q %q", cfg.OnRuleError, cfg.Shadow, tt.onError, tt.shadow)
			}
		})
	}
}
