package adapters

import (
	"errors"
	"time"

	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// Copilot (CLI and cloud agent): two dialects (CONTRACTS.md §5). The
// camelCase one (preToolUse…) has no hook_event_name, so the hook is read
// from the fields present; toolArgs is an object or a JSON string. The VS
// Code one (PreToolUse…) is Claude Code's snake_case. No call id
// (synthesized). MCP tool naming is undocumented: every tool is native
// unless named mcp__server__tool. Deny is flat {permissionDecision,
// permissionDecisionReason}, which both dialects accept.
var copilot = agent{
	hook:  copilotHook,
	parse: parseCopilot,
	deny: func(_, reason string) any {
		return map[string]any{"permissionDecision": "deny", "permissionDecisionReason": reason}
	},
}

// vsCodeDialect reports whether a Copilot payload is in the VS Code
// (Claude Code) dialect rather than the camelCase one.
func vsCodeDialect(p payload) bool {
	return p.has("hook_event_name") || p.has("session_id") || p.has("tool_name")
}

// copilotHook names the hook of a camelCase payload, which does not say
// it, from the fields present.
func copilotHook(p payload) string {
	switch {
	case vsCodeDialect(p):
		return claudeHook(p)
	case p.has("toolName") && p.has("toolResult"):
		return "postToolUse"
	case p.has("toolName") && p.has("error"):
		return "postToolUseFailure"
	case p.has("toolName"):
		return "preToolUse"
	case p.has("source") || p.has("initialPrompt"):
		return "sessionStart"
	case p.has("reason"):
		return "sessionEnd"
	}
	return ""
}

func parseCopilot(p payload, hook string, now time.Time) (*Event, error) {
	if vsCodeDialect(p) {
		return parseClaudeLike(Copilot, p, hook, now)
	}
	m := &mapped{agent: Copilot, hook: hook, native: p, time: p.stamp("timestamp", now)}
	m.session = session{id: p.str("sessionId"), cwd: p.str("cwd")}
	switch m.hook {
	case "sessionStart":
		return m.sessionStart(p.str("source"), "", ""), nil
	case "sessionEnd":
		r := p.str("reason")
		return m.sessionEnd(r, sessionEndOutcome(r)), nil
	case "":
		return m.none(), nil
	}
	tn := p.str("toolName")
	if tn == "" {
		return nil, errors.New("toolName is not a non-empty string")
	}
	c := call{name: tn, input: p.object("toolArgs"), mcp: mcpNamed(tn)}
	c.kind = kindOf(Copilot, tn, c.mcp != nil)
	switch m.hook {
	case "preToolUse":
		return m.toolEvent(ahp.EventToolBefore, c), nil
	case "postToolUse":
		c.outcome = "ok"
		if r, ok := p["toolResult"].(map[string]any); ok {
			if t, _ := r["resultType"].(string); t != "" && t != "success" {
				c.outcome = "error"
			}
		}
	default:
		c.outcome, c.errMsg = "error", p.str("error")
	}
	return m.toolEvent(ahp.EventToolAfter, c), nil
}
