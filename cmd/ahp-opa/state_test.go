package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/ahp-opa/ahp-opa/internal/config"
	"github.com/ahp-opa/ahp-opa/internal/state"
)

// TestStateConfig: the state: section comes from the file and from
// AHP_OPA_STATE__* variables like every other key, strictly.
func TestStateConfig(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "ahp-opa.yaml")
	load := func(yaml string, env ...string) (config.Config, error) {
		t.Helper()
		if err := os.WriteFile(cfgFile, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
		addEngineFlags(fs)
		return config.Load(fs, cfgFile, func() []string { return env })
	}

	cfg, err := load("log_level: info\n")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.State != state.Default() || cfg.State.Shared() {
		t.Errorf("absent state: section = %+v, want the memory default", cfg.State)
	}

	cfg, err = load("state:\n  store: redis\n  url: redis://cache:6379/1\n  required: true\n",
		"AHP_OPA_STATE__TIMEOUT=20ms", "AHP_OPA_STATE__KEY_PREFIX=team-a:")
	if err != nil {
		t.Fatal(err)
	}
	want := state.Default()
	want.Store, want.URL, want.Required, want.Timeout, want.KeyPrefix = "redis", "redis://cache:6379/1", true, 20*time.Millisecond, "team-a:"
	if cfg.State != want {
		t.Errorf("state = %+v\nwant    %+v", cfg.State, want)
	}

	for _, tc := range []struct{ yaml, want string }{
		{"state:\n  store: valkey\n", `state.store must be "memory" or "redis"`},
		{"state:\n  store: redis\n  url: redis://u:pw@cache:6379/0\n", "state.password_file"},
		{"state:\n  stor: redis\n", "stor"},
		{"state:\n  url: redis://cache:6379/0\n", "state.url is set"},
	} {
		_, err := load(tc.yaml)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one containing %q", tc.yaml, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), ":pw@") {
			t.Errorf("the error repeats the URL's password: %v", err)
		}
	}
}

// TestFleetExampleConfigs: the replica configurations of examples/fleet
// load, name the shared store, and differ only where they must.
func TestFleetExampleConfigs(t *testing.T) {
	paths, err := filepath.Glob("../../examples/fleet/replica*.yaml")
	if err != nil || len(paths) != 3 {
		t.Fatalf("replica configurations: %v %v", paths, err)
	}
	seen := map[string]bool{}
	for _, p := range paths {
		fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
		addEngineFlags(fs)
		cfg, err := config.Load(fs, p, func() []string { return nil })
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if !cfg.State.Shared() || !cfg.Audit.Required {
			t.Errorf("%s: state %+v, audit.required %v; want redis and true", p, cfg.State, cfg.Audit.Required)
		}
		for _, own := range []string{cfg.HTTP, cfg.Audit.File.Path} {
			if seen[own] {
				t.Errorf("%s shares %s with another replica", p, own)
			}
			seen[own] = true
		}
	}
}
