package adapters

import (
	"errors"
	"time"

	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// Gemini CLI: BeforeTool, AfterTool, SessionStart, SessionEnd (CONTRACTS.md
// §3). No call id (synthesized); MCP server and tool come from mcp_context,
// never from splitting mcp_<server>_<tool>. Deny is {decision, reason}.
var geminiCLI = agent{
	hook:  geminiHook,
	parse: parseGemini,
	deny: func(_, reason string) any {
		return map[string]any{"decision": "deny", "reason": reason}
	},
	// Gemini CLI's HookDecision includes "ask", which puts the call to
	// the same confirmation prompt as its policy engine; headless runs
	// treat it as a deny.
	ask: func(hook, reason string) any {
		if hook != "BeforeTool" {
			return map[string]any{"decision": "deny", "reason": reason}
		}
		return map[string]any{"decision": "ask", "reason": reason}
	},
}

// geminiHook names the hook of a payload, from the fields present when
// hook_event_name is missing.
func geminiHook(p payload) string {
	switch {
	case p.str("hook_event_name") != "":
		return p.str("hook_event_name")
	case p.has("tool_name") && p.has("tool_response"):
		return "AfterTool"
	case p.has("tool_name"):
		return "BeforeTool"
	}
	return ""
}

func parseGemini(p payload, hook string, now time.Time) (*Event, error) {
	m := &mapped{agent: GeminiCLI, hook: hook, native: p, time: p.stamp("timestamp", now)}
	m.session = session{id: p.str("session_id"), cwd: p.str("cwd")}
	switch m.hook {
	case "BeforeTool", "AfterTool":
		tn := p.str("tool_name")
		if tn == "" {
			return nil, errors.New("payload has no tool_name")
		}
		input, ok := p["tool_input"].(map[string]any)
		if !ok {
			if p.has("tool_input") {
				return nil, errors.New("tool_input is not an object")
			}
			input = map[string]any{}
		}
		c := call{name: tn, input: input}
		if ctx, ok := p["mcp_context"].(map[string]any); ok {
			c.mcp = geminiMCP(payload(ctx), tn)
		}
		c.kind = kindOf(GeminiCLI, tn, c.mcp != nil)
		if c.kind == kindShell {
			c.dir = shellDir(GeminiCLI, tn, input) // dir_path; workdir is ignored
		}
		if m.hook == "BeforeTool" {
			return m.toolEvent(ahp.EventToolBefore, c), nil
		}
		c.outcome = "ok"
		if resp, ok := p["tool_response"].(map[string]any); ok && resp["error"] != nil {
			c.outcome = "error"
			c.errMsg = errorText(resp["error"])
		}
		return m.toolEvent(ahp.EventToolAfter, c), nil
	case "SessionStart":
		return m.sessionStart(p.str("source"), "", ""), nil
	case "SessionEnd":
		r := p.str("reason")
		return m.sessionEnd(r, sessionEndOutcome(r)), nil
	}
	return m.none(), nil
}

// geminiMCP builds the descriptor from mcp_context, which Gemini fills at
// run time: command/args/cwd for stdio servers, url for HTTP ones.
func geminiMCP(ctx payload, name string) map[string]any {
	server, tool := ctx.str("server_name"), ctx.str("tool_name")
	if server == "" {
		server = "unknown"
	}
	if tool == "" {
		tool = name
	}
	var conn map[string]any
	switch {
	case ctx.str("command") != "":
		conn = map[string]any{"transport": "stdio", "command": ctx.str("command")}
		args := []any{}
		if list, ok := ctx["args"].([]any); ok {
			for _, a := range list {
				if s, ok := a.(string); ok {
					args = append(args, s)
				}
			}
		}
		conn["args"] = args
		if d := ctx.str("cwd"); d != "" {
			conn["cwd"] = d
		} else {
			conn["gaps"] = []any{map[string]any{"path": "cwd", "reason": "not reported by the agent"}}
		}
	case isHTTPURL(ctx.str("url")):
		conn = map[string]any{"transport": "http", "url": ctx.str("url")}
	}
	return mcpDescriptor(server, tool, "runtime", conn)
}

func errorText(v any) string {
	switch e := v.(type) {
	case string:
		return e
	case map[string]any:
		if s, ok := e["message"].(string); ok {
			return s
		}
	}
	return ""
}
