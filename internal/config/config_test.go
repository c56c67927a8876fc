package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestTokenEnvUnderThePrefix: the variable token_env names holds the
// bearer token, not a setting, even when its name starts with AHP_OPA_;
// any other unknown AHP_OPA_* variable stays an error.
func TestTokenEnvUnderThePrefix(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "ahp-opa.yaml")
	if err := os.WriteFile(file, []byte("token_env: AHP_OPA_FLEET_TOKEN\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		path    string
		flag    string // --token-env, when set
		environ []string
		unknown bool // ErrUnknownKey expected
	}{
		{"default name", "", "", []string{"AHP_OPA_TOKEN=s3cret"}, false},
		{"named in the file", file, "", []string{"AHP_OPA_FLEET_TOKEN=s3cret"}, false},
		{"named in the environment", "", "", []string{"AHP_OPA_TOKEN_ENV=AHP_OPA_FLEET_TOKEN", "AHP_OPA_FLEET_TOKEN=s3cret"}, false},
		{"named by the flag", "", "AHP_OPA_FLEET_TOKEN", []string{"AHP_OPA_FLEET_TOKEN=s3cret"}, false},
		{"the flag wins over the file", file, "AHP_OPA_OTHER_TOKEN", []string{"AHP_OPA_FLEET_TOKEN=s3cret"}, true},
		{"not named at all", "", "", []string{"AHP_OPA_FLEET_TOKEN=s3cret"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
			fs.String("token-env", DefaultTokenEnv, "")
			if tc.flag != "" {
				if err := fs.Parse([]string{"--token-env", tc.flag}); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Load(fs, tc.path, func() []string { return tc.environ })
			if got := errors.Is(err, ErrUnknownKey); got != tc.unknown {
				t.Errorf("Load: %v; want an unknown-key error: %v", err, tc.unknown)
			}
			if err != nil && !tc.unknown {
				t.Errorf("Load: %v", err)
			}
		})
	}
}

// TestDecodeErrorEchoesValue: a bad value is quoted back, so the user sees
// which source won, unless the key's name says it holds a secret.
func TestDecodeErrorEchoesValue(t *testing.T) {
	where := func(string) string { return "environment variable X" }
	tests := []struct {
		key, value, want, notWant string
	}{
		{key: "eval_timeout", value: "5x", want: `time: invalid duration (got "5x")`},
		{key: "decision_logs.token", value: "s3cret-v4lue", want: "time: invalid duration", notWant: "s3cret"},
	}
	for _, tt := range tests {
		err := locateDecodeError(fmt.Errorf("'%s' time: invalid duration", tt.key), where, func(string) any { return tt.value })
		if !strings.Contains(err.Error(), tt.want) || tt.notWant != "" && strings.Contains(err.Error(), tt.notWant) {
			t.Errorf("%s: %v", tt.key, err)
		}
	}
}
