package rollout

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/bundles"
	"github.com/ahp-opa/ahp-opa/engine"
	"github.com/ahp-opa/ahp-opa/internal/audit"
)

// loadEngine compiles one Rego module into an engine; facts, if set, give
// it input.ahp.session.
func loadEngine(t testing.TB, src string, facts engine.SessionFacts) *engine.Engine {
	t.Helper()
	m, err := ast.ParseModuleWithOpts("policy.rego", src, ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		t.Fatal(err)
	}
	e := engine.New(engine.Options{Facts: facts})
	p := &bundles.Policy{Modules: map[string]*ast.Module{"policy.rego": m}, Revision: "candidate"}
	if err := e.Load(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	return e
}

// call is one recorded tool.before and what was answered then.
type call struct {
	id, session, tool, command string
	decision, reason           string
	codes                      []string
	at                         time.Duration // after logStart
}

var logStart = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// decisionRecord is the audit record serve writes for c with
// include_input.
func decisionRecord(c call) *audit.Record {
	if c.session == "" {
		c.session = "s1"
	}
	if c.tool == "" {
		c.tool = "Bash"
	}
	at := logStart.Add(c.at)
	return &audit.Record{
		Time: at, Kind: audit.KindDecision, EventID: c.id, EventType: "tool.before", Source: "urn:test",
		SessionID: c.session, CallID: "call_" + c.id, Tool: &audit.Tool{Name: c.tool, Family: "shell"},
		Decision: c.decision, Reason: c.reason, Codes: c.codes, Revision: "live",
		Input: map[string]any{
			"id": c.id, "source": "urn:test", "type": "tool.before", "time": at.Format(time.RFC3339),
			"session": map[string]any{"id": c.session, "cwd": "/repo", "workspaceRoots": []any{"/repo"}},
			"call":    map[string]any{"id": "call_" + c.id}, "path": "native",
			"tool": map[string]any{"name": c.tool, "origin": "native", "input": map[string]any{"command": c.command}},
		},
	}
}

// writeLog writes records, then any raw lines, as an audit log.
func writeLog(t testing.TB, recs []*audit.Record, raw ...string) string {
	t.Helper()
	var b strings.Builder
	for _, r := range recs {
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	for _, l := range raw {
		b.WriteString(l)
	}
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func replayFile(t testing.TB, path string, judge Judge, opts ReplayOptions) (*Report, error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return Replay(context.Background(), f, judge, opts)
}

func calls(cs ...call) []*audit.Record {
	recs := make([]*audit.Record, len(cs))
	for i, c := range cs {
		if c.at == 0 {
			c.at = time.Duration(i) * time.Minute
		}
		recs[i] = decisionRecord(c)
	}
	return recs
}

func observation(kind, typ, session, callID, execution string, at time.Duration) *audit.Record {
	return &audit.Record{
		Time: logStart.Add(at), Kind: kind, EventID: fmt.Sprintf("obs_%s_%s", session, callID), EventType: typ,
		Source: "urn:test", SessionID: session, CallID: callID, Execution: execution,
	}
}
