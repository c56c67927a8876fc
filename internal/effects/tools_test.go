package effects

import (
	"slices"
	"testing"
)

func TestNameWords(t *testing.T) {
	for name, want := range map[string][]string{
		"drop_collection":  {"drop", "collection"},
		"drop-collection":  {"drop", "collection"},
		"dropCollection":   {"drop", "collection"},
		"DeploySite":       {"deploy", "site"},
		"flushall":         {"flushall"},
		"s3_rb":            {"s3", "rb"},
		"":                 nil,
		"a_b_c_d_e_f_g_h":  {"a", "b", "c", "d", "e", "f"},
		"list.deployments": {"list", "deployments"},
	} {
		if got := nameWords(name); !slices.Equal(got, want) {
			t.Errorf("nameWords(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestToolVerbs: the words of an unlisted MCP tool's name reach the
// table's verbs; a read word means the tool only looks.
func TestToolVerbs(t *testing.T) {
	m, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		effect     string
		confidence string
	}{
		{"drop_collection", StoreDestroy, Medium},
		{"deploySite", Publish, ""},
		{"publish", Publish, ""},
		{"delete_issue", StoreDestroy, Low},
		{"delete_database", StoreDestroy, Medium},
		{"deleteBucket", StoreDestroy, Medium},
		{"remove-project", StoreDestroy, Medium},
		{"delete_comment", StoreDestroy, Low},
		{"list_deployments", "", ""},
		{"get_release", "", ""},
		{"rollout_status", "", ""},
		{"create_issue", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := m.ToolVerbs(tt.name, nil)
			if tt.effect == "" {
				if len(out) != 0 {
					t.Fatalf("effects %v, want none", out)
				}
				return
			}
			if len(out) != 1 || out[0].Effect != tt.effect || out[0].Source.Kind != "tool-verb" || out[0].Command != -1 {
				t.Fatalf("effects %v, want one %s from the name", out, tt.effect)
			}
			if tt.confidence != "" && out[0].Confidence != tt.confidence {
				t.Errorf("confidence %s, want %s", out[0].Confidence, tt.confidence)
			}
		})
	}
	if !m.KnownTool("Merge_Pull_Request") || m.KnownTool("add_note") {
		t.Error("KnownTool: want merge_pull_request known, add_note not")
	}
	var nilM *Matcher
	if nilM.KnownTool("x") || len(nilM.ToolVerbs("drop_table", nil)) != 0 {
		t.Error("a nil matcher knows nothing")
	}
}
