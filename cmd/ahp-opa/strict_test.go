package main

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/ahp-opa/ahp-opa/engine"
	"github.com/ahp-opa/ahp-opa/internal/config"
	"github.com/ahp-opa/ahp-opa/internal/testkit"
)

func serveFlagSet(t testing.TB, args ...string) *pflag.FlagSet {
	t.Helper()
	fs := serveCommand().Flags()
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return fs
}

func writeConfig(t testing.TB, doc string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ahp-opa.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestStrictConfig: every unknown key, rule id or bad value names where it
// was set and, for a typo, the nearest valid name.
func TestStrictConfig(t *testing.T) {
	cases := []struct {
		name, doc string
		env       []string
		args      []string
		want      string // with FILE standing for the config file path
		unknown   bool
	}{
		{name: "top-level typo", doc: "bundels: {}\n",
			want: `unknown key "bundels" at FILE:1; did you mean "bundles"?`, unknown: true},
		{name: "nested typo", doc: "log_level: info\naudit:\n  file:\n    pth: /tmp/a\n",
			want: `unknown key "audit.file.pth" at FILE:4; did you mean "audit.file.path"?`, unknown: true},
		{name: "letters swapped", doc: "log_fromat: json\n",
			want: `unknown key "log_fromat" at FILE:1; did you mean "log_format"?`, unknown: true},
		{name: "nested section typo", doc: "audti:\n  file:\n    path: /tmp/a\n",
			want: `unknown key "audti" at FILE:1; did you mean "audit"?`, unknown: true},
		{name: "unknown env, letters swapped", env: []string{"AHP_OPA_EVAL_TIMEOTU=1s"},
			want: `unknown key: environment variable AHP_OPA_EVAL_TIMEOTU is not a setting; did you mean "AHP_OPA_EVAL_TIMEOUT"?`, unknown: true},
		{name: "no near key", doc: "zzzzzzzzzzzz: 1\n",
			want: `unknown key "zzzzzzzzzzzz" at FILE:1`, unknown: true},
		{name: "unknown env", env: []string{"AHP_OPA_LOG_LEVLE=debug"},
			want: `unknown key: environment variable AHP_OPA_LOG_LEVLE is not a setting; did you mean "AHP_OPA_LOG_LEVEL"?`, unknown: true},
		{name: "library key typo", doc: "library:\n  disabled_rules: [dev.ahp-opa.git.force-push]\n  protected_brnches: [main]\n",
			want: `unknown key "protected_brnches" in library; did you mean "protected_branches"? at FILE:3`},
		{name: "library nested typo", doc: "library:\n  exceptions:\n    pths: [/tmp]\n",
			want: `unknown key "exceptions.pths" in library; did you mean "exceptions.paths"? at FILE:3`},
		{name: "library rule id typo", doc: "library: {disabled_rules: [dev.ahp-opa.git.force-psh]}\n",
			want: `unknown rule id "dev.ahp-opa.git.force-psh" in library.disabled_rules; did you mean "dev.ahp-opa.git.force-push"? at FILE:1`},
		{name: "type error in file", doc: "log_level: info\neval_timeout: soon\n",
			want: `configuration: bad value for key "eval_timeout" at FILE:2: time: invalid duration (got "soon")`},
		{name: "type error in env", env: []string{"AHP_OPA_CONCURRENCY=many"},
			want: `configuration: bad value for key "concurrency" at environment variable AHP_OPA_CONCURRENCY:`},
		{name: "bad duration in env echoed", env: []string{"AHP_OPA_HOOK__TIMEOUT=5x"},
			want: `configuration: bad value for key "hook.timeout" at environment variable AHP_OPA_HOOK__TIMEOUT: time: unknown unit (got "5x")`},
		{name: "not yaml", doc: "log_level: [\n",
			want: `config file FILE: yaml:`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := ""
			if tc.doc != "" {
				path = writeConfig(t, tc.doc)
			}
			_, err := config.Load(serveFlagSet(t, tc.args...), path, func() []string { return tc.env })
			if err == nil {
				t.Fatal("accepted")
			}
			want := strings.ReplaceAll(tc.want, "FILE", path)
			if !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error\n got %s\nwant %s", err, want)
			}
			if errors.Is(err, config.ErrUnknownKey) != tc.unknown {
				t.Errorf("errors.Is(config.ErrUnknownKey) = %v", !tc.unknown)
			}
		})
	}
}

// TestStrictConfigAccepts: valid files, including every library key and
// rule id the built-in library knows, still load.
func TestStrictConfigAccepts(t *testing.T) {
	doc := `log_level: debug
audit:
  file: {path: /tmp/x, max_size_mb: 5}
bundles: {anything: {resource: x}}
library:
  disabled_rules: [dev.ahp-opa.git.force-push]
  protected_branches: [main]
  exceptions: {paths: [/tmp/*], hosts: [example.com], mcp_tools: [a/b]}
  mcp_allowlist: [a/*]
  protected_paths: [~/policy/**]
`
	cfg, err := config.Load(serveFlagSet(t, "--log-level=warn"), writeConfig(t, doc),
		func() []string { return []string{"AHP_OPA_AUDIT__FILE__MAX_BACKUPS=3", "AHP_OPA_TOKEN=x"} })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.LogLevel != "warn" || cfg.Audit.File.MaxBackups != 3 || cfg.Audit.File.Path != "/tmp/x" {
		t.Errorf("merged config wrong: %+v", cfg)
	}
}

// FuzzConfigLoad: the loader never panics, and every error it returns
// names a key, a line or the file.
func FuzzConfigLoad(f *testing.F) {
	for _, seed := range []string{
		"bundels: {}\n", "audit:\n  file:\n    pth: x\n", "library: {disabled_rules: [x]}\n",
		"eval_timeout: 3\n", "policy: [a, b]\n", "library: [1]\n", "- a\n- b\n", "a: &x 1\nb: *x\n",
		"library:\n  exceptions: 3\n", "concurrency: 1e999\n", "",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		path := writeConfig(t, doc)
		_, err := config.Load(serveFlagSet(t), path, func() []string { return nil })
		if err == nil {
			return
		}
		msg := err.Error()
		if !strings.Contains(msg, path) && !strings.Contains(msg, `"`) && !strings.Contains(msg, "configuration:") {
			t.Errorf("error names no key, line or file: %s", msg)
		}
	})
}

// TestConfigKeysDocumented: every configuration key is in the table of
// docs/configuration.md and in `serve --help` (as a flag or in the key
// list), every documented key exists, and every serve flag sets a
// configuration key.
func TestConfigKeysDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(doc), "| key | default | meaning |")
	if !ok {
		t.Fatal("docs/configuration.md has no configuration table")
	}
	documented := map[string]bool{}
	for _, line := range strings.Split(table, "\n")[2:] {
		if !strings.HasPrefix(line, "|") {
			break
		}
		first := strings.Split(line, "|")[1]
		for _, m := range regexp.MustCompile("`([a-z_.]+)`").FindAllStringSubmatch(first, -1) {
			documented[m[1]] = true
		}
	}
	leaves, _, _ := config.Keys()
	known := map[string]bool{}
	for _, key := range leaves {
		known[key] = true
		if !documented[key] {
			t.Errorf("key %s missing from the table in docs/configuration.md", key)
		}
	}
	for key := range documented {
		if !known[key] {
			t.Errorf("docs/configuration.md documents key %s, which the configuration does not have", key)
		}
	}

	cmd := serveCommand()
	fs := cmd.Flags()
	for name, key := range config.FlagNames(fs) {
		if name != "config" && name != "help" && !known[key] {
			t.Errorf("serve flag --%s sets %s, which is not a configuration key", name, key)
		}
	}
	var help strings.Builder
	cmd.SetOut(&help)
	cmd.SetArgs([]string{"--help"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	flagged := map[string]bool{}
	for _, key := range config.FlagNames(fs) {
		flagged[key] = true
	}
	for _, key := range leaves {
		if !flagged[key] && !strings.Contains(help.String(), "  "+key+" ") {
			t.Errorf("key %s (no flag) missing from serve --help", key)
		}
	}
}

// TestMain prints one line naming the tests skipped for want of the shared
// conformance material.
// TestMain installs the regex prefilter as main does, so that in-process
// commands run what the binary runs.
func TestMain(m *testing.M) {
	engine.InstallRegexPrefilter()
	os.Exit(testkit.Main(m))
}
