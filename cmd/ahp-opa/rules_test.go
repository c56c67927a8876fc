package main

import (
	"bytes"
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ahp-opa/ahp-opa/bundles"
	"github.com/ahp-opa/ahp-opa/engine"
	"github.com/ahp-opa/ahp-opa/internal/config"
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
			cfg, err := config.Load(policyFlags(t, tt.flags...), path, func() []string { return tt.env })
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

func TestExplainRuleErrorsAndShadow(t *testing.T) {
	const token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	p, err := bundles.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "team.rego"), []byte(`package ahp.tool.before.team

deny contains {"code": "com.example.echo", "reason": msg} if {
	startswith(input.tool.input.command, "GITHUB")
	msg := concat(" ", ["echoed", input.tool.input.command])
}
deny contains "big" if to_number(input.tool.input.command) > 10
`), 0o600); err != nil {
		t.Fatal(err)
	}
	user, err := bundles.Load([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	maps.Copy(p.Modules, user.Modules)
	eng := engine.New(engine.Options{Shadow: []string{"dev.ahp-opa.git.force-push", "com.example.echo"}})
	if err := eng.Load(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	event := strings.Replace(explainEvent, "git push -f && cat .env", "GITHUB_TOKEN="+token+" git push -f", 1)
	var out bytes.Buffer
	if err := explainDecision(context.Background(), &out, eng, []byte(event)); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{
		"team.rego:7 (to_number) in ahp.tool.before.team.deny",
		"would deny (shadow): ahp.tool.before.builtin dev.ahp-opa.git.force-push",
		"dev.ahp-opa.git.force-push [shadow: would deny, not answered]",
		"would deny (shadow): ahp.tool.before.team com.example.echo: echoed GITHUB_TOKEN=[REDACTED] git push -f",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("explanation lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, token) {
		t.Errorf("the token reached the explanation:\n%s", text)
	}
}
