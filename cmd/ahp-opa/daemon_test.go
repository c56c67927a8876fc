package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ahp-opa/ahp-opa/daemon"
)

// TestDaemonCommand: the daemon command answers a native payload over its
// socket with the built-in library's deny in the agent's own form, answers
// "no decision" for a harmless call, and stops when its context ends.
func TestDaemonCommand(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	socket := filepath.Join(dir, "d.sock")
	ctx, cancel := context.WithCancel(context.Background())
	cmd := daemonCommand()
	cmd.SetArgs([]string{"--socket", socket, "--idle-timeout", "1m", "--log-level", "error"})
	var stderr bytes.Buffer
	cmd.SetErr(&stderr)
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()

	c := &daemon.Client{Paths: daemon.PathsAt(socket)}
	ask := func(command string) string {
		t.Helper()
		payload := `{"session_id":"s1","cwd":"/repo","hook_event_name":"PreToolUse","tool_name":"Bash",` +
			`"tool_input":{"command":"` + command + `"},"tool_use_id":"t1"}`
		deadline := time.Now().Add(30 * time.Second)
		for {
			ans, err := c.Hook(context.Background(), daemon.Request{Agent: "claude-code", Payload: []byte(payload)})
			if err == nil {
				if ans.Exit != 0 {
					t.Fatalf("exit %d, stderr %q", ans.Exit, ans.Stderr)
				}
				return string(ans.Stdout)
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
	}
	if got := ask("git push --force origin main"); !strings.Contains(got, `"permissionDecision":"deny"`) {
		t.Errorf("force push: %s", got)
	}
	if got := ask("ls -la"); strings.TrimSpace(got) != "{}" {
		t.Errorf("ls: want no decision, got %s", got)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("daemon: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("daemon did not stop on cancel")
	}
}
