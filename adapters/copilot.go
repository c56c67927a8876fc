package adapters

import (
	"errors"
	"time"
)

// Copilot (CLI and cloud agent): two dialects (CONTRACTS.md §5). The
// camelCase one (preToolUse…) has no hook_event_name, so the hook is read
// from the fields present; toolArgs is an object or a JSON string. The VS
// Code one (PreToolUse…) is Claude Code's snake_case. No call id
// (synthesized). MCP tool naming is undocumented: every tool is native
// unless named mcp__server__tool. Deny is flat {permissionDecision,
// permissionDecisionReason}, which both dialects accept.
var copilot = agent{
	parse: parseCopilot,
	deny: func(_, reason string) any {
		return map[string]any{"permissionDecision": "deny", "permissionDecisionReason": reason}
	},
}

func parseCopilot(p payload, now time.Time) (*Event, error) {
	if p.has("hook_event_name") || p.has("session_id") || p.has("tool_name") {
		return parseClaudeLike(Copilot, p, now)
	}
	m := &mapped{agent: Copilot, native: p, time: p.stamp("timestamp", now)}
	m.session = session{id: p.str("sessionId"), cwd: p.str("cwd")}
	switch {
	case p.has("toolName") && p.has("toolResult"):
		m.hook = "postToolUse"
	case p.has("toolName") && p.has("error"):
		m.hook = "postToolUseFailure"
	case p.has("toolName"):
		m.hook = "preToolUse"
	case p.has("source") || p.has("initialPrompt"):
		m.hook = "sessionStart"
	case p.has("reason"):
		m.hook = "sessionEnd"
	default:
		return m.none(), nil
	}
	switch m.hook {
	case "sessionStart":
		return m.sessionStart(p.str("source"), "", ""), nil
	case "sessionEnd":
		r := p.str("reason")
		return m.sessionEnd(r, sessionEndOutcome(r)), nil
	}
	tn := p.str("toolName")
	if tn == "" {
		return nil, errors.New("toolName is not a non-empty string")
	}
	c := call{name: tn, input: p.object("toolArgs"), mcp: mcpNamed(tn)}
	c.kind = kindOf(Copilot, tn, c.mcp != nil)
	switch m.hook {
	case "preToolUse":
		return m.toolEvent(TypeToolBefore, c), nil
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
	return m.toolEvent(TypeToolAfter, c), nil
}
