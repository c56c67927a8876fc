package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/ahp-opa/ahp-opa/adapters"
)

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

// TestHookDecider: a deny reaches the adapter with the first match's
// reason (redacted) and code; an evaluation error says what to run and
// quotes nothing of the input.
func TestHookDecider(t *testing.T) {
	t.Parallel()
	const policy = `package ahp.tool.before.t
deny contains {"reason": concat(" ", ["no", input.tool.input.command]), "code": "com.example.no"} if input.tool.name == "Bash"
deny contains "bad" if {
	input.tool.name == "Err"
	to_number(input.tool.input.command) > 1
}
`
	redact := func(s string) string { return strings.ReplaceAll(s, "secret", "***") }
	bash := toolEvent(map[string]any{"name": "Bash", "input": map[string]any{"command": "my secret"}})
	failing := toolEvent(map[string]any{"name": "Err", "input": map[string]any{"command": "secret"}})

	h := HookDecider{Engine: loaded(t, Options{}, map[string]string{"p.rego": policy}), Redact: redact}
	d, err := h.Decide(context.Background(), &adapters.Event{Type: adapters.TypeToolBefore, Object: bash})
	if err != nil || !d.Deny || d.Reason != "no my ***" || d.Code != "com.example.no" {
		t.Fatalf("Decide = %+v, %v", d, err)
	}
	// Default on_rule_error=deny: the failing rule denies, naming itself
	// and never quoting the input.
	d, err = h.Decide(context.Background(), &adapters.Event{Type: adapters.TypeToolBefore, Object: failing})
	if err != nil || !d.Deny || strings.Contains(d.Reason, "secret") || !strings.Contains(d.Reason, "p.rego") {
		t.Fatalf("rule error under on_rule_error=deny: %+v, %v", d, err)
	}

	// on_rule_error=error: the adapter gets an error that says what to run.
	h.Engine = loaded(t, Options{OnRuleError: RuleErrorFail}, map[string]string{"p.rego": policy})
	_, err = h.Decide(context.Background(), &adapters.Event{Type: adapters.TypeToolBefore, Object: failing})
	if err == nil || strings.Contains(err.Error(), "secret") || !strings.Contains(err.Error(), "ahp-opa eval --explain") {
		t.Fatalf("evaluation error: %v", err)
	}
}
