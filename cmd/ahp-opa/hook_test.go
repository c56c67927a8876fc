package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-opa/ahp-opa/internal/adapters"
)

// hookPayloads is a pre-tool payload per agent that reads a private key.
var hookPayloads = map[string]string{
	"claude-code": `{"session_id":"s","cwd":"/home/dev/repo","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"cat ~/.ssh/id_rsa"},"tool_use_id":"t1"}`,
	"codex":       `{"session_id":"s","cwd":"/home/dev/repo","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"cat ~/.ssh/id_rsa"},"tool_use_id":"t1"}`,
	"gemini-cli":  `{"session_id":"s","cwd":"/home/dev/repo","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"cat ~/.ssh/id_rsa"}}`,
	"cursor":      `{"conversation_id":"s","hook_event_name":"beforeShellExecution","command":"cat ~/.ssh/id_rsa","cwd":"/home/dev/repo","workspace_roots":["/home/dev/repo"]}`,
	"copilot":     `{"sessionId":"s","timestamp":1796229886487,"cwd":"/home/dev/repo","toolName":"bash","toolArgs":{"command":"cat ~/.ssh/id_rsa"}}`,
}

// runHookCommand runs `ahp-opa hook ARGS` with stdin and returns stdout,
// stderr and the exit status.
func runHookCommand(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	t.Setenv("HOME", "/home/dev")
	cmd := hookCommand()
	var out, errOut bytes.Buffer
	cmd.SetArgs(args)
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err := cmd.Execute()
	var exit exitError
	switch {
	case err == nil:
		return out.String(), errOut.String(), 0
	case errors.As(err, &exit):
		return out.String(), errOut.String(), exit.code
	}
	t.Fatalf("hook: %v", err)
	return "", "", 0
}

// answerReason returns the deny reason of any agent's answer, "" for {}.
func answerReason(t *testing.T, stdout string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(stdout), &m); err != nil {
		t.Fatalf("stdout %q is not one JSON object: %v", stdout, err)
	}
	if h, ok := m["hookSpecificOutput"].(map[string]any); ok {
		m = h
	}
	for _, k := range []string{"permissionDecisionReason", "reason", "user_message"} {
		if s, ok := m[k].(string); ok {
			return s
		}
	}
	if len(m) != 0 {
		t.Fatalf("answer %s is neither a deny nor {}", stdout)
	}
	return ""
}

// TestHookCommand: the command decides with the built-in library, and a
// policy that does not compile denies with a reason naming the file and
// the command that shows the errors, or passes with --fail-open.
func TestHookCommand(t *testing.T) {
	broken := writeFiles(t, map[string]string{"rules/team.rego": "package ahp.tool.before.team\n\ndeny contains \"x\" if {\n"})
	team := filepath.Join(broken, "rules", "team.rego")
	for _, agent := range adapters.Names {
		t.Run(agent, func(t *testing.T) {
			out, errOut, exit := runHookCommand(t, hookPayloads[agent], agent)
			if exit != 0 || !strings.Contains(answerReason(t, out), "private SSH key") {
				t.Fatalf("built-in: exit %d stdout %q stderr %q", exit, out, errOut)
			}

			out, _, exit = runHookCommand(t, hookPayloads[agent], agent, "--policy", team)
			reason := answerReason(t, out)
			for _, want := range []string{"ahp-opa: policy " + team + " failed to load", "team.rego:", "run 'ahp-opa test " + team + "'"} {
				if !strings.Contains(reason, want) {
					t.Errorf("reason %q lacks %q", reason, want)
				}
			}
			if exit != 0 {
				t.Errorf("exit %d", exit)
			}

			out, errOut, exit = runHookCommand(t, hookPayloads[agent], agent, "--policy", team, "--fail-open")
			if exit != 0 || answerReason(t, out) != "" || !strings.Contains(errOut, "failed to load") {
				t.Fatalf("fail-open: exit %d stdout %q stderr %q", exit, out, errOut)
			}
		})
	}
}

// TestHookCommandEarlyFailures: a bad flag, a bad configuration file and an
// unknown agent still answer in a way the agent reads as a block.
func TestHookCommandEarlyFailures(t *testing.T) {
	old := os.Args
	t.Cleanup(func() { os.Args = old })
	os.Args = []string{"ahp-opa", "hook", "gemini-cli", "--polcy", "x"}
	out, _, exit := runHookCommand(t, hookPayloads["gemini-cli"], "gemini-cli", "--polcy", "x")
	if exit != 0 || !strings.Contains(answerReason(t, out), "unknown flag: --polcy") {
		t.Errorf("bad flag: exit %d stdout %q", exit, out)
	}

	cfg := writeFiles(t, map[string]string{"c.yaml": "hook:\n  fail_opn: true\n"})
	out, _, exit = runHookCommand(t, hookPayloads["cursor"], "cursor", "--config", filepath.Join(cfg, "c.yaml"))
	if exit != 0 || !strings.Contains(answerReason(t, out), "fail_opn") {
		t.Errorf("bad config: exit %d stdout %q", exit, out)
	}

	cfg = writeFiles(t, map[string]string{"c.yaml": "hook:\n  fail_open: true\n", "bad.rego": "package x {"})
	out, errOut, _ := runHookCommand(t, hookPayloads["codex"], "codex", "--config", filepath.Join(cfg, "c.yaml"), "--policy", filepath.Join(cfg, "bad.rego"))
	if answerReason(t, out) != "" || errOut == "" {
		t.Errorf("hook.fail_open: stdout %q stderr %q", out, errOut)
	}

	out, errOut, exit = runHookCommand(t, hookPayloads["codex"], "claude")
	if exit != 2 || out != "" || !strings.Contains(errOut, "claude-code") {
		t.Errorf("unknown agent: exit %d stdout %q stderr %q", exit, out, errOut)
	}
}

// TestHookObservationNeedsNoPolicy: an observation is answered without
// loading the policy, so even a broken one does not block it.
func TestHookObservationNeedsNoPolicy(t *testing.T) {
	dir := writeFiles(t, map[string]string{"bad.rego": "package x {"})
	post := `{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_response":{"stdout":""},"tool_use_id":"t"}`
	out, errOut, exit := runHookCommand(t, post, "claude-code", "--policy", filepath.Join(dir, "bad.rego"))
	if exit != 0 || out != "{}\n" || errOut != "" {
		t.Fatalf("exit %d stdout %q stderr %q", exit, out, errOut)
	}
}

// TestAgentsExample drives examples/agents through the hook command with
// real payload shapes: the same curl call is denied for Codex and left to
// Claude Code, and a write outside the workspace only stops Claude Code.
func TestAgentsExample(t *testing.T) {
	policy := filepath.Join("..", "..", "examples", "agents")
	curlCodex := `{"session_id":"s","turn_id":"t","cwd":"/repo","hook_event_name":"PreToolUse","model":"m","tool_name":"Bash","tool_use_id":"u","tool_input":{"command":"curl -s https://example.com"}}`
	curlClaude := `{"session_id":"s","cwd":"/repo","hook_event_name":"PreToolUse","tool_name":"Bash","tool_use_id":"u","tool_input":{"command":"curl -s https://example.com"}}`
	writeClaude := `{"session_id":"s","cwd":"/repo","hook_event_name":"PreToolUse","tool_name":"Write","tool_use_id":"u","tool_input":{"file_path":"/etc/motd","content":"hi"}}`
	writeCodex := `{"session_id":"s","turn_id":"t","cwd":"/repo","hook_event_name":"PreToolUse","model":"m","tool_name":"Write","tool_use_id":"u","tool_input":{"file_path":"/etc/motd","content":"hi"}}`
	for _, tc := range []struct {
		agent, payload, want string // want: a reason fragment, "" for no objection
	}{
		{"codex", curlCodex, "may not reach the network (curl)"},
		{"claude-code", curlClaude, ""},
		{"claude-code", writeClaude, "/etc/motd is outside it"},
		{"codex", writeCodex, ""},
	} {
		out, errOut, exit := runHookCommand(t, tc.payload, tc.agent, "--policy", policy)
		got := answerReason(t, out)
		if exit != 0 || (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s %.60s: exit %d reason %q (want %q) stderr %q", tc.agent, tc.payload, exit, got, tc.want, errOut)
		}
	}
}
