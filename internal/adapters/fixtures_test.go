package adapters_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ahp-opa/ahp-opa/bundles"
	"github.com/ahp-opa/ahp-opa/engine"
	"github.com/ahp-opa/ahp-opa/internal/adapters"
	"github.com/ahp-opa/ahp-opa/internal/nativehook"
	"github.com/ahp-opa/ahp-opa/internal/testkit"
	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// TestMain prints one line naming the tests that skipped for want of the
// shared fixtures.
func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }

// fixture is one entry of fixtures/INDEX.json.
type fixture struct {
	File     string `json:"file"`
	Agent    string `json:"agent"`
	Event    string `json:"event"`
	Kind     string `json:"kind"`
	ExitCode *int   `json:"exit_code"`
	Expect   string `json:"expect"`
}

func loadIndex(t *testing.T) (dir string, fixtures []fixture) {
	t.Helper()
	dir = filepath.Join(testkit.Adapters(t), "fixtures")
	data, err := os.ReadFile(filepath.Join(dir, "INDEX.json"))
	if err != nil {
		t.Fatal(err)
	}
	var idx struct {
		Fixtures []fixture `json:"fixtures"`
	}
	if err := json.Unmarshal(data, &idx); err != nil {
		t.Fatal(err)
	}
	if len(idx.Fixtures) == 0 {
		t.Fatal("INDEX.json lists no fixtures")
	}
	return dir, idx.Fixtures
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// builtin is a decider backed by the real engine and the built-in library,
// compiled once for the package.
var builtin = sync.OnceValues(func() (*engine.Engine, error) {
	p, err := bundles.Builtin()
	if err != nil {
		return nil, err
	}
	eng := engine.New(engine.Options{Home: "/home/dev", EvalTimeout: 5 * time.Second})
	return eng, eng.Load(context.Background(), p)
})

// recorder remembers what the engine decided, so that the expected answer
// can be built from the fixture's template and the real reason.
type recorder struct {
	adapters.Decider
	mu   sync.Mutex
	last *adapters.Decision
	ev   *adapters.Event
}

func (r *recorder) Decide(ctx context.Context, ev *adapters.Event) (adapters.Decision, error) {
	d, err := r.Decider.Decide(ctx, ev)
	r.mu.Lock()
	r.last, r.ev = &d, ev
	r.mu.Unlock()
	return d, err
}

func engineDecider(t *testing.T) *recorder {
	t.Helper()
	eng, err := builtin()
	if err != nil {
		t.Fatal(err)
	}
	return &recorder{Decider: nativehook.Decider{Interceptor: eng}}
}

// preToolExpect is what the built-in library decides for each pre-tool
// fixture: the deny code, or "" for no objection.
var preToolExpect = map[string]string{
	"claude-code/pre-tool-shell.json":           "dev.ahp-opa.git.force-push",
	"claude-code/pre-tool-read.json":            "dev.ahp-opa.secrets.env-file",
	"claude-code/pre-tool-write.json":           "",
	"claude-code/pre-tool-edit.json":            "",
	"claude-code/pre-tool-fetch.json":           "",
	"claude-code/pre-tool-mcp.json":             "",
	"claude-code/pre-tool-subagent-shell.json":  "",
	"codex/pre-tool-shell.json":                 "dev.ahp-opa.git.force-push",
	"codex/pre-tool-write.json":                 "",
	"codex/pre-tool-mcp.json":                   "",
	"codex/pre-tool-subagent-shell.json":        "",
	"gemini-cli/pre-tool-shell.json":            "dev.ahp-opa.git.force-push",
	"gemini-cli/pre-tool-read.json":             "dev.ahp-opa.secrets.env-file",
	"gemini-cli/pre-tool-write.json":            "",
	"gemini-cli/pre-tool-edit.json":             "",
	"gemini-cli/pre-tool-fetch.json":            "",
	"gemini-cli/pre-tool-mcp.json":              "",
	"cursor/pre-tool-shell.json":                "dev.ahp-opa.git.force-push",
	"cursor/before-shell-execution.json":        "dev.ahp-opa.git.force-push",
	"cursor/pre-tool-read.json":                 "dev.ahp-opa.secrets.env-file",
	"cursor/before-read-file.json":              "dev.ahp-opa.secrets.env-file",
	"cursor/pre-tool-write.json":                "",
	"cursor/pre-tool-mcp.json":                  "",
	"cursor/before-mcp-execution.json":          "",
	"copilot/pre-tool-shell.json":               "dev.ahp-opa.git.force-push",
	"copilot/pre-tool-shell-vscode-format.json": "dev.ahp-opa.git.force-push",
	"copilot/pre-tool-read.json":                "dev.ahp-opa.secrets.env-file",
	"copilot/pre-tool-write.json":               "",
	"copilot/pre-tool-fetch.json":               "",
	"copilot/pre-tool-mcp.json":                 "",
	"captured/claude-code.PreToolUse.json":      "dev.ahp-opa.secrets.ssh-private-key",
	"captured/codex.PreToolUse.json":            "dev.ahp-opa.secrets.ssh-private-key",
	"captured/gemini.BeforeTool.json":           "dev.ahp-opa.secrets.ssh-private-key",
	"captured/copilot.preToolUse.json":          "dev.ahp-opa.secrets.ssh-private-key",
	"captured/copilot.PreToolUse.json":          "dev.ahp-opa.secrets.ssh-private-key",
}

// eventTypes maps the native hook names of the fixtures to AHP types.
var eventTypes = map[string]string{
	"PreToolUse": ahp.EventToolBefore, "BeforeTool": ahp.EventToolBefore,
	"preToolUse": ahp.EventToolBefore, "beforeShellExecution": ahp.EventToolBefore,
	"beforeReadFile": ahp.EventToolBefore, "beforeMCPExecution": ahp.EventToolBefore,
	"PostToolUse": ahp.EventToolAfter, "PostToolUseFailure": ahp.EventToolAfter,
	"AfterTool": ahp.EventToolAfter, "postToolUse": ahp.EventToolAfter,
	"postToolUseFailure": ahp.EventToolAfter, "afterShellExecution": ahp.EventToolAfter,
	"SessionStart": ahp.EventSessionStart, "sessionStart": ahp.EventSessionStart,
	"SessionEnd": ahp.EventSessionEnd, "sessionEnd": ahp.EventSessionEnd,
}

// expectedAnswer reads agent's expected-output fixture (deny or
// no-objection) with REASON replaced by reason.
func expectedAnswer(t *testing.T, dir, agent, which, reason string) (stdout []byte, exit int) {
	t.Helper()
	_, fixtures := loadIndex(t)
	name := agent + "/" + which + ".expected.json"
	for _, f := range fixtures {
		if f.File != name {
			continue
		}
		if f.ExitCode == nil {
			t.Fatalf("%s has no exit_code in INDEX.json", name)
		}
		raw := read(t, filepath.Join(dir, name))
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		return mustJSON(t, substitute(v, reason)), *f.ExitCode
	}
	t.Fatalf("INDEX.json has no %s", name)
	return nil, 0
}

// substitute replaces every string "REASON" in v.
func substitute(v any, reason string) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = substitute(e, reason)
		}
	case []any:
		for i, e := range v {
			v[i] = substitute(e, reason)
		}
	case string:
		if v == "REASON" {
			return reason
		}
	}
	return v
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sameStdout compares an answer's stdout with an expected document: one
// JSON object on one line, nothing else, equal in value.
func sameStdout(t *testing.T, got, want []byte) {
	t.Helper()
	if !bytes.HasPrefix(bytes.TrimSpace(got), []byte("{")) {
		t.Fatalf("stdout is not a JSON object: %q", got)
	}
	if bytes.Count(bytes.TrimRight(got, "\n"), []byte("\n")) != 0 {
		t.Fatalf("stdout spans several lines: %q", got)
	}
	testkit.SameJSON(t, got, want)
}

// TestFixtures: every input fixture maps to the AHP type its hook names;
// every pre-tool one, run through Run with the real engine and the built-in
// library, gets exactly the agent's expected deny (with the engine's
// reason) or its expected no-objection answer, and its exit code.
func TestFixtures(t *testing.T) {
	dir, fixtures := loadIndex(t)
	dec := engineDecider(t)
	seen := map[string]bool{}
	for _, f := range fixtures {
		if f.Kind != "input" {
			continue
		}
		t.Run(f.File, func(t *testing.T) {
			payload := read(t, filepath.Join(dir, f.File))
			want, ok := eventTypes[f.Event]
			if !ok {
				t.Fatalf("no expected AHP type for native event %s", f.Event)
			}
			ev, err := adapters.Parse(f.Agent, payload, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if ev.Type != want || ev.Hook != f.Event {
				t.Fatalf("mapped to %q (hook %q), want %q (hook %q)", ev.Type, ev.Hook, want, f.Event)
			}
			if ev.Type != ahp.EventToolBefore {
				ans := adapters.Run(context.Background(), failing{t}, f.Agent, payload, adapters.Options{})
				stdout, exit := expectedAnswer(t, dir, f.Agent, "no-objection", "")
				sameStdout(t, ans.Stdout, stdout)
				if ans.Exit != exit || ans.Stderr != "" {
					t.Fatalf("exit %d stderr %q, want exit %d and no stderr", ans.Exit, ans.Stderr, exit)
				}
				return
			}
			code, ok := preToolExpect[f.File]
			if !ok {
				t.Fatalf("%s: add the built-in library's decision to preToolExpect", f.File)
			}
			seen[f.File] = true
			dec.last = nil
			ans := adapters.Run(context.Background(), dec, f.Agent, payload, adapters.Options{})
			if dec.last == nil {
				t.Fatal("the decider was not asked")
			}
			if dec.last.Code != code {
				t.Fatalf("decided code %q (reason %q), want %q", dec.last.Code, dec.last.Reason, code)
			}
			which := "no-objection"
			if code != "" {
				which = "deny"
				if dec.last.Reason == "" {
					t.Fatal("deny without a reason")
				}
			}
			stdout, exit := expectedAnswer(t, dir, f.Agent, which, dec.last.Reason)
			if f.Event == "beforeReadFile" {
				// Cursor's beforeReadFile answer has no agent_message (INDEX note).
				var m map[string]any
				json.Unmarshal(stdout, &m)
				delete(m, "agent_message")
				stdout = mustJSON(t, m)
			}
			sameStdout(t, ans.Stdout, stdout)
			if ans.Exit != exit || ans.Stderr != "" {
				t.Fatalf("exit %d stderr %q, want exit %d and no stderr", ans.Exit, ans.Stderr, exit)
			}
		})
	}
	for file := range preToolExpect {
		if !seen[file] && !t.Failed() {
			t.Errorf("preToolExpect names %s, which INDEX.json does not list as a pre-tool input", file)
		}
	}
}

// failing is a decider that must not be called: observations are never
// decided.
type failing struct{ t *testing.T }

func (f failing) Decide(context.Context, *adapters.Event) (adapters.Decision, error) {
	f.t.Error("an observation was sent to the decider")
	return adapters.Decision{}, nil
}

// TestCapturedPayloads: what the real agents sent parses, keeps the whole
// payload under native, and lifts the shell command where the engine
// reads it.
func TestCapturedPayloads(t *testing.T) {
	dir, fixtures := loadIndex(t)
	n := 0
	for _, f := range fixtures {
		if !strings.HasPrefix(f.File, "captured/") {
			continue
		}
		n++
		t.Run(f.File, func(t *testing.T) {
			payload := read(t, filepath.Join(dir, f.File))
			ev, err := adapters.Parse(f.Agent, payload, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			var native any
			json.Unmarshal(payload, &native)
			if string(mustJSON(t, ev.Object["native"])) != string(mustJSON(t, native)) {
				t.Fatalf("native is not the payload: %s", mustJSON(t, ev.Object["native"]))
			}
			tool := ev.Object["tool"].(map[string]any)
			if tool["kind"] != "shell" || tool["input"].(map[string]any)["command"] != "cat ~/.ssh/id_rsa" {
				t.Fatalf("tool = %s", mustJSON(t, tool))
			}
			if ev.Object["source"] != adapters.SourcePrefix+f.Agent {
				t.Fatalf("source = %v", ev.Object["source"])
			}
		})
	}
	if n == 0 {
		t.Fatal("INDEX.json lists no captured payloads")
	}
}
