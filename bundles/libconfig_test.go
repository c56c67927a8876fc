package bundles

import (
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
