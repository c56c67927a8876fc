package main

import (
	"encoding/json"
	"fmt"
	"github.com/ahp-opa/ahp-opa/adapters"
)

// refuse gives the agent's pre-tool deny answer (CONTRACTS.md §7), at exit
// 0, the one form every agent honours with the reason intact.
// It stands in until adapters.Refuse lands from the hooks branch.
func refuse(agent, reason string) (ans adapters.Answer, err error) {
	var v any
	switch agent {
	case "claude-code", "codex":
		v = map[string]any{"hookSpecificOutput": map[string]string{
			"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": reason}}
	case "gemini-cli":
		v = map[string]string{"decision": "deny", "reason": reason}
	case "cursor":
		v = map[string]string{"permission": "deny", "user_message": reason, "agent_message": reason}
	case "copilot":
		v = map[string]string{"permissionDecision": "deny", "permissionDecisionReason": reason}
	default:
		return ans, fmt.Errorf("unknown agent %q", agent)
	}
	b, err := json.Marshal(v)
	ans.Stdout = append(b, '\n')
	return ans, err
}
