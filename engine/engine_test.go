package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/bundles"
	"github.com/ahp-opa/ahp-opa/internal/enrich"
	"github.com/ahp-opa/ahp-opa/transport"
	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// policy builds a Policy from file name → Rego source.
func policy(t testing.TB, files map[string]string) *bundles.Policy {
	t.Helper()
	p := &bundles.Policy{Modules: map[string]*ast.Module{}, Revision: fmt.Sprintf("test-%d", len(files))}
	for name, src := range files {
		m, err := ast.ParseModuleWithOpts(name, src, ast.ParserOptions{RegoVersion: ast.RegoV1})
		if err != nil {
			t.Fatalf("parsing %s: %v", name, err)
		}
		p.Modules[name] = m
	}
	return p
}

func loaded(t testing.TB, opts Options, files map[string]string) *Engine {
	t.Helper()
	if opts.EvalTimeout == 0 {
		opts.EvalTimeout = testEvalTimeout
	}
	e := New(opts)
	if err := e.Load(context.Background(), policy(t, files)); err != nil {
		t.Fatalf("Load: %v", err)
	}
	return e
}

func event(tool string, input map[string]any) map[string]any {
	return map[string]any{
		"id": "e1", "source": "urn:x", "type": "tool.before", "time": "2026-01-02T03:04:05Z",
		"call": map[string]any{"id": "c1"}, "path": "native",
		"tool": map[string]any{"name": tool, "origin": "native", "input": input},
	}
}

const teamA = `package ahp.tool.before.team_a
deny contains "strings work" if input.tool.name == "A"
deny contains {"reason": "objects work", "code": "com.example.a"} if input.tool.name == "A"
`

const teamB = `package ahp.tool.before.team_b.nested
deny contains {"reason": "nested packages count", "code": "com.example.b"} if input.tool.name in {"A", "B"}
`

const rootPkg = `package ahp.tool.before
deny contains {"reason": "root package counts", "code": "com.example.root"} if input.tool.name == "R"
`

func TestDecideCollectsAcrossPackages(t *testing.T) {
	t.Parallel()
	e := loaded(t, Options{}, map[string]string{"a.rego": teamA, "b.rego": teamB, "root.rego": rootPkg})
	wantRules := []string{"ahp.tool.before.deny", "ahp.tool.before.team_a.deny", "ahp.tool.before.team_b.nested.deny"}
	if got := e.Snapshot().Rules; strings.Join(got, ",") != strings.Join(wantRules, ",") {
		t.Errorf("rules = %v, want %v", got, wantRules)
	}
	tests := []struct {
		tool  string
		want  []string // "package code reason", in order
		first string
	}{
		{tool: "none"},
		{tool: "R", want: []string{"ahp.tool.before com.example.root root package counts"}},
		{tool: "B", want: []string{"ahp.tool.before.team_b.nested com.example.b nested packages count"}},
		{tool: "A", want: []string{
			"ahp.tool.before.team_a  strings work",
			"ahp.tool.before.team_a com.example.a objects work",
			"ahp.tool.before.team_b.nested com.example.b nested packages count",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			for range 3 { // the order must not depend on the run
				d, err := judge(t, e, event(tt.tool, map[string]any{}))
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, m := range d.Matches {
					got = append(got, m.Package+" "+m.Code+" "+m.Reason)
				}
				if strings.Join(got, "|") != strings.Join(tt.want, "|") {
					t.Fatalf("matches = %q, want %q", got, tt.want)
				}
				if d.Revision != "test-3" {
					t.Errorf("revision = %q", d.Revision)
				}
			}
		})
	}
}

// A team's own rule speaks before the built-in library's, whatever its
// package is called; the library's match is still listed after it. One
// policy holds every case: each compile of the library costs seconds.
func TestTeamRulesSpeakBeforeLibrary(t *testing.T) {
	t.Parallel()
	const rule = `deny contains {"reason": "team: no terraform destroy", "code": "com.example.tf"} if {
	contains(input.tool.input.command, "terraform destroy")
}
`
	files := map[string]string{}
	for _, pkg := range []string{
		"ahp.tool.before.myteam",   // sorts after builtin
		"ahp.tool.before.acme",     // sorts before it
		"ahp.tool.before",          // the root
		"ahp.tool.before.builtins", // a look-alike of the library's name
	} {
		files[pkg+".rego"] = "package " + pkg + "\n" + rule
	}
	e := New(Options{Home: "/home/dev", EvalTimeout: testEvalTimeout})
	e.Activate(builtinSnapshot(t, files, CompileOptions{}))
	d, err := judge(t, e, event("Bash", map[string]any{"command": "terraform destroy -auto-approve"}))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range d.Matches {
		got = append(got, m.Package)
	}
	want := []string{"ahp.tool.before", "ahp.tool.before.acme", "ahp.tool.before.builtins", "ahp.tool.before.myteam", "ahp.tool.before.builtin"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("matches from %q, want %q", got, want)
	}
}

func TestMalformedDenyStillDenies(t *testing.T) {
	t.Parallel()
	e := loaded(t, Options{}, map[string]string{"m.rego": `package ahp.tool.before.m
deny contains 42 if input.tool.name == "number"
deny contains {"code": "com.example.x"} if input.tool.name == "no-reason"
deny contains {"reason": "bad code", "code": "not reverse dns"} if input.tool.name == "bad-code"
deny contains "" if input.tool.name == "empty"
`})
	tests := []struct{ tool, reason, code string }{
		{"number", "Blocked by policy ahp.tool.before.m.", ""},
		{"no-reason", "Blocked by policy ahp.tool.before.m.", "com.example.x"},
		{"bad-code", "bad code", ""},
		{"empty", "Blocked by policy ahp.tool.before.m.", ""},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			d, err := judge(t, e, event(tt.tool, map[string]any{}))
			if err != nil {
				t.Fatal(err)
			}
			if len(d.Matches) != 1 {
				t.Fatalf("matches = %+v, want 1", d.Matches)
			}
			m := d.Matches[0]
			if m.Reason != tt.reason || m.Code != tt.code || m.Malformed == "" {
				t.Errorf("match = %+v, want reason %q code %q and a malformed note", m, tt.reason, tt.code)
			}
		})
	}
}

func TestReasonIsBounded(t *testing.T) {
	t.Parallel()
	e := loaded(t, Options{}, map[string]string{"l.rego": `package ahp.tool.before.l
deny contains concat("", [s | some _ in numbers.range(1, 600); s := "é"]) if true
`})
	d, err := judge(t, e, event("x", nil))
	if err != nil {
		t.Fatal(err)
	}
	r := d.Matches[0].Reason
	if len(r) > MaxReasonBytes || !strings.HasSuffix(r, "…") || !strings.HasPrefix(r, "éé") {
		t.Errorf("reason of %d bytes not cut cleanly: ...%q", len(r), r[len(r)-8:])
	}
}

func TestCompileRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, src string
		want      string
		is        error
	}{
		{name: "no deny rule", src: "package ahp.tool_before\ndeny contains 1 if true", is: ErrNoDenyRules,
			want: `deny is defined in ahp.tool_before; did you mean package ahp.tool.before?`},
		{name: "misspelt package below the root", src: "package ahp.tool.befor.team\ndeny contains 1 if true", is: ErrNoDenyRules,
			want: `deny is defined in ahp.tool.befor.team; did you mean package ahp.tool.before.team?`},
		{name: "deny outside the root", src: "package ahp.tool.after\ndeny contains 1 if true", is: ErrNoDenyRules,
			want: "deny is defined in ahp.tool.after"},
		{name: "no rule named deny", src: "package ahp.tool.before.x\nallow := true", is: ErrNoDenyRules,
			want: "no rule is named deny (packages found: ahp.tool.before.x)"},
		{name: "boolean deny", src: "package ahp.tool.before.x\ndeny if true", want: "x.rego:2: rego_compile_error: deny must be a set rule"},
		{name: "http.send unavailable", src: "package ahp.tool.before.x\ndeny contains r if { r := http.send({}) }", want: "undefined function http.send"},
		{name: "net.cidr_contains unavailable", src: "package ahp.tool.before.x\ndeny contains \"r\" if net.cidr_contains(\"10.0.0.0/8\", \"10.1.1.1\")", want: "undefined function net.cidr_contains"},
		{name: "type error with location", src: "package ahp.tool.before.x\n\ndeny contains r if { r := 1 + \"a\" }", want: "x.rego:3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compile(context.Background(), policy(t, map[string]string{"x.rego": tt.src}), CompileOptions{})
			if err == nil {
				t.Fatal("compiled, want an error")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v, want %v", err, tt.is)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q lacks %q", err, tt.want)
			}
		})
	}
}

// TestDecideErrors: what cannot be decided is an error the harness
// applies its failure policy to, never a silent allow, and the error
// quotes nothing of the input (B-ERR-2).
func TestDecideErrors(t *testing.T) {
	t.Parallel()
	code := func(err error) int {
		var rpc *transport.Error
		if !errors.As(err, &rpc) {
			return 0
		}
		return rpc.Code
	}
	if _, err := judge(t, New(Options{}), event("x", nil)); code(err) != ahp.CodeBackendUnavailable {
		t.Errorf("no policy: %v, want -32003", err)
	}
	e := loaded(t, Options{EvalTimeout: 50 * time.Millisecond, OnRuleError: RuleErrorFail}, map[string]string{"x.rego": `package ahp.tool.before.x
deny contains "strict" if to_number(input.tool.input.n) > 1
deny contains "slow" if {
	input.tool.name == "slow"
	count([x | some x in numbers.range(1, 100000000); x % 7 == 0]) > 0
}`})
	if _, err := judge(t, e, event("x", map[string]any{"n": "secret-value"})); code(err) != ahp.CodeBackendInternalError || strings.Contains(err.Error(), "secret-value") {
		t.Errorf("strict builtin error: %v, want -32004 without the input", err)
	}
	start := time.Now()
	if _, err := judge(t, e, event("slow", map[string]any{"n": "1"})); code(err) != ahp.CodeBackendInternalError || !strings.Contains(err.Error(), "deadline") {
		t.Errorf("slow policy: %v, want -32004 naming the deadline", err)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("deadline not enforced: evaluation took %s", elapsed)
	}
}

func TestIntercept(t *testing.T) {
	t.Parallel()
	e := loaded(t, Options{OnRuleError: RuleErrorFail}, map[string]string{"a.rego": teamA, "b.rego": teamB, "x.rego": `package ahp.tool.before.x
deny contains "strict" if to_number(input.tool.input.n) > 1`})
	req := func(tool string, effects ...string) *transport.InterceptRequest {
		ev := event(tool, map[string]any{"n": "1"})
		if tool == "fail" {
			ev = event(tool, map[string]any{"n": "sk-live-secret"})
		}
		r := request(t, ev)
		r.Effects = effects
		return r
	}
	res, err := e.Intercept(context.Background(), req("none", "deny"))
	if err != nil || len(res.Effects) != 0 {
		t.Errorf("no objection: %+v, %v", res, err)
	}

	res, err = e.Intercept(context.Background(), req("A", "deny"))
	if err != nil || len(res.Effects) != 1 {
		t.Fatalf("deny: %+v, %v (B-EFF-5: exactly one deny)", res, err)
	}
	b, _ := json.Marshal(res.Effects[0])
	want := `{"type":"deny","reason":"strings work","extensions":{"dev.ahp-opa":{"revision":"test-3","rules":[` +
		`{"package":"ahp.tool.before.team_a"},{"package":"ahp.tool.before.team_a","code":"com.example.a"},` +
		`{"package":"ahp.tool.before.team_b.nested","code":"com.example.b"}]}}}`
	if string(b) != want {
		t.Errorf("deny effect\n got %s\nwant %s", b, want)
	}

	_, err = e.Intercept(context.Background(), req("A", "flow"))
	var rpcErr *transport.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != ahp.CodeInvalidParams {
		t.Errorf("deny not advertised: %v, want -32602 (B-INT-6)", err)
	}

	_, err = e.Intercept(context.Background(), req("fail", "deny"))
	if !errors.As(err, &rpcErr) || rpcErr.Code != ahp.CodeBackendInternalError {
		t.Fatalf("evaluation error: %v, want -32004", err)
	}
	if b, _ := json.Marshal(rpcErr); strings.Contains(string(b), "secret") || strings.Contains(string(b), "to_number") {
		t.Errorf("error leaks input or internals (B-ERR-2): %s", b)
	}

	_, err = New(Options{}).Intercept(context.Background(), req("A", "deny"))
	if !errors.As(err, &rpcErr) || rpcErr.Code != ahp.CodeBackendUnavailable {
		t.Errorf("no policy: %v, want -32003", err)
	}
}

// TestSwapUnderLoad swaps policies while requests flow: every answer comes
// whole from one snapshot or the other, never from a mix or an error.
func TestSwapUnderLoad(t *testing.T) {
	t.Parallel()
	e := New(Options{EvalTimeout: testEvalTimeout})
	versions := []*bundles.Policy{
		policy(t, map[string]string{"p.rego": "package ahp.tool.before.p\ndeny contains \"v1\" if input.tool.name == \"x\""}),
		policy(t, map[string]string{"p.rego": "package ahp.tool.before.p\ndeny contains \"v2\" if input.tool.name == \"x\"", "q.rego": "package ahp.tool.before.q\ndeny contains \"v2\" if input.tool.name == \"x\""}),
	}
	snaps := make([]*Snapshot, len(versions))
	for i, p := range versions {
		var err error
		if snaps[i], err = Compile(context.Background(), p, CompileOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	e.Activate(snaps[0])
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				d, err := judge(t, e, event("x", nil))
				if err != nil {
					errs <- err
					return
				}
				ok := (len(d.Matches) == 1 && d.Matches[0].Reason == "v1" && d.Revision == "test-1") ||
					(len(d.Matches) == 2 && d.Matches[0].Reason == "v2" && d.Revision == "test-2")
				if !ok {
					errs <- fmt.Errorf("mixed answer: %+v", d)
					return
				}
			}
		}()
	}
	for i := range 2000 {
		e.Activate(snaps[i%2])
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

type fixedFacts struct{ v ast.Value }

func (f fixedFacts) Session(context.Context, string, string) ast.Value { return f.v }

// TestInputHoldsWhatThePolicyReads: the event is enriched with the parts
// of input.ahp the policy reads and no others; a harness-sent "ahp" never
// survives.
func TestInputHoldsWhatThePolicyReads(t *testing.T) {
	facts := fixedFacts{ast.MustParseTerm(`{"reads": 2}`).Value}
	tests := []struct {
		name, rule string
		want       enrich.Parts
		keys       []string
	}{
		{"raw", `deny contains "x" if input.tool.name == "Nope"`, 0, nil},
		{"raw through object.get", `deny contains "x" if count(object.get(input, ["session", "workspaceRoots"], [])) > 5`, 0, nil},
		{"shell through a local", `deny contains "x" if { a := input.ahp; a.shell.programs.nope }`, enrich.Shell, []string{"shell"}},
		{"shell", `deny contains "x" if input.ahp.shell.programs.nope`, enrich.Shell, []string{"shell"}},
		{"session", `deny contains "x" if input.ahp.session.reads > 5`, enrich.Session, []string{"session"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := loaded(t, Options{Facts: facts}, map[string]string{"p.rego": "package ahp.tool.before.p\n" + tt.rule})
			ev := event("Bash", map[string]any{"command": "ls"})
			ev["ahp"] = map[string]any{"forged": true}
			req := request(t, ev)
			v := e.Judge(context.Background(), req)
			if v.Err != nil {
				t.Fatal(v.Err)
			}
			if v.Enriched != tt.want {
				t.Errorf("Enriched = %b, want %b", v.Enriched, tt.want)
			}
			var keys []string
			ahp, _ := v.Input.(ast.Object).Get(ast.StringTerm(enrich.InputKey)).Value.(ast.Object)
			for _, k := range ahp.Keys() {
				keys = append(keys, string(k.Value.(ast.String)))
			}
			if !slices.Equal(keys, tt.keys) {
				t.Errorf("input.ahp keys = %v, want %v", keys, tt.keys)
			}
		})
	}
}

// typed is an event held as Go values as the transport hands it over:
// parsed once into its typed view.
func typed(tb testing.TB, ev map[string]any) *transport.Event {
	tb.Helper()
	event, err := transport.EventOfMap(ev)
	if err != nil {
		tb.Fatal(err)
	}
	return &event
}

// request is the intercept request for an event held as Go values,
// advertising deny.
func request(tb testing.TB, ev map[string]any) *transport.InterceptRequest {
	tb.Helper()
	event := typed(tb, ev)
	return &transport.InterceptRequest{ID: transport.StringID(event.ID), Event: *event, Effects: []string{ahp.EffectDeny}}
}

// judge decides an event through Judge, the entry point of every
// binding: the decision, and the error the harness gets, if any.
func judge(tb testing.TB, e *Engine, ev map[string]any) (Decision, error) {
	tb.Helper()
	return verdict(e.Judge(context.Background(), request(tb, ev)))
}

func verdict(v Verdict) (Decision, error) {
	if v.Err != nil {
		return v.Decision, v.Err
	}
	return v.Decision, nil
}

// fullInput is the whole policy input for an event held as Go values.
func fullInput(tb testing.TB, ev map[string]any, home string) ast.Object {
	tb.Helper()
	return enrich.FullInput(typed(tb, ev), enrich.Options{Home: home})
}
