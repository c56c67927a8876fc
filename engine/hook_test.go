package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/ahp-opa/ahp-opa/adapters"
)

// TestHookDecider: a deny reaches the adapter with the first match's
// reason (redacted) and code; an evaluation error says what to run and
// quotes nothing of the input.
func TestHookDecider(t *testing.T) {
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
