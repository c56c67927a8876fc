package adapters

import (
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// Cursor: preToolUse and the per-kind layers beforeShellExecution,
// beforeReadFile, beforeMCPExecution; postToolUse, postToolUseFailure,
// afterShellExecution, afterMCPExecution, afterFileEdit; sessionStart,
// sessionEnd (CONTRACTS.md §4). Deny is flat {permission, user_message,
// agent_message}; beforeReadFile takes permission and user_message only.
var cursor = agent{
	hook:  func(p payload) string { return p.str("hook_event_name") },
	parse: parseCursor,
	deny: func(hook, reason string) any {
		if hook == "beforeReadFile" {
			return map[string]any{"permission": "deny", "user_message": reason}
		}
		return map[string]any{"permission": "deny", "user_message": reason, "agent_message": reason}
	},
}

func parseCursor(p payload, hook string, now time.Time) (*Event, error) {
	m := &mapped{agent: Cursor, hook: hook, native: p, time: now.UTC().Format(time.RFC3339Nano)}
	id := p.str("conversation_id")
	if id == "" {
		id = p.str("session_id")
	}
	m.session = session{id: id, model: p.str("model")}
	if list, ok := p["workspace_roots"].([]any); ok {
		for _, r := range list {
			if s, ok := r.(string); ok && s != "" {
				m.session.roots = append(m.session.roots, s)
			}
		}
	}
	// preToolUse's cwd is often "": the first workspace root stands in.
	m.session.cwd = p.str("cwd")
	if m.session.cwd == "" && len(m.session.roots) > 0 {
		m.session.cwd = m.session.roots[0]
	}
	switch m.hook {
	case "preToolUse", "postToolUse", "postToolUseFailure":
		tn := p.str("tool_name")
		if tn == "" {
			return nil, errors.New("payload has no tool_name")
		}
		c := call{id: p.str("tool_use_id"), name: tn, input: p.object("tool_input")}
		if t, ok := strings.CutPrefix(tn, "MCP:"); ok && t != "" {
			// The generic hook names MCP tools without their server.
			c.mcp = mcpDescriptor("unknown", t, "inferred", nil)
		}
		c.kind = kindOf(Cursor, tn, c.mcp != nil)
		if c.kind == kindShell {
			c.dir = shellDir(Cursor, tn, c.input)
		}
		switch m.hook {
		case "preToolUse":
			return m.toolEvent(ahp.EventToolBefore, c), nil
		case "postToolUse":
			c.outcome, c.elapsed = cursorOutcome(p.str("tool_output")), p["duration"]
		default:
			c.elapsed, c.errMsg = p["duration"], p.str("error_message")
			switch p.str("failure_type") {
			case "timeout":
				c.outcome = "timeout"
			case "permission_denied":
				c.outcome = "denied"
			default:
				c.outcome = "error"
			}
			if b, _ := p["is_interrupt"].(bool); b {
				c.outcome = "cancelled"
			}
		}
		return m.toolEvent(ahp.EventToolAfter, c), nil
	case "beforeShellExecution", "afterShellExecution":
		// Named like preToolUse's shell tool, so one rule covers both layers.
		c := call{name: "Shell", kind: kindShell, input: map[string]any{"command": p.str("command")}}
		if d := p.str("cwd"); d != "" {
			c.input["cwd"] = d
			c.dir = d
		}
		if m.hook == "beforeShellExecution" {
			return m.toolEvent(ahp.EventToolBefore, c), nil
		}
		c.outcome, c.elapsed = "ok", p["duration"]
		return m.toolEvent(ahp.EventToolAfter, c), nil
	case "beforeReadFile":
		// The file's content stays in native only: rules read the path.
		c := call{name: "Read", kind: kindFileRead, input: map[string]any{"file_path": p.str("file_path")}}
		return m.toolEvent(ahp.EventToolBefore, c), nil
	case "beforeMCPExecution", "afterMCPExecution":
		tn := p.str("tool_name")
		if tn == "" {
			return nil, errors.New("payload has no tool_name")
		}
		c := call{name: tn, kind: kindMCP, input: p.object("tool_input"), mcp: cursorMCP(p, tn)}
		if m.hook == "beforeMCPExecution" {
			return m.toolEvent(ahp.EventToolBefore, c), nil
		}
		c.outcome, c.elapsed = "ok", p["duration"]
		return m.toolEvent(ahp.EventToolAfter, c), nil
	case "afterFileEdit":
		c := call{name: "Edit", kind: kindFileEdit, input: map[string]any{"file_path": p.str("file_path")}, outcome: "ok"}
		return m.toolEvent(ahp.EventToolAfter, c), nil
	case "sessionStart":
		return m.sessionStart("startup", p.str("cursor_version"), ""), nil
	case "sessionEnd":
		r := p.str("reason")
		return m.sessionEnd(r, sessionEndOutcome(r)), nil
	}
	return m.none(), nil
}

// cursorMCP names the server of a beforeMCPExecution call by what Cursor
// tells of it: the URL's host, or the command that starts it.
func cursorMCP(p payload, tool string) map[string]any {
	if u := p.str("url"); isHTTPURL(u) {
		parsed, _ := url.Parse(u)
		return mcpDescriptor(parsed.Hostname(), tool, "runtime", map[string]any{"transport": "http", "url": u})
	}
	if cmd := p.str("command"); cmd != "" {
		return mcpDescriptor(cmd, tool, "runtime", map[string]any{"transport": "stdio", "command": cmd, "args": []any{},
			"gaps": []any{map[string]any{"path": "cwd", "reason": "not reported by the agent"}}})
	}
	return mcpDescriptor("unknown", tool, "inferred", nil)
}

// cursorOutcome reads the exit code Cursor puts in a shell tool's
// tool_output (a JSON string).
func cursorOutcome(out string) string {
	var o struct {
		ExitCode *json.Number `json:"exitCode"`
	}
	if json.Unmarshal([]byte(out), &o) == nil && o.ExitCode != nil && o.ExitCode.String() != "0" {
		return "error"
	}
	return "ok"
}

func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}
