package daemon

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ahp-opa/ahp-opa/internal/adapters"
)

func denyFor(agent, reason string) (adapters.Answer, error) {
	if agent == "unknown" {
		return adapters.Answer{}, errors.New("unknown agent")
	}
	return adapters.Answer{Stdout: []byte("deny:" + reason)}, nil
}

func TestChain(t *testing.T) {
	inProcessOK := func(_ context.Context, agent string, p []byte) (adapters.Answer, error) {
		return adapters.Answer{Stdout: append([]byte("inproc:"), p...)}, nil
	}
	inProcessBroken := func(context.Context, string, []byte) (adapters.Answer, error) {
		return adapters.Answer{}, errors.New("policy rules/x.rego failed to compile")
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	up := testPaths(t)
	fakeDaemon(t, ctx, up, "v1")
	down := &Client{Paths: testPaths(t), Version: "v1"} // nothing listens, no starter

	for _, tc := range []struct {
		name      string
		daemon    *Client
		inProcess func(context.Context, string, []byte) (adapters.Answer, error)
		failOpen  bool
		agent     string
		stdout    string // prefix
		stderr    string // substring
		exit      int
	}{
		{"daemon answers", &Client{Paths: up, Version: "v1"}, inProcessBroken, false, "codex", "d:codex:p", "note", 3},
		{"daemon down, in-process answers", down, inProcessOK, false, "codex", "inproc:p", "deciding in-process", 0},
		{"no daemon at all", nil, inProcessOK, false, "codex", "inproc:p", "", 0},
		{"both fail: deny", down, inProcessBroken, false, "cursor", "deny:ahp-opa: could not decide (daemon: ", "", 0},
		{"both fail, fail-open", down, inProcessBroken, true, "cursor", "{}", "--fail-open", 0},
		{"fail-open reaches the daemon", &Client{Paths: up, Version: "v1"}, inProcessBroken, true, "codex", "d(open):codex:p", "note", 3},
		{"both fail, unknown agent", down, inProcessBroken, false, "unknown", "", "could not decide", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Chain{Daemon: tc.daemon, InProcess: tc.inProcess, Refuse: denyFor, FailOpen: tc.failOpen,
				Noted: filepath.Join(t.TempDir(), "noted")}
			ans := c.Answer(ctx, tc.agent, []byte("p"))
			if !strings.HasPrefix(string(ans.Stdout), tc.stdout) || !strings.Contains(ans.Stderr, tc.stderr) || ans.Exit != tc.exit {
				t.Errorf("answer %q / %q / %d", ans.Stdout, ans.Stderr, ans.Exit)
			}
			if strings.HasPrefix(string(ans.Stdout), "deny:") && !strings.Contains(string(ans.Stdout), "failed to compile") {
				t.Errorf("deny reason lost the in-process error: %q", ans.Stdout)
			}
		})
	}
}

func TestChainNotesFallbackOnce(t *testing.T) {
	var calls atomic.Int32
	c := &Chain{
		Daemon: &Client{Paths: testPaths(t), Version: "v1"},
		InProcess: func(context.Context, string, []byte) (adapters.Answer, error) {
			calls.Add(1)
			return adapters.Answer{Stdout: []byte("{}")}, nil
		},
		Refuse: denyFor,
		Noted:  filepath.Join(t.TempDir(), "noted"),
	}
	first := c.Answer(t.Context(), "claude-code", nil)
	second := c.Answer(t.Context(), "claude-code", nil)
	if !strings.Contains(first.Stderr, "in-process") || second.Stderr != "" || calls.Load() != 2 {
		t.Errorf("stderr %q then %q after %d in-process runs", first.Stderr, second.Stderr, calls.Load())
	}
}

// TestChainNotesEachOutage: once the daemon answers again, the next time
// it cannot be used is told again.
func TestChainNotesEachOutage(t *testing.T) {
	up := testPaths(t)
	fakeDaemonFunc(t, t.Context(), up, "v1", func(Request) adapters.Answer { return adapters.Answer{Stdout: []byte("{}")} })
	down := &Client{Paths: testPaths(t), Version: "v1"}
	c := &Chain{
		InProcess: func(context.Context, string, []byte) (adapters.Answer, error) {
			return adapters.Answer{Stdout: []byte("{}")}, nil
		},
		Refuse: denyFor,
		Noted:  filepath.Join(t.TempDir(), "noted"),
	}
	for i, step := range []struct {
		daemon *Client
		noted  bool
	}{
		{down, true},
		{down, false},
		{&Client{Paths: up, Version: "v1"}, false},
		{down, true},
	} {
		c.Daemon = step.daemon
		ans := c.Answer(t.Context(), "claude-code", nil)
		if got := strings.Contains(ans.Stderr, "unavailable"); got != step.noted {
			t.Errorf("call %d: noted = %v, want %v (%q)", i, got, step.noted, ans.Stderr)
		}
	}
}

func TestExecHook(t *testing.T) {
	ok := ExecHook("/bin/sh", []string{"-c", `printf '%s|' "$1"; cat`, "sh"})
	ans, err := ok(t.Context(), "gemini-cli", []byte(`{"a":1}`))
	if err != nil || string(ans.Stdout) != `gemini-cli|{"a":1}` {
		t.Errorf("%q, %v", ans.Stdout, err)
	}
	broken := ExecHook("/bin/sh", []string{"-c", `echo 'policy failed to compile' >&2; exit 1`, "sh"})
	if _, err := broken(t.Context(), "codex", nil); err == nil || !strings.Contains(err.Error(), "failed to compile") {
		t.Errorf("broken in-process hook: %v", err)
	}
	missing := ExecHook(filepath.Join(t.TempDir(), "ahp-opa"), nil)
	if _, err := missing(t.Context(), "codex", nil); err == nil {
		t.Error("a missing binary answered")
	}
}

func TestReadPayloadBounded(t *testing.T) {
	if _, err := ReadPayload(strings.NewReader(strings.Repeat("x", MaxPayloadBytes+1))); err == nil {
		t.Error("oversized payload accepted")
	}
	if b, err := ReadPayload(strings.NewReader("{}")); err != nil || string(b) != "{}" {
		t.Errorf("%q, %v", b, err)
	}
}

// TestChainNotesOnlyAnOutage: a user who chose no daemon (--no-daemon) is
// not told on every call that the daemon is unavailable; a daemon that
// cannot be used is reported, once per outage.
func TestChainNotesOnlyAnOutage(t *testing.T) {
	inProcess := func(_ context.Context, _ string, p []byte) (adapters.Answer, error) {
		return adapters.Answer{Stdout: append([]byte("inproc:"), p...), Stderr: "policy warning"}, nil
	}
	for _, tc := range []struct {
		name        string
		unavailable string
		noted       bool
		stderr      []string // of two calls in a row
	}{
		{"--no-daemon", "", false, []string{"policy warning", "policy warning"}},
		{"--no-daemon with a marker", "", true, []string{"policy warning", "policy warning"}},
		{"runtime directory refused", "daemon: unsafe runtime directory: /r has mode 0755, want 0700", false, []string{
			"policy warning\nahp-opa: the decision daemon is unavailable, deciding in-process (slower): daemon: unsafe runtime directory: /r has mode 0755, want 0700",
			"policy warning\nahp-opa: the decision daemon is unavailable, deciding in-process (slower): daemon: unsafe runtime directory: /r has mode 0755, want 0700",
		}},
		{"runtime directory refused, with a marker", "unsafe", true, []string{
			"policy warning\nahp-opa: the decision daemon is unavailable, deciding in-process (slower): daemon: unsafe",
			"policy warning",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Chain{InProcess: inProcess, Refuse: denyFor, Unavailable: tc.unavailable}
			if tc.noted {
				c.Noted = filepath.Join(t.TempDir(), "noted")
			}
			for i, want := range tc.stderr {
				ans := c.Answer(t.Context(), "codex", []byte("p"))
				if string(ans.Stdout) != "inproc:p" || ans.Stderr != want || ans.Exit != 0 {
					t.Errorf("call %d: %q / %q / %d, want stderr %q", i+1, ans.Stdout, ans.Stderr, ans.Exit, want)
				}
			}
		})
	}
}
