package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/ahp-opa/ahp-opa/internal/config"
)

// policyFlags is the flag set of serve as far as policy sources go.
func policyFlags(t *testing.T, args ...string) *pflag.FlagSet {
	t.Helper()
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	addEngineFlags(fs)
	addWatchFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return fs
}

// TestPolicySourcesConfig reads OPA-shaped blocks from the YAML file, with
// flags and environment on top, and hands them to bundles as JSON.
func TestReloadConfig(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "ci.pem")
	if err := os.WriteFile(keyFile, []byte("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfgFile := filepath.Join(dir, "ahp-opa.yaml")
	yaml := `policy: [./policy]
rescan_interval: 10s
services:
  acme:
    url: https://bundles.example.com
    credentials:
      bearer:
        token: hunter2
bundles:
  authz:
    service: acme
    resource: bundles/authz.tar.gz
    polling:
      min_delay_seconds: 10
      max_delay_seconds: 20
    signing:
      keyid: ci
keys:
  ci:
    key: "PEM here"
    algorithm: RS256
`
	if err := os.WriteFile(cfgFile, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	fs := policyFlags(t, "--verify-tests", "--verification-key", keyFile, "--verification-key-id", "local")
	cfg, err := config.Load(fs, cfgFile, func() []string { return []string{"AHP_OPA_WATCH=false"} })
	if err != nil {
		t.Fatal(err)
	}
	ps := cfg.PolicySources
	if ps.Watch || !ps.VerifyTests || ps.RescanInterval != 10*time.Second {
		t.Errorf("sources %+v", ps)
	}
	opa, err := ps.OPAConfig()
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Keys     map[string]map[string]string
		Signing  map[string]any
		Services map[string]map[string]any
		Bundles  map[string]map[string]any
	}
	for _, b := range []struct {
		raw json.RawMessage
		dst any
	}{{opa.Keys, &got.Keys}, {opa.Signing, &got.Signing}, {opa.Services, &got.Services}, {opa.Bundles, &got.Bundles}} {
		if err := json.Unmarshal(b.raw, b.dst); err != nil {
			t.Fatalf("%s: %v", b.raw, err)
		}
	}
	if got.Keys["ci"]["key"] != "PEM here" || !strings.Contains(got.Keys["local"]["key"], "BEGIN PUBLIC KEY") {
		t.Errorf("keys %v", got.Keys)
	}
	if got.Signing["keyid"] != "local" {
		t.Errorf("signing %v: want the --verification-key-id", got.Signing)
	}
	if got.Services["acme"]["url"] != "https://bundles.example.com" || got.Bundles["authz"]["resource"] != "bundles/authz.tar.gz" {
		t.Errorf("services %v, bundles %v", got.Services, got.Bundles)
	}

	for _, bad := range []string{"rescan_interval: -1s\n", "rescan_intervall: 1s\n", "watch: maybe\n"} {
		if err := os.WriteFile(cfgFile, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := config.Load(policyFlags(t), cfgFile, func() []string { return nil }); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}
