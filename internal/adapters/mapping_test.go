package adapters_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ahp-opa/ahp-opa/internal/adapters"
	enrichment "github.com/ahp-opa/ahp-opa/internal/enrich"
	"github.com/ahp-opa/ahp-opa/transport"
	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// get reads a dotted path of a JSON-like value ("tool.mcp.server.id").
func get(v any, path string) any {
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// TestMapping pins, per fixture, the fields a policy relies on.
func TestMapping(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		agent, file string
		want        map[string]any // dotted path → value; nil value means absent
	}{
		{"claude-code", "claude-code/pre-tool-shell.json", map[string]any{
			"tool.name": "Bash", "tool.kind": "shell", "tool.origin": "native", "path": "native",
			"tool.input.command": "git push --force origin main", "call.id": "toolu_01Q7cc0000000000000000shell",
			"call.synthesized": nil, "session.id": "5f0c2b7e-cc01-4d2a-9a51-2f7e5f1a9c10", "session.cwd": "/repo/demo",
			"source": "urn:ahp-opa:agent:claude-code", "extensions.dev\x00ahp-opa\x00hook.hook": "PreToolUse",
			"native.permission_mode": "default", "time": "2026-12-02T10:00:00Z",
		}},
		{"claude-code", "claude-code/pre-tool-mcp.json", map[string]any{
			"tool.origin": "mcp", "path": "mcp", "tool.kind": "mcp", "tool.mcp.server.id": "github",
			"tool.mcp.toolName": "create_issue", "tool.mcp.provenance": "inferred",
		}},
		{"claude-code", "claude-code/pre-tool-subagent-shell.json", map[string]any{
			"session.agent.id": "a4d2c8f1e0b3a297", "session.agent.type": "Explore",
		}},
		{"claude-code", "claude-code/post-tool-failure.json", map[string]any{
			"type": "tool.after", "outcome": "error", "execution.status": "executed",
			"error.message": "Exit code 2\n./main.go:3:1: syntax error", "durationMs": json.Number("903"),
		}},
		{"claude-code", "claude-code/session-start.json", map[string]any{
			"type": "session.start", "trigger": "startup", "harness.name": "claude-code", "permissionMode": "unknown",
		}},
		{"claude-code", "claude-code/session-end.json", map[string]any{
			"type": "session.end", "outcome": "completed", "reason": "prompt_input_exit",
		}},
		{"codex", "codex/pre-tool-write.json", map[string]any{
			"tool.name": "apply_patch", "tool.kind": "file_edit", "turn.id": "019a3c1e-7b2d-7c40-9e11-5a0c3d2b1f0a",
			"session.model": "gpt-5-codex",
		}},
		{"codex", "codex/pre-tool-subagent-shell.json", map[string]any{
			"session.id": "019a3c1e-7b2d-7c40-9e11-5a0c3d2b1f00", "session.agent.type": "worker",
		}},
		{"gemini-cli", "gemini-cli/pre-tool-shell.json", map[string]any{
			"tool.kind": "shell", "call.synthesized": true, "time": "2026-12-02T10:04:05.123Z",
			"session.cwd": "/repo/demo", // dir_path "." is the session's directory
		}},
		{"gemini-cli", "gemini-cli/pre-tool-mcp.json", map[string]any{
			"tool.name": "mcp_github_create_issue", "tool.origin": "mcp", "tool.mcp.server.id": "github",
			"tool.mcp.toolName": "create_issue", "tool.mcp.provenance": "runtime",
			"tool.mcp.connection.transport": "stdio", "tool.mcp.connection.command": "npx",
		}},
		{"gemini-cli", "gemini-cli/post-tool.json", map[string]any{"type": "tool.after", "outcome": "ok"}},
		{"cursor", "cursor/pre-tool-shell.json", map[string]any{
			"tool.name": "Shell", "tool.kind": "shell", "session.id": "3cf8e158-1111-4e2a-9b7c-0d1e2f3a4b5c",
			"session.cwd": "/repo/demo", "call.id": "d024a132-85b4-4c79-80f0-6b2e2fffc1fe", "session.model": "default",
		}},
		{"cursor", "cursor/before-shell-execution.json", map[string]any{
			"tool.name": "Shell", "tool.kind": "shell", "tool.input.command": "git push --force origin main",
			"call.synthesized": true,
		}},
		{"cursor", "cursor/before-read-file.json", map[string]any{
			"tool.name": "Read", "tool.kind": "file_read", "tool.input.file_path": "/repo/demo/.env",
			"tool.input.content": nil, "native.content": "API_KEY=example-not-a-secret\n",
		}},
		{"cursor", "cursor/before-mcp-execution.json", map[string]any{
			"tool.name": "create_issue", "tool.origin": "mcp", "tool.input.owner": "example",
			"tool.mcp.server.id": "npx -y @example/github-mcp", "tool.mcp.connection.transport": "stdio",
		}},
		{"cursor", "cursor/pre-tool-mcp.json", map[string]any{
			"tool.origin": "mcp", "tool.mcp.toolName": "create_issue",
		}},
		{"cursor", "cursor/post-tool-failure.json", map[string]any{
			"outcome": "denied", "execution.status": "skipped", "execution.reason": "policy",
		}},
		{"cursor", "cursor/session-end.json", map[string]any{"outcome": "cancelled", "reason": "user_close"}},
		{"copilot", "copilot/pre-tool-shell.json", map[string]any{
			"tool.name": "bash", "tool.kind": "shell", "tool.input.command": "git push --force origin main",
			"session.id": "6c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f", "time": "2026-12-02T10:04:05.123Z",
			"call.synthesized": true, "extensions.dev\x00ahp-opa\x00hook.hook": "preToolUse",
		}},
		{"copilot", "copilot/pre-tool-write.json", map[string]any{
			"tool.name": "edit", "tool.kind": "file_edit", "tool.input.path": "/repo/demo/src/app.go",
		}},
		{"copilot", "copilot/pre-tool-mcp.json", map[string]any{"tool.origin": "native", "tool.kind": "other"}},
		{"copilot", "copilot/pre-tool-shell-vscode-format.json", map[string]any{
			"tool.kind": "shell", "extensions.dev\x00ahp-opa\x00hook.hook": "PreToolUse",
		}},
		{"copilot", "copilot/post-tool-failure.json", map[string]any{"type": "tool.after", "outcome": "error"}},
		{"copilot", "copilot/session-start.json", map[string]any{"type": "session.start", "trigger": "startup"}},
		{"copilot", "copilot/session-end.json", map[string]any{"type": "session.end", "outcome": "completed"}},
	}
	dir, _ := loadIndex(t)
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			ev, err := adapters.Parse(c.agent, read(t, filepath.Join(dir, c.file)), now)
			if err != nil {
				t.Fatal(err)
			}
			for path, want := range c.want {
				// The extension key holds dots: \x00 separates its parts.
				var got any
				if strings.HasPrefix(path, "extensions.") {
					got = get(ev.Object["extensions"].(map[string]any)[adapters.ExtensionKey], "hook")
				} else {
					got = get(ev.Object, path)
				}
				if fmt.Sprint(got) != fmt.Sprint(want) || (want == nil) != (got == nil) {
					t.Errorf("%s = %#v, want %#v", path, got, want)
				}
			}
		})
	}
}

// TestEventIDsStable: a payload the agent sends twice maps to the same
// event and call ids (B-DUP-1), and two calls never share one.
func TestEventIDsStable(t *testing.T) {
	for _, agent := range adapters.Names {
		p := []byte(preToolPayload[agent])
		a, _ := adapters.Parse(agent, p, time.Now())
		b, _ := adapters.Parse(agent, p, time.Now().Add(time.Hour))
		if a.Object["id"] != b.Object["id"] || get(a.Object, "call.id") != get(b.Object, "call.id") {
			t.Errorf("%s: ids differ across a re-send", agent)
		}
		other := []byte(strings.Replace(preToolPayload[agent], `ls`, `pwd`, 1))
		other = []byte(strings.Replace(string(other), `"t1"`, `"t2"`, 1))
		c, _ := adapters.Parse(agent, other, time.Now())
		if a.Object["id"] == c.Object["id"] {
			t.Errorf("%s: two calls share id %v", agent, a.Object["id"])
		}
	}
}

// TestCodexLocalShell: local_shell's argv command and workdir reach the
// engine as a parsed command run in workdir.
func TestCodexLocalShell(t *testing.T) {
	p := `{"session_id":"s","cwd":"/repo","hook_event_name":"PreToolUse","tool_name":"local_shell",
	  "tool_input":{"command":["rm","-rf","build"],"workdir":"sub"},"tool_use_id":"c1"}`
	ev, err := adapters.Parse(adapters.Codex, []byte(p), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	in := enrich(t, ev)
	if got := in["workspace"]; fmt.Sprint(got) != fmt.Sprint(map[string]any{"cwd": "/repo/sub", "home": "/home/dev", "roots": []any{"/repo"}}) {
		t.Errorf("workspace = %v", got)
	}
	cmd := get(in, "shell.commands").([]any)[0].(map[string]any)
	if cmd["name"] != "rm" || fmt.Sprint(get(cmd["paths"].([]any)[0], "path")) != "/repo/sub/build" {
		t.Errorf("command = %v", cmd)
	}
}

// TestEngineSeesAgent: the engine lifts the agent to input.ahp.agent, and
// finds the command or path of every pre-tool fixture where the table says.
func TestEngineSeesAgent(t *testing.T) {
	dir, fixtures := loadIndex(t)
	for _, f := range fixtures {
		if f.Kind != "input" || eventTypes[f.Event] != ahp.EventToolBefore {
			continue
		}
		ev, err := adapters.Parse(f.Agent, read(t, filepath.Join(dir, f.File)), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		in := enrich(t, ev)
		if in["agent"] != f.Agent {
			t.Errorf("%s: input.ahp.agent = %v", f.File, in["agent"])
		}
		kind := get(ev.Object, "tool.kind")
		switch kind {
		case "shell":
			if s, _ := get(in, "shell.command").(string); s == "" {
				t.Errorf("%s: no input.ahp.shell.command", f.File)
			}
		case "file_read", "file_write", "file_edit":
			if p, _ := get(in, "tool.paths").([]any); len(p) == 0 {
				t.Errorf("%s: no input.ahp.tool.paths", f.File)
			}
		}
		if get(in, "tool.family") != kind && kind != "other" {
			t.Errorf("%s: family %v, kind %v", f.File, get(in, "tool.family"), kind)
		}
	}
}

// enrich returns input.ahp for an event, as plain JSON values.
func enrich(t *testing.T, ev *adapters.Event) map[string]any {
	t.Helper()
	event, err := transport.EventOfMap(ev.Object)
	if err != nil {
		t.Fatal(err)
	}
	v := enrichment.Enrich(&event, enrichment.Options{Home: "/home/dev"}, enrichment.All).Object
	var in map[string]any
	if err := json.Unmarshal([]byte(v.String()), &in); err != nil {
		t.Fatal(err)
	}
	return in
}
