package adapters_test

import (
	"encoding/json"
	"testing"

	"github.com/ahp-opa/ahp-opa/internal/adapters"
)

// TestRenderAsk: an approvable deny puts the call to the user's own
// approval prompt where the agent has one (Claude Code's PreToolUse ask,
// Gemini CLI's BeforeTool ask); every other agent, and every other hook,
// gets the plain deny.
func TestRenderAsk(t *testing.T) {
	for _, tc := range []struct {
		agent, hook string
		ask         bool
		want        string
	}{
		{adapters.ClaudeCode, "PreToolUse", true, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"r"}}`},
		{adapters.ClaudeCode, "PreToolUse", false, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"r"}}`},
		{adapters.GeminiCLI, "BeforeTool", true, `{"decision":"ask","reason":"r"}`},
		{adapters.GeminiCLI, "BeforeTool", false, `{"decision":"deny","reason":"r"}`},
		// Codex marks an ask failed and runs the tool (CONTRACTS.md §2.3).
		{adapters.Codex, "PreToolUse", true, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"r"}}`},
		{adapters.Copilot, "preToolUse", true, `{"permissionDecision":"deny","permissionDecisionReason":"r"}`},
		{adapters.Cursor, "beforeShellExecution", true, ""},
	} {
		ans, err := adapters.Render(tc.agent, tc.hook, adapters.Decision{Deny: true, Reason: "r", Ask: tc.ask})
		if err != nil {
			t.Fatal(err)
		}
		if tc.want == "" {
			// Cursor has no prompt a hook can open: whatever its deny
			// form, it must not ask.
			var m map[string]any
			if err := json.Unmarshal(ans.Stdout, &m); err != nil || m["permission"] != "deny" {
				t.Errorf("%s %s: %s, want its deny", tc.agent, tc.hook, ans.Stdout)
			}
			continue
		}
		if got := string(ans.Stdout); got != tc.want+"\n" {
			t.Errorf("%s %s ask=%v:\n got %s\nwant %s", tc.agent, tc.hook, tc.ask, got, tc.want)
		}
	}
	// An observation is never asked about, approvable or not.
	ans, _ := adapters.Render(adapters.ClaudeCode, "PostToolUse", adapters.Decision{Deny: true, Reason: "r", Ask: true})
	if string(ans.Stdout) != "{}\n" {
		t.Errorf("PostToolUse got %s", ans.Stdout)
	}
}
