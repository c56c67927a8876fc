package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ahp-opa/ahp-opa/internal/adapters"
	"github.com/ahp-opa/ahp-opa/internal/daemon"
	"github.com/ahp-opa/ahp-opa/internal/testkit"
)

// runDaemon runs the daemon command with args on a socket in a private
// directory and returns a function asking it; the daemon stops, and must
// stop cleanly, when the test ends.
func runDaemon(t *testing.T, args ...string) func(daemon.Request) adapters.Answer {
	t.Helper()
	ask, _ := runDaemonLogs(t, args...)
	return ask
}

// runDaemonLogs is runDaemon that also returns the daemon's log.
func runDaemonLogs(t *testing.T, args ...string) (func(daemon.Request) adapters.Answer, *testkit.Buffer) {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	socket := filepath.Join(dir, "d.sock")
	ctx, cancel := context.WithCancel(context.Background())
	cmd := daemonCommand()
	cmd.SetArgs(append([]string{"--socket", socket, "--idle-timeout", "1m", "--log-level", "error"}, args...))
	stderr := new(testkit.Buffer)
	cmd.SetErr(stderr)
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("daemon: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("daemon did not stop on cancel")
		}
	})

	c := &daemon.Client{Paths: daemon.PathsAt(socket)}
	return func(req daemon.Request) adapters.Answer {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			ans, err := c.Hook(context.Background(), req)
			if err == nil {
				return ans
			}
			if time.Now().After(deadline) {
				t.Fatalf("daemon never answered: %v\n%s", err, stderr.String())
			}
			select {
			case err := <-done:
				t.Fatalf("daemon exited before answering: %v\n%s", err, stderr.String())
			case <-time.After(20 * time.Millisecond): // waiting for the listener to appear
			}
		}
	}, stderr
}

// TestDaemonCommand: the daemon command answers a native payload over its
// socket with the built-in library's deny in the agent's own form, answers
// "no decision" for a harmless call, and stops when its context ends.
func TestDaemonCommand(t *testing.T) {
	ask := runDaemon(t)
	native := func(command string) string {
		t.Helper()
		payload := `{"session_id":"s1","cwd":"/repo","hook_event_name":"PreToolUse","tool_name":"Bash",` +
			`"tool_input":{"command":"` + command + `"},"tool_use_id":"t1"}`
		ans := ask(daemon.Request{Agent: "claude-code", Payload: []byte(payload)})
		if ans.Exit != 0 {
			t.Fatalf("exit %d, stderr %q", ans.Exit, ans.Stderr)
		}
		return string(ans.Stdout)
	}
	if got := native("git push --force origin main"); !strings.Contains(got, `"permissionDecision":"deny"`) {
		t.Errorf("force push: %s", got)
	}
	if got := native("ls -la"); strings.TrimSpace(got) != "{}" {
		t.Errorf("ls: want no decision, got %s", got)
	}
}

// TestDaemonAHP: AHP message lines get what the stdio binding writes: a
// response line for a request, a parse error for garbage, nothing for a
// notification.
func TestDaemonAHP(t *testing.T) {
	ask := runDaemon(t)
	intercept := `{"jsonrpc":"2.0","id":"e1","method":"hooks/intercept","params":{"protocolVersion":"draft",` +
		`"event":{"id":"e1","source":"urn:x","type":"tool.before","time":"2026-01-02T03:04:05Z","call":{"id":"c1"},"path":"native",` +
		`"tool":{"name":"Bash","origin":"native","input":{"command":"git push --force origin main"}}},"capabilities":{"effects":["deny"]}}}`
	observe := `{"jsonrpc":"2.0","method":"hooks/observe","params":{"protocolVersion":"draft","event":{"id":"e2","source":"urn:x",` +
		`"type":"session.end","time":"2026-01-02T03:04:05Z","session":{"id":"s1"},"outcome":"completed","reason":"done"}}}`
	for _, tc := range []struct {
		name, line, want string // want: a substring of the one reply line; "": no reply
	}{
		{"deny", intercept + "\n", `"id":"e1","result":{"protocolVersion":"draft","effects":[{"type":"deny"`},
		{"CRLF, no newline", intercept + "\r", `"id":"e1","result"`},
		{"garbage", "{\"id\":\n", `"id":null,"error":{"code":-32700`},
		{"notification", observe + "\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ans := ask(daemon.Request{Agent: daemon.AgentAHP, Payload: []byte(tc.line)})
			if ans.Exit != 0 || ans.Stderr != "" {
				t.Fatalf("exit %d, stderr %q", ans.Exit, ans.Stderr)
			}
			out := string(ans.Stdout)
			if tc.want == "" {
				if out != "" {
					t.Errorf("a notification was answered: %q", out)
				}
				return
			}
			if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") || !json.Valid([]byte(out)) || !strings.Contains(out, tc.want) {
				t.Errorf("reply %q, want one line with %s", out, tc.want)
			}
		})
	}
}

// TestDaemonRetriesAFailedStart: a policy that does not load makes the
// daemon say so (for AHP, with a non-zero exit that sends the client to
// serve); once fixed, the next message is decided without a restart.
func TestDaemonRetriesAFailedStart(t *testing.T) {
	policy := filepath.Join(t.TempDir(), "p.rego")
	if err := os.WriteFile(policy, []byte("package ahp.tool.before.p\n\ndeny contains \"x\" if {"), 0o600); err != nil {
		t.Fatal(err)
	}
	ask := runDaemon(t, "--policy", policy)
	line := []byte(`{"jsonrpc":"2.0","id":1,"method":"hooks/intercept","params":{}}` + "\n")
	ans := ask(daemon.Request{Agent: daemon.AgentAHP, Payload: line})
	if ans.Exit == 0 || !strings.Contains(ans.Stderr, "p.rego failed to load") || len(ans.Stdout) != 0 {
		t.Fatalf("broken policy: exit %d, stdout %q, stderr %q", ans.Exit, ans.Stdout, ans.Stderr)
	}
	if err := os.WriteFile(policy, []byte("package ahp.tool.before.p\n\ndeny contains \"x\" if { false }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ans = ask(daemon.Request{Agent: daemon.AgentAHP, Payload: line})
	if ans.Exit != 0 || !strings.Contains(string(ans.Stdout), `"id":1,"error":{"code":-32001`) {
		t.Errorf("fixed policy: exit %d, stdout %q, stderr %q", ans.Exit, ans.Stdout, ans.Stderr)
	}
}

// TestDaemonFollowsConfig (issue 22, a stale policy): a warm daemon
// follows its --config file as serve does. A rule removed from
// library.disabled_rules denies within the reload latency; a broken edit
// keeps the last good configuration and is reported.
func TestDaemonFollowsConfig(t *testing.T) {
	const rule = "dev.ahp-opa.secrets.ssh-private-key"
	t.Setenv("HOME", "/home/dev")
	cfgPath := filepath.Join(t.TempDir(), "ahp-opa.yaml")
	write := func(doc string) {
		t.Helper()
		tmp := cfgPath + ".tmp"
		if err := os.WriteFile(tmp, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, cfgPath); err != nil { // as an editor saves
			t.Fatal(err)
		}
	}
	write("library:\n  disabled_rules: [" + rule + "]\n")
	ask, logs := runDaemonLogs(t, "--config", cfgPath)
	readKey := func() string {
		t.Helper()
		ans := ask(daemon.Request{Agent: "claude-code", Payload: []byte(hookPayloads["claude-code"])})
		if ans.Exit != 0 {
			t.Fatalf("exit %d, stderr %q", ans.Exit, ans.Stderr)
		}
		return strings.TrimSpace(string(ans.Stdout))
	}
	denied := func(out string) bool { return strings.Contains(out, `"permissionDecision":"deny"`) }
	// awaitLog polls what the daemon reports, up to the reload settle time.
	await := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s; daemon log:\n%s", what, logs)
			}
			time.Sleep(20 * time.Millisecond) // polling the daemon's answers, not waiting out a reload
		}
	}

	if out := readKey(); out != "{}" {
		t.Fatalf("with the rule disabled: %s, want no decision", out)
	}
	write("library:\n  disabled_rules: []\n")
	await("the edit to take effect", func() bool { return denied(readKey()) })

	write("library:\n  disabled_rules: [" + rule + "\n") // unbalanced
	await("the broken edit to be reported", func() bool { return strings.Contains(logs.String(), "configuration reload failed") })
	if out := readKey(); !denied(out) {
		t.Errorf("after a broken edit: %s, want the last good configuration's deny", out)
	}
}

// TestDaemonLeavesOnRestartOnlyEdit: no one restarts a daemon, so an edit
// of a setting it reads only at its start (here hook.fail_open, true to
// false) makes it leave, after answering, rather than keep deciding with
// the old value; the next hook starts one that reads the file as it is.
func TestDaemonLeavesOnRestartOnlyEdit(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "ahp-opa.yaml")
	if err := os.WriteFile(cfg, []byte("watch: false\nhook:\n  fail_open: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	socket := filepath.Join(dir, "d.sock")
	cmd := daemonCommand()
	cmd.SetArgs([]string{"--socket", socket, "--idle-timeout", "1m", "--config", cfg})
	stderr := new(testkit.Buffer)
	cmd.SetErr(stderr)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()

	c := &daemon.Client{Paths: daemon.PathsAt(socket)}
	payload := []byte(`{"session_id":"s1","cwd":"/repo","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := c.Hook(context.Background(), daemon.Request{Agent: "claude-code", Payload: payload}); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("daemon never answered\n%s", stderr)
		}
		select {
		case err := <-done:
			t.Fatalf("daemon exited before answering: %v\n%s", err, stderr)
		case <-time.After(20 * time.Millisecond): // waiting for the listener to appear
		}
	}
	// Renamed over, as editors save.
	tmp := cfg + ".tmp"
	if err := os.WriteFile(tmp, []byte("watch: false\nhook:\n  fail_open: false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, cfg); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("daemon: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the daemon kept running after hook.fail_open changed\n%s", stderr)
	}
	if !strings.Contains(stderr.String(), "leaving for a new daemon") || !strings.Contains(stderr.String(), "hook.fail_open") {
		t.Errorf("the log does not say why the daemon left:\n%s", stderr)
	}
	if _, err := os.Lstat(socket); err == nil {
		t.Error("the socket was left behind")
	}
}
