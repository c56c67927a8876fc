package engine

import "testing"

// TestInputAgent: input.ahp.agent names the native agent of an event that
// came through a native hook, and is absent for any other source.
func TestInputAgent(t *testing.T) {
	t.Parallel()
	for src, want := range map[string]any{
		"urn:ahp-opa:agent:codex":  "codex",
		"urn:ahp-opa:agent:claude": nil, // not an agent adapters knows
		"urn:example:harness":      nil,
	} {
		ev := toolEvent(map[string]any{"name": "Bash", "input": map[string]any{"command": "ls"}})
		ev["source"] = src
		if got := enrich(t, ev)["agent"]; got != want {
			t.Errorf("%s: agent = %v, want %v", src, got, want)
		}
	}
}

// TestHookPathKeys: Copilot's filePath and Codex's apply_patch envelope
// under command name the files a tool touches.
func TestHookPathKeys(t *testing.T) {
	t.Parallel()
	for _, input := range []map[string]any{
		{"filePath": "/home/dev/repo/a.go"},
		{"command": "*** Begin Patch\n*** Update File: a.go\n@@\n-x\n+y\n*** End Patch\n"},
	} {
		in := enrich(t, toolEvent(map[string]any{"name": "edit", "kind": "file_edit", "input": input}))
		paths, _ := in["tool"].(map[string]any)["paths"].([]any)
		if len(paths) != 1 || paths[0].(map[string]any)["path"] != "/home/dev/repo/a.go" {
			t.Errorf("%v: paths = %v", input, paths)
		}
	}
}
