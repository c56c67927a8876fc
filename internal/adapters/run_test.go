package adapters_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ahp-opa/ahp-opa/internal/adapters"
	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// preToolPayload is a minimal pre-tool payload of each agent, so the
// failure tests need no shared material.
var preToolPayload = map[string]string{
	adapters.ClaudeCode: `{"session_id":"s","cwd":"/r","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t1"}`,
	adapters.Codex:      `{"session_id":"s","cwd":"/r","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t1","turn_id":"u"}`,
	adapters.GeminiCLI:  `{"session_id":"s","cwd":"/r","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"ls"}}`,
	adapters.Cursor:     `{"conversation_id":"s","hook_event_name":"preToolUse","tool_name":"Shell","tool_input":{"command":"ls","cwd":""},"tool_use_id":"t1","cwd":"","workspace_roots":["/r"]}`,
	adapters.Copilot:    `{"sessionId":"s","timestamp":1796205845123,"cwd":"/r","toolName":"bash","toolArgs":"{\"command\":\"ls\"}"}`,
}

// denyForm is each agent's deny answer for reason R, as CONTRACTS.md §7
// gives it.
func denyForm(agent, r string) string {
	switch agent {
	case adapters.ClaudeCode, adapters.Codex:
		return `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":` + q(r) + `}}`
	case adapters.GeminiCLI:
		return `{"decision":"deny","reason":` + q(r) + `}`
	case adapters.Cursor:
		return `{"permission":"deny","user_message":` + q(r) + `,"agent_message":` + q(r) + `}`
	case adapters.Copilot:
		return `{"permissionDecision":"deny","permissionDecisionReason":` + q(r) + `}`
	}
	panic(agent)
}

func q(s string) string { b, _ := json.Marshal(s); return string(b) }

// reasonOf pulls the deny reason out of any agent's deny answer.
func reasonOf(t *testing.T, stdout []byte) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(stdout, &m); err != nil {
		t.Fatalf("stdout %q: %v", stdout, err)
	}
	if h, ok := m["hookSpecificOutput"].(map[string]any); ok {
		m = h
	}
	for _, k := range []string{"permissionDecisionReason", "reason", "user_message"} {
		if s, ok := m[k].(string); ok {
			return s
		}
	}
	t.Fatalf("no reason in %s", stdout)
	return ""
}

type deciderFunc func(context.Context, *adapters.Event) (adapters.Decision, error)

func (f deciderFunc) Decide(ctx context.Context, ev *adapters.Event) (adapters.Decision, error) {
	return f(ctx, ev)
}

var (
	allow = deciderFunc(func(context.Context, *adapters.Event) (adapters.Decision, error) {
		return adapters.Decision{}, nil
	})
	broken = deciderFunc(func(context.Context, *adapters.Event) (adapters.Decision, error) {
		return adapters.Decision{}, errors.New("policy rules/team.rego failed to load: rules/team.rego:3: rego_parse_error: unexpected eof token (run 'ahp-opa test rules/' to see every error)")
	})
	// stuck ignores its context: Run must answer on time anyway.
	stuck = deciderFunc(func(context.Context, *adapters.Event) (adapters.Decision, error) {
		select {}
	})
	panicky = deciderFunc(func(context.Context, *adapters.Event) (adapters.Decision, error) {
		panic("boom")
	})
)

// TestRunFailures: every way of not reaching a decision gives, for every
// agent, its deny form at exit 0 with a reason that says what to do; with
// FailOpen it gives "no decision" and the reason on stderr.
func TestRunFailures(t *testing.T) {
	cases := []struct {
		name    string
		payload func(agent string) string
		dec     adapters.Decider
		timeout time.Duration
		reason  []string // substrings of the reason
	}{
		{"bad JSON", func(string) string { return `{"tool_name":` }, allow, 0, []string{"not valid JSON", "ahp-opa install"}},
		{"empty stdin", func(string) string { return "" }, allow, 0, []string{"stdin was empty"}},
		{"not an object", func(string) string { return `["PreToolUse"]` }, allow, 0, []string{"not a JSON object"}},
		{"two values", func(a string) string { return preToolPayload[a] + "{}" }, allow, 0, []string{"more than one JSON value"}},
		{"not UTF-8", func(string) string { return "{\"a\":\"\xff\"}" }, allow, 0, []string{"UTF-8"}},
		{"policy fails to compile", func(a string) string { return preToolPayload[a] }, broken, 0,
			[]string{"ahp-opa: policy rules/team.rego failed to load", "ahp-opa test"}},
		{"timeout", func(a string) string { return preToolPayload[a] }, stuck, 20 * time.Millisecond,
			[]string{"no decision within 20ms", "--timeout"}},
		{"decider panics", func(a string) string { return preToolPayload[a] }, panicky, 0, []string{"internal error", "please report it"}},
	}
	for _, agent := range adapters.Names {
		for _, c := range cases {
			t.Run(agent+"/"+c.name, func(t *testing.T) {
				payload := []byte(c.payload(agent))
				opts := adapters.Options{Timeout: c.timeout}
				closed := adapters.Run(context.Background(), c.dec, agent, payload, opts)
				if closed.Exit != 0 || closed.Stderr != "" {
					t.Fatalf("fail-closed: exit %d stderr %q, want 0 and none", closed.Exit, closed.Stderr)
				}
				reason := reasonOf(t, closed.Stdout)
				sameStdout(t, closed.Stdout, []byte(denyForm(agent, reason)))
				if strings.Contains(reason, "boom") {
					t.Errorf("reason %q quotes the panic", reason)
				}
				if !strings.HasPrefix(reason, "ahp-opa: ") {
					t.Errorf("reason %q does not say who speaks", reason)
				}
				for _, s := range c.reason {
					if !strings.Contains(reason, s) {
						t.Errorf("reason %q lacks %q", reason, s)
					}
				}

				opts.FailOpen = true
				open := adapters.Run(context.Background(), c.dec, agent, payload, opts)
				sameStdout(t, open.Stdout, []byte(`{}`))
				if open.Exit != 0 || !strings.Contains(open.Stderr, c.reason[0]) || strings.Contains(open.Stderr, "\n") {
					t.Fatalf("fail-open: exit %d stderr %q, want 0 and the reason on one line", open.Exit, open.Stderr)
				}
			})
		}
	}
}

// TestRunDecides: a decision reaches the agent; no objection is "{}" and
// a deny carries the policy's reason, for every agent.
func TestRunDecides(t *testing.T) {
	deny := deciderFunc(func(_ context.Context, ev *adapters.Event) (adapters.Decision, error) {
		if ev.Type != ahp.EventToolBefore || ev.Object["tool"].(map[string]any)["kind"] != "shell" {
			t.Errorf("decider got %s", mustJSON(t, ev.Object))
		}
		return adapters.Decision{Deny: true, Reason: "No ls <here> & now.", Code: "com.example.no-ls"}, nil
	})
	for _, agent := range adapters.Names {
		ans := adapters.Run(context.Background(), deny, agent, []byte(preToolPayload[agent]), adapters.Options{})
		sameStdout(t, ans.Stdout, []byte(denyForm(agent, "No ls <here> & now.")))
		if strings.Contains(string(ans.Stdout), `\u003c`) {
			t.Errorf("%s: reason HTML-escaped: %s", agent, ans.Stdout)
		}
		ans = adapters.Run(context.Background(), allow, agent, []byte(preToolPayload[agent]), adapters.Options{})
		if string(ans.Stdout) != "{}\n" || ans.Exit != 0 || ans.Stderr != "" {
			t.Errorf("%s: no objection answered %+v", agent, ans)
		}
	}
}

// TestRunUnknownAgent: with no agent to speak for, exit 2 and stderr,
// which blocks in the agents that have a fail-closed reading of it.
func TestRunUnknownAgent(t *testing.T) {
	ans := adapters.Run(context.Background(), allow, "claude", []byte(`{}`), adapters.Options{})
	if ans.Exit != 2 || len(ans.Stdout) != 0 || !strings.Contains(ans.Stderr, "claude-code") {
		t.Fatalf("got %+v", ans)
	}
	if _, err := adapters.Refuse("claude", "x"); !errors.Is(err, adapters.ErrUnknownAgent) {
		t.Fatalf("Refuse: %v", err)
	}
	if _, err := adapters.Render("claude", "PreToolUse", adapters.Decision{}); !errors.Is(err, adapters.ErrUnknownAgent) {
		t.Fatalf("Render: %v", err)
	}
}

// TestRenderNeverAllows: no decision, for any hook of any agent, is
// rendered as a grant; observations are never denied.
func TestRenderNeverAllows(t *testing.T) {
	hooks := []string{"PreToolUse", "PostToolUse", "PostToolUseFailure", "BeforeTool", "AfterTool",
		"preToolUse", "postToolUse", "beforeShellExecution", "beforeReadFile", "beforeMCPExecution",
		"SessionStart", "sessionEnd", "Stop", ""}
	for _, agent := range adapters.Names {
		for _, hook := range hooks {
			for _, d := range []adapters.Decision{{}, {Deny: true, Reason: "r"}} {
				ans, err := adapters.Render(agent, hook, d)
				if err != nil {
					t.Fatal(err)
				}
				low := strings.ToLower(string(ans.Stdout))
				if strings.Contains(low, "allow") || strings.Contains(low, "approve") || ans.Exit != 0 {
					t.Errorf("%s %s %+v: %s", agent, hook, d, ans.Stdout)
				}
				observation := strings.Contains(strings.ToLower(hook), "post") || strings.Contains(hook, "After") ||
					strings.Contains(strings.ToLower(hook), "session")
				if observation && string(ans.Stdout) != "{}\n" {
					t.Errorf("%s %s: an observation got %s", agent, hook, ans.Stdout)
				}
			}
		}
	}
}

// TestRenderReasonBounded: a huge reason is cut, on a rune boundary.
func TestRenderReasonBounded(t *testing.T) {
	ans, _ := adapters.Render(adapters.GeminiCLI, "BeforeTool", adapters.Decision{Deny: true, Reason: strings.Repeat("é", 5000)})
	r := reasonOf(t, ans.Stdout)
	if len(r) > adapters.MaxReasonBytes || !strings.HasSuffix(r, "…") {
		t.Fatalf("reason of %d bytes", len(r))
	}
}

// TestReadPayload: the read is bounded.
func TestReadPayload(t *testing.T) {
	f := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(f, make([]byte, adapters.MaxPayloadBytes+1), 0o600); err != nil {
		t.Fatal(err)
	}
	r, _ := os.Open(f)
	defer r.Close()
	if _, err := adapters.ReadPayload(r); !errors.Is(err, adapters.ErrPayload) {
		t.Fatalf("err = %v", err)
	}
}

// TestRunInline: deciding on the caller's goroutine gives the same answers,
// including the timeout of a decider that honours its context and the
// deny for one that panics.
func TestRunInline(t *testing.T) {
	waiting := deciderFunc(func(ctx context.Context, _ *adapters.Event) (adapters.Decision, error) {
		<-ctx.Done()
		return adapters.Decision{}, fmt.Errorf("evaluation cancelled: %w", ctx.Err())
	})
	deny := deciderFunc(func(context.Context, *adapters.Event) (adapters.Decision, error) {
		return adapters.Decision{Deny: true, Reason: "no"}, nil
	})
	for _, c := range []struct {
		name   string
		dec    adapters.Decider
		reason string
	}{
		{"deny", deny, "no"},
		{"timeout", waiting, "no decision within 20ms"},
		{"panic", panicky, "internal error"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ans := adapters.Run(context.Background(), c.dec, adapters.ClaudeCode, []byte(preToolPayload[adapters.ClaudeCode]),
				adapters.Options{Inline: true, Timeout: 20 * time.Millisecond})
			if r := reasonOf(t, ans.Stdout); ans.Exit != 0 || !strings.Contains(r, c.reason) {
				t.Fatalf("exit %d reason %q, want %q", ans.Exit, r, c.reason)
			}
		})
	}
}

// observer is a decider that takes observations with observe; it must
// never be asked to decide one.
type observer struct {
	t       *testing.T
	observe func(*adapters.Event) error
}

func (o observer) Decide(context.Context, *adapters.Event) (adapters.Decision, error) {
	o.t.Error("an observation was sent to the decider")
	return adapters.Decision{}, nil
}

func (o observer) Observe(_ context.Context, ev *adapters.Event) error { return o.observe(ev) }

// TestRunObservationNeverDenies: a post-tool or session payload is answered
// with "no decision" at exit 0 whatever goes wrong with it (a payload that
// names the hook but cannot be mapped, an observer that fails or panics),
// without FailOpen: a deny there undoes nothing, and Gemini CLI would show
// it to the model instead of the tool's result.
func TestRunObservationNeverDenies(t *testing.T) {
	unusable := map[string]string{ // each names a post-tool hook but has no usable tool name
		adapters.ClaudeCode: `{"session_id":"s","hook_event_name":"PostToolUse","tool_input":{},"tool_response":{}}`,
		adapters.Codex:      `{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":"ls","tool_response":{}}`,
		adapters.GeminiCLI:  `{"session_id":"s","hook_event_name":"AfterTool","tool_input":{},"tool_response":{}}`,
		adapters.Cursor:     `{"conversation_id":"s","hook_event_name":"postToolUseFailure","error_message":"x"}`,
		adapters.Copilot:    `{"sessionId":"s","timestamp":1796205845123,"toolName":7,"toolResult":{"resultType":"success"}}`,
	}
	post := map[string]string{
		adapters.ClaudeCode: `{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_response":{"stdout":""},"tool_use_id":"t"}`,
		adapters.Codex:      `{"session_id":"s","hook_event_name":"SessionStart","source":"startup"}`,
		adapters.GeminiCLI:  `{"session_id":"s","hook_event_name":"AfterTool","tool_name":"run_shell_command","tool_input":{"command":"ls"},"tool_response":{"error":null}}`,
		adapters.Cursor:     `{"conversation_id":"s","hook_event_name":"sessionEnd","reason":"completed"}`,
		adapters.Copilot:    `{"sessionId":"s","timestamp":1796205845123,"toolName":"bash","toolArgs":{"command":"ls"},"toolResult":{"resultType":"success"}}`,
	}
	recorded := func(*adapters.Event) error { return nil }
	for _, agent := range adapters.Names {
		t.Run(agent, func(t *testing.T) {
			ans := adapters.Run(context.Background(), observer{t, recorded}, agent, []byte(unusable[agent]), adapters.Options{})
			if string(ans.Stdout) != "{}\n" || ans.Exit != 0 || !strings.Contains(ans.Stderr, "not recorded") ||
				!strings.Contains(ans.Stderr, "unusable hook payload") || strings.Contains(ans.Stderr, "\n") {
				t.Errorf("unusable observation: %+v", ans)
			}
			for name, o := range map[string]func(*adapters.Event) error{
				"recorded": recorded,
				"fails":    func(*adapters.Event) error { return errors.New("audit log full") },
				"panics":   func(*adapters.Event) error { panic("boom") },
			} {
				var seen *adapters.Event
				ans := adapters.Run(context.Background(), observer{t, func(ev *adapters.Event) error { seen = ev; return o(ev) }},
					agent, []byte(post[agent]), adapters.Options{})
				if string(ans.Stdout) != "{}\n" || ans.Exit != 0 || ans.Stderr != "" {
					t.Errorf("observer %s: %+v", name, ans)
				}
				if seen == nil || seen.Type == ahp.EventToolBefore || seen.Type == adapters.TypeNone {
					t.Errorf("observer %s: observed %+v", name, seen)
				}
			}
		})
	}
}
