package adapters

import (
	"errors"
	"time"

	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// Claude Code: PreToolUse, PostToolUse, PostToolUseFailure, SessionStart,
// SessionEnd (CONTRACTS.md §1). Deny is hookSpecificOutput at exit 0.
var claudeCode = agent{
	hook: claudeHook,
	parse: func(p payload, hook string, now time.Time) (*Event, error) {
		return parseClaudeLike(ClaudeCode, p, hook, now)
	},
	deny: claudeDeny,
	ask:  claudeAsk,
}

// claudeAsk puts the call to Claude Code's permission prompt; the reason
// is shown to the user (CONTRACTS.md §1.3). Only PreToolUse can ask.
func claudeAsk(hook, reason string) any {
	if hook != "PreToolUse" {
		return claudeDeny(hook, reason)
	}
	return map[string]any{"hookSpecificOutput": map[string]any{
		"hookEventName":            "PreToolUse",
		"permissionDecision":       "ask",
		"permissionDecisionReason": reason,
	}}
}

// claudeDeny is the deny of Claude Code and Codex; Codex marks a run failed
// (and runs the tool) on any field it does not know, so nothing else goes in.
func claudeDeny(_, reason string) any {
	return map[string]any{"hookSpecificOutput": map[string]any{
		"hookEventName":            "PreToolUse",
		"permissionDecision":       "deny",
		"permissionDecisionReason": reason,
	}}
}

// parseClaudeLike maps the snake_case dialect Claude Code introduced and
// Codex and Copilot's VS Code form share.
func parseClaudeLike(name string, p payload, hook string, now time.Time) (*Event, error) {
	m := &mapped{agent: name, hook: hook, native: p, time: p.stamp("timestamp", now)}
	m.session = session{
		id:      p.str("session_id"),
		cwd:     p.str("cwd"),
		model:   p.str("model"),
		agentID: p.str("agent_id"),
		agentTy: p.str("agent_type"),
	}
	switch m.hook {
	case "PreToolUse", "PostToolUse", "PostToolUseFailure":
		c, err := claudeCall(name, p)
		if err != nil {
			return nil, err
		}
		if m.hook == "PreToolUse" {
			return m.toolEvent(ahp.EventToolBefore, c), nil
		}
		c.outcome, c.elapsed = "ok", p["duration_ms"]
		if m.hook == "PostToolUseFailure" {
			c.outcome, c.errMsg = "error", p.str("error")
			if b, _ := p["is_interrupt"].(bool); b {
				c.outcome = "cancelled"
			}
		} else if name == Codex {
			c.outcome = codexOutcome(p["tool_response"])
		}
		return m.toolEvent(ahp.EventToolAfter, c), nil
	case "SessionStart":
		return m.sessionStart(p.str("source"), "", p.str("permission_mode")), nil
	case "SessionEnd":
		r := p.str("reason")
		return m.sessionEnd(r, sessionEndOutcome(r)), nil
	}
	return m.none(), nil
}

// claudeHook names the hook of a payload in Claude Code's dialect, from
// the fields present when hook_event_name is missing.
func claudeHook(p payload) string {
	if h := p.str("hook_event_name"); h != "" {
		return h
	}
	switch {
	case p.has("tool_name") && p.has("error"):
		return "PostToolUseFailure"
	case p.has("tool_name") && p.has("tool_response"):
		return "PostToolUse"
	case p.has("tool_name"):
		return "PreToolUse"
	}
	return ""
}

func claudeCall(name string, p payload) (call, error) {
	tn := p.str("tool_name")
	if tn == "" {
		return call{}, errors.New("payload has no tool_name")
	}
	input, ok := p["tool_input"].(map[string]any)
	if !ok {
		if p.has("tool_input") {
			return call{}, errors.New("tool_input is not an object")
		}
		input = map[string]any{}
	}
	c := call{id: p.str("tool_use_id"), name: tn, input: input, mcp: mcpNamed(tn)}
	c.kind = kindOf(name, tn, c.mcp != nil)
	if c.kind == kindShell {
		c.dir = shellDir(name, tn, input) // Codex's workdir; Claude Code's Bash has none
	}
	return c, nil
}

// codexOutcome reads an exit status from a Codex tool_response, whose
// shape is not documented: an object with a non-zero exit code is an
// error, anything else ok.
func codexOutcome(resp any) string {
	m, ok := resp.(map[string]any)
	if !ok {
		return "ok"
	}
	for _, k := range []string{"exit_code", "exitCode"} {
		if n, ok := m[k].(interface{ String() string }); ok && n.String() != "0" {
			return "error"
		}
	}
	return "ok"
}
