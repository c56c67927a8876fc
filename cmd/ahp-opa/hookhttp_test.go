package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ahp-opa/ahp-opa/engine"
	"github.com/ahp-opa/ahp-opa/internal/adapters"
	"github.com/ahp-opa/ahp-opa/internal/audit"
	"github.com/ahp-opa/ahp-opa/internal/config"
	"github.com/ahp-opa/ahp-opa/internal/daemon"
	"github.com/ahp-opa/ahp-opa/internal/nativehook"
	"github.com/ahp-opa/ahp-opa/internal/service"
	"github.com/ahp-opa/ahp-opa/internal/testkit"
	"github.com/ahp-opa/ahp-opa/transport"
	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// servedHooks wires the service (built-in library, an auditor writing to
// auditPath, the metrics) to a listening HTTP binding with native hooks,
// the way serve does. It returns the base URL, the engine and the auditor.
func servedHooks(t *testing.T, token, auditPath string) (string, *engine.Engine, *audit.Auditor) {
	t.Helper()
	t.Setenv("HOME", "/home/dev")
	log, _ := testLogger()
	ctx, cancel := context.WithCancel(context.Background())
	scfg := config.Default()
	scfg.Audit.File.Path = auditPath
	svc, err := service.New(ctx, scfg, service.Options{Logger: log, Metrics: true, AuditLog: true})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.DefaultHTTP()
	cfg.HTTP = "127.0.0.1:0"
	b, err := prepareHTTP(cfg, func(k string) string { return map[string]string{config.DefaultTokenEnv: token}[k] }, log)
	if err != nil {
		t.Fatal(err)
	}
	h := b.binding(svc.Server, svc.Ready, svc.Metrics)
	h.Mounts = map[string]transport.Mount{nativehook.PathPrefix: &nativehook.Handler{Options: adapters.Options{Logger: log, Inline: true}}}
	done := make(chan error, 1)
	go func() { done <- serveBindings(ctx, log, nil, b, h) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serveBindings: %v", err)
		}
		svc.Close()
	})
	return "http://" + b.ln.Addr().String(), svc.Engine(), svc.Audit
}

// hookFixture is one entry of the adapters' fixtures/INDEX.json.
type hookFixture struct {
	File  string `json:"file"`
	Agent string `json:"agent"`
	Event string `json:"event"`
	Kind  string `json:"kind"`
}

func hookFixtures(t *testing.T) (string, []hookFixture) {
	t.Helper()
	dir := filepath.Join(testkit.Adapters(t), "fixtures")
	data, err := os.ReadFile(filepath.Join(dir, "INDEX.json"))
	if err != nil {
		t.Fatal(err)
	}
	var idx struct{ Fixtures []hookFixture }
	if err := json.Unmarshal(data, &idx); err != nil {
		t.Fatal(err)
	}
	return dir, idx.Fixtures
}

// expectedHookAnswer is agent's expected-output fixture (deny or
// no-objection) with REASON replaced by reason, as canonical JSON.
func expectedHookAnswer(t *testing.T, dir, agent, which, reason string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, agent, which+".expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	raw = bytes.ReplaceAll(raw, []byte(`"REASON"`), mustMarshal(t, reason))
	return canonicalJSON(t, raw)
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func canonicalJSON(t *testing.T, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not JSON: %q", b)
	}
	return string(mustMarshal(t, v))
}

// deciding records the last decision of the decider it wraps.
type deciding struct {
	adapters.Decider
	mu   sync.Mutex
	last *adapters.Decision
}

func (d *deciding) Decide(ctx context.Context, ev *adapters.Event) (adapters.Decision, error) {
	dec, err := d.Decider.Decide(ctx, ev)
	d.mu.Lock()
	d.last = &dec
	d.mu.Unlock()
	return dec, err
}

// TestHTTPHookFixtures: every payload fixture of an agent with an HTTP
// hook, posted to /hooks/AGENT of a served binding, gets byte for byte
// what 'ahp-opa hook AGENT' prints for it, which is the agent's expected
// deny (with the engine's reason) or no-objection answer; each decision and
// observation is in the audit log.
func TestHTTPHookFixtures(t *testing.T) {
	dir, fixtures := hookFixtures(t)
	auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
	url, eng, aud := servedHooks(t, secretToken, auditPath)
	direct := &deciding{Decider: nativehook.Decider{Interceptor: eng}}
	want := map[string]int{} // "kind event_type source" -> records
	n := 0
	for _, f := range fixtures {
		if f.Kind != "input" || !adapters.HasHTTPHook(f.Agent) {
			continue
		}
		n++
		t.Run(f.File, func(t *testing.T) {
			payload, err := os.ReadFile(filepath.Join(dir, f.File))
			if err != nil {
				t.Fatal(err)
			}
			direct.last = nil
			cmdAns := adapters.Run(context.Background(), direct, f.Agent, payload, adapters.Options{})
			ev, err := adapters.Parse(f.Agent, payload, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			which, reason := "no-objection", ""
			if direct.last != nil && direct.last.Deny {
				which, reason = "deny", direct.last.Reason
			}
			status, body := call(t, "POST", url+"/hooks/"+f.Agent, secretToken, string(payload))
			if status != http.StatusOK {
				t.Fatalf("status %d: %s", status, body)
			}
			if body != string(cmdAns.Stdout) {
				t.Errorf("HTTP body %q differs from the hook command's stdout %q", body, cmdAns.Stdout)
			}
			if got, exp := canonicalJSON(t, []byte(body)), expectedHookAnswer(t, dir, f.Agent, which, reason); got != exp {
				t.Errorf("body\n got  %s\n want %s", got, exp)
			}
			kind := audit.KindObservation
			if ev.Type == ahp.EventToolBefore {
				kind = audit.KindDecision
			}
			want[kind+" "+ev.Type+" "+adapters.SourcePrefix+f.Agent]++
		})
	}
	if n == 0 {
		t.Fatal("INDEX.json lists no payload of an agent with an HTTP hook")
	}
	if err := aud.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := auditCounts(t, auditPath); !sameCounts(got, want) {
		t.Errorf("audit records %v, want %v", got, want)
	}

	if status, _ := call(t, "POST", url+"/hooks/claude-code", "wrong-token-0123456789abcdef", hookPayloads["claude-code"]); status != http.StatusUnauthorized {
		t.Errorf("wrong token: status %d", status)
	}
	if status, body := call(t, "POST", url+"/hooks/gemini-cli", secretToken, hookPayloads["gemini-cli"]); status != http.StatusNotFound ||
		!strings.Contains(body, "/hooks/claude-code, /hooks/copilot") || !strings.Contains(body, "ahp-opa hook AGENT") {
		t.Errorf("gemini-cli: status %d body %q", status, body)
	}
}

// auditCounts counts the audit log's records by kind, event type and
// source.
func auditCounts(t *testing.T, path string) map[string]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r audit.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("audit line %q: %v", sc.Bytes(), err)
		}
		got[r.Kind+" "+r.EventType+" "+r.Source]++
	}
	return got
}

func sameCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// hookEvents is a Claude Code session: start, a denied call, a call that
// ran, end.
var hookEvents = []string{
	`{"session_id":"s9","cwd":"/home/dev/repo","hook_event_name":"SessionStart","source":"startup"}`,
	`{"session_id":"s9","cwd":"/home/dev/repo","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"cat ~/.ssh/id_rsa"},"tool_use_id":"t1"}`,
	`{"session_id":"s9","cwd":"/home/dev/repo","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_response":{"stdout":"a"},"tool_use_id":"t2"}`,
	`{"session_id":"s9","cwd":"/home/dev/repo","hook_event_name":"SessionEnd","reason":"other"}`,
}

// hookEventsAudit is what the audit log holds after hookEvents.
var hookEventsAudit = map[string]int{
	"observation session.start urn:ahp-opa:agent:claude-code": 1,
	"decision tool.before urn:ahp-opa:agent:claude-code":      1,
	"observation tool.after urn:ahp-opa:agent:claude-code":    1,
	"observation session.end urn:ahp-opa:agent:claude-code":   1,
}

// TestHookCommandAudits: 'ahp-opa hook' writes its decisions and the
// agent's post-tool and session events to the configured audit log, one
// process per event as the agent runs it.
func TestHookCommandAudits(t *testing.T) {
	dir := t.TempDir()
	auditPath := filepath.Join(dir, "audit.jsonl")
	cfg := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(cfg, []byte("audit:\n  file:\n    path: "+auditPath+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, payload := range hookEvents {
		if out, errOut, exit := runHookCommand(t, payload, "claude-code", "--config", cfg); exit != 0 || errOut != "" {
			t.Fatalf("exit %d stdout %q stderr %q", exit, out, errOut)
		}
	}
	if got := auditCounts(t, auditPath); !sameCounts(got, hookEventsAudit) {
		t.Errorf("audit records %v, want %v", got, hookEventsAudit)
	}

	// Standard output carries the answer: an audit log there is refused,
	// visibly, and the observation is still answered.
	if err := os.WriteFile(cfg, []byte("audit:\n  file:\n    path: \"-\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, _ := runHookCommand(t, hookEvents[1], "claude-code", "--config", cfg)
	if r := answerReason(t, out); !strings.Contains(r, `audit.file.path "-"`) {
		t.Errorf("audit to stdout: reason %q", r)
	}
}

// TestDaemonAudits: the decision daemon writes what it decides and
// observes to the audit log, and writes out what it holds when it stops.
func TestDaemonAudits(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", "/home/dev")
	auditPath := filepath.Join(dir, "audit.jsonl")
	cfg := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(cfg, []byte("audit:\n  file:\n    path: "+auditPath+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	socket := filepath.Join(dir, "d.sock")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := daemonCommand()
	cmd.SetArgs([]string{"--socket", socket, "--config", cfg, "--log-level", "error"})
	var stderr bytes.Buffer
	cmd.SetErr(&stderr)
	listening := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	c := &daemon.Client{Paths: daemon.PathsAt(socket)}
	go func() {
		defer close(listening)
		for {
			if _, err := os.Stat(socket); err == nil {
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(10 * time.Millisecond): // polling for the socket file
			}
		}
	}()
	<-listening
	for _, payload := range hookEvents {
		ans, err := c.Hook(context.Background(), daemon.Request{Agent: "claude-code", Payload: []byte(payload)})
		if err != nil || ans.Exit != 0 {
			t.Fatalf("daemon: %+v, %v\n%s", ans, err, stderr.String())
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("daemon: %v", err)
	}
	if got := auditCounts(t, auditPath); !sameCounts(got, hookEventsAudit) {
		t.Errorf("audit records %v, want %v", got, hookEventsAudit)
	}
}
