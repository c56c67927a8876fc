package bundles

import (
	"errors"
	"reflect"
	"testing"
)

func TestWithLibraryConfig(t *testing.T) {
	cfg := map[string]any{"disabled_rules": []any{"dev.ahp-opa.git.no-verify"}}
	tests := []struct {
		name    string
		data    map[string]any
		want    map[string]any
		wantErr bool
	}{
		{
			name: "no data",
			want: map[string]any{"ahp_opa": map[string]any{"config": cfg}},
		},
		{
			name: "beside other data",
			data: map[string]any{"ahp_opa": map[string]any{"config": map[string]any{"protected_branches": []any{"main"}}}, "team": 1},
			want: map[string]any{"team": 1, "ahp_opa": map[string]any{"config": map[string]any{
				"protected_branches": []any{"main"}, "disabled_rules": []any{"dev.ahp-opa.git.no-verify"},
			}}},
		},
		{
			name:    "set twice",
			data:    map[string]any{"ahp_opa": map[string]any{"config": map[string]any{"disabled_rules": []any{}}}},
			wantErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &Policy{Data: tt.data, Revision: "r"}
			got, err := WithLibraryConfig(p, cfg)
			if tt.wantErr {
				if err == nil {
					t.Fatal("want an error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Data, tt.want) {
				t.Errorf("data = %v, want %v", got.Data, tt.want)
			}
			if tt.data != nil && reflect.DeepEqual(p.Data, got.Data) {
				t.Error("the input policy was changed")
			}
		})
	}
	if p := (&Policy{}); mustSame(t, p) != p {
		t.Error("an empty configuration must return the policy unchanged")
	}
}

func mustSame(t *testing.T, p *Policy) *Policy {
	t.Helper()
	got, err := WithLibraryConfig(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestCheckLibraryConfigSuggests: an unknown key or rule id names the
// nearest valid one (internal/suggest's rule: at most a third of the name
// in edits, two for short names), and nothing when none is near.
func TestCheckLibraryConfigSuggests(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cfg     map[string]any
		want    LibraryConfigError
		message string
	}{
		{"key, one letter missing", map[string]any{"protected_brnches": []any{"main"}},
			LibraryConfigError{Key: "protected_brnches", Nearest: "protected_branches"},
			`unknown key "protected_brnches" in library; did you mean "protected_branches"?`},
		{"nested key", map[string]any{"exceptions": map[string]any{"pths": []any{"/tmp"}}},
			LibraryConfigError{Key: "exceptions.pths", Nearest: "exceptions.paths"}, ""},
		{"section name mistyped", map[string]any{"exeptions": map[string]any{}},
			LibraryConfigError{Key: "exeptions", Nearest: "exceptions"}, ""},
		{"key, nothing near", map[string]any{"zzzzzzzzzzzz": 1},
			LibraryConfigError{Key: "zzzzzzzzzzzz"}, `unknown key "zzzzzzzzzzzz" in library`},
		{"rule id, one letter missing", map[string]any{"disabled_rules": []any{"dev.ahp-opa.git.force-psh"}},
			LibraryConfigError{Key: "disabled_rules", Value: "dev.ahp-opa.git.force-psh", Nearest: "dev.ahp-opa.git.force-push"},
			`unknown rule id "dev.ahp-opa.git.force-psh" in library.disabled_rules; did you mean "dev.ahp-opa.git.force-push"?`},
		{"rule id, letters swapped", map[string]any{"disabled_rules": []any{"dev.ahp-opa.git.no-verfiy"}},
			LibraryConfigError{Key: "disabled_rules", Value: "dev.ahp-opa.git.no-verfiy", Nearest: "dev.ahp-opa.git.no-verify"}, ""},
		{"rule id, nothing near", map[string]any{"disabled_rules": []any{"force-push"}},
			LibraryConfigError{Key: "disabled_rules", Value: "force-push"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := CheckLibraryConfig(tt.cfg)
			got, ok := errors.AsType[*LibraryConfigError](err)
			if !ok {
				t.Fatalf("error %v, want a *LibraryConfigError", err)
			}
			if *got != tt.want {
				t.Errorf("error %+v, want %+v", *got, tt.want)
			}
			if tt.message != "" && err.Error() != tt.message {
				t.Errorf("message %q, want %q", err.Error(), tt.message)
			}
		})
	}
}

// TestLibraryConfigEffects: the effect keys are known, and an effect name
// with a typo is an error naming the nearest one.
func TestLibraryConfigEffects(t *testing.T) {
	ok := map[string]any{
		"disabled_effects": []any{"publish", "remote.change"},
		"effects":          map[string]any{"programs": map[string]any{}},
	}
	if err := CheckLibraryConfig(ok); err != nil {
		t.Fatalf("valid effect keys refused: %v", err)
	}
	err := CheckLibraryConfig(map[string]any{"disabled_effects": []any{"publsh"}})
	if err == nil || err.Error() != `unknown effect "publsh" in library.disabled_effects; did you mean "publish"?` {
		t.Fatalf("got %v", err)
	}
}
