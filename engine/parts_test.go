package engine

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/internal/adapters"
	"github.com/ahp-opa/ahp-opa/internal/enrich"
	"github.com/ahp-opa/ahp-opa/internal/testkit"
	"github.com/ahp-opa/ahp-opa/transport"
)

// TestCutPartsSameDecision: a policy decides the same whether the input
// holds only the parts of input.ahp the analysis says it reads or all of
// them, over the evaluation corpus and the conformance requests.
func TestCutPartsSameDecision(t *testing.T) {
	t.Parallel()
	events := partsEvents(t)
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	policies := []struct {
		name    string
		builtin bool
		files   map[string]string
		facts   SessionFacts
		// cut says the analysis must leave parts out: else the test
		// compares a policy with itself.
		cut bool
	}{
		{"library", true, nil, nil, true},
		{"team", true, map[string]string{"team.rego": read("../examples/policy/team.rego")}, nil, true},
		{"agents", false, map[string]string{"agents.rego": read("../examples/agents/agents.rego")}, nil, true},
		{"session", false, map[string]string{"session.rego": read("../examples/session/session.rego")},
			fixedFacts{ast.MustParseTerm(`{"secrets_touched": true, "recent": [{"family": "fetch", "hosts": ["x.io"]}]}`).Value}, true},
		{"reference", false, map[string]string{"reference.rego": read("../bench/reference/policy.rego")}, nil, true},
		{"plain", false, map[string]string{"plain.rego": read("../bench/plain/policy.rego")}, nil, true},
		{"idioms", false, map[string]string{"idioms.rego": read("testdata/idioms.rego")}, nil, true},
	}
	for _, p := range policies {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			var s *Snapshot
			if p.builtin {
				s = builtinSnapshot(t, p.files, CompileOptions{})
			} else {
				var err error
				if s, err = Compile(context.Background(), policy(t, p.files), CompileOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			if p.cut && s.Needs() == enrich.All {
				t.Fatalf("the analysis reads every part of %s: nothing is cut", p.name)
			}
			if s.Needs() == enrich.All {
				return // nothing cut: the decision is the same by construction
			}
			full := *s
			full.needs = enrich.All
			cut := New(Options{Home: "/home/dev", EvalTimeout: testEvalTimeout, Facts: p.facts})
			cut.Activate(s)
			whole := New(Options{Home: "/home/dev", EvalTimeout: testEvalTimeout, Facts: p.facts})
			whole.Activate(&full)
			denied, compared, stride := 0, 0, 1
			switch {
			case testkit.LongEnabled(): // every event
			case p.builtin:
				stride = 16 // the library is slow to decide under -race
			default:
				stride = 4
			}
			for i := 0; i < len(events); i += stride {
				ev := events[i]
				compared++
				d1, _, _, err1 := cut.decide(context.Background(), ev.ev)
				d2, _, _, err2 := whole.decide(context.Background(), ev.ev)
				if (err1 == nil) != (err2 == nil) || !reflect.DeepEqual(d1, d2) {
					t.Fatalf("%s: with parts %v: %+v, %v; with all: %+v, %v", ev.where, s.Needs(), d1, err1, d2, err2)
				}
				if d1.Denied() {
					denied++
				}
			}
			if denied == 0 {
				t.Errorf("no event is denied by %s: the comparison proves little", p.name)
			}
			t.Logf("%s reads %v; %d of %d events denied alike", p.name, s.Needs(), denied, compared)
		})
	}
}

type partsEvent struct {
	where string
	ev    *transport.Event
}

// partsEvents returns the corpus cases and the conformance requests as
// tool.before events.
func partsEvents(t *testing.T) []partsEvent {
	t.Helper()
	var out []partsEvent
	files, err := filepath.Glob("../rego/corpus/*.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<20)
		for n := 1; sc.Scan(); n++ {
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 || line[0] == '#' {
				continue
			}
			var c struct {
				Tool  string         `json:"tool"`
				Input map[string]any `json:"input"`
				Agent string         `json:"agent"`
			}
			if err := json.Unmarshal(line, &c); err != nil {
				t.Fatalf("%s:%d: %v", f, n, err)
			}
			ev := event(c.Tool, c.Input)
			ev["session"] = map[string]any{"id": "s1", "cwd": "/home/dev/repo", "workspaceRoots": []any{"/home/dev/repo"}}
			where := fmt.Sprintf("%s:%d", f, n)
			if c.Agent != "" {
				ev["source"] = adapters.SourcePrefix + c.Agent
			}
			out = append(out, partsEvent{where: where, ev: typed(t, ev)})
			if c.Agent == "" && n%3 == 0 {
				// The same call from native agents, for policies that
				// tell agents apart.
				for _, agent := range []string{"codex", "claude-code"} {
					ev["source"] = adapters.SourcePrefix + agent
					out = append(out, partsEvent{where: where + " as " + agent, ev: typed(t, ev)})
				}
			}
		}
	}
	ahp, err := testkit.LocateAHP()
	if err != nil {
		if testkit.SharedRequired() {
			t.Fatal(err)
		}
		t.Logf("without the conformance requests: %v", err)
		return out
	}
	dir := filepath.Join(ahp, "conformance", "fixtures", "draft", "stdio")
	reqs, _ := filepath.Glob(filepath.Join(dir, "intercept-request*.valid.jsonl"))
	for _, f := range reqs {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var req struct {
				Params struct {
					Event map[string]any `json:"event"`
				} `json:"params"`
			}
			if err := json.Unmarshal([]byte(line), &req); err != nil || req.Params.Event == nil {
				t.Fatalf("%s: not an intercept request: %v", f, err)
			}
			out = append(out, partsEvent{where: f, ev: typed(t, req.Params.Event)})
		}
	}
	return out
}
