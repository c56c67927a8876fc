package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ahp-opa/ahp-opa/internal/testkit"
	"github.com/ahp-opa/ahp-opa/transport/ahp"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/bundles"
	"github.com/ahp-opa/ahp-opa/transport"
)

// withBuiltin is the built-in library plus user files, as `serve
// --with-builtin --policy` loads them. METADATA is processed as the
// loader does.
func withBuiltin(t testing.TB, files map[string]string) *bundles.Policy {
	t.Helper()
	lib, err := bundles.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	p := &bundles.Policy{Modules: maps.Clone(lib.Modules), Data: lib.Data, Revision: "lib+user"}
	for name, src := range files {
		m, err := ast.ParseModuleWithOpts(name, src, ast.ParserOptions{RegoVersion: ast.RegoV1, ProcessAnnotation: true})
		if err != nil {
			t.Fatalf("parsing %s: %v", name, err)
		}
		p.Modules[name] = m
	}
	return p
}

// builtinSnapshot compiles the built-in library plus files with opts once
// per distinct policy and options for the whole package: a compilation
// costs about half a second under -race, and many cases decide on the same
// policy. A snapshot is immutable, so engines and parallel tests share it.
func builtinSnapshot(t testing.TB, files map[string]string, opts CompileOptions) *Snapshot {
	t.Helper()
	key := fmt.Sprintf("%p|%q|%q", opts.Capabilities, opts.OnRuleError, opts.Shadow)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		key += "|" + name + "\x00" + files[name]
	}
	p := withBuiltin(t, files)
	snapshots.Lock()
	c, ok := snapshots.m[key]
	if !ok {
		c = &compiled{}
		snapshots.m[key] = c
	}
	snapshots.Unlock()
	c.once.Do(func() { c.s, c.err = Compile(context.Background(), p, opts) })
	if c.err != nil {
		t.Fatal(c.err)
	}
	return c.s
}

type compiled struct {
	once sync.Once
	s    *Snapshot
	err  error
}

var snapshots = struct {
	sync.Mutex
	m map[string]*compiled
}{m: map[string]*compiled{}}

// testEvalTimeout bounds an evaluation in the tests that are not about the
// deadline: far above any decision's cost under -race on a busy machine.
const testEvalTimeout = 30 * time.Second

// countRules is a RuleCounter that remembers its calls.
type countRules struct {
	mu             sync.Mutex
	errors, shadow map[string]int
}

func (c *countRules) RuleError(rule string) { c.add(&c.errors, rule) }

func (c *countRules) ShadowDeny(rule string) { c.add(&c.shadow, rule) }

func (c *countRules) add(m *map[string]int, rule string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if *m == nil {
		*m = map[string]int{}
	}
	(*m)[rule]++
}

// teamRule fails on any event whose input.x is not a number.
const teamRule = `package ahp.tool.before.team

deny contains "x is too large" if to_number(input.tool.input.x) > 10
deny contains "sibling" if input.tool.input.command == "sibling"
`

func TestRuleErrorNeverRemovesAnotherDeny(t *testing.T) {
	t.Parallel()
	const teamError = "policy error in rules/team.rego:3 (to_number): denied by on_rule_error=deny"
	tests := []struct {
		mode    OnRuleError
		command string
		codes   []string // codes of the answer's matches, in order; nil for no objection
		reasons []string // reasons that must be among the matches
		fails   bool     // the answer is an evaluation error
	}{
		{mode: RuleErrorDeny, command: "git push --force origin main", codes: []string{"dev.ahp-opa.git.force-push", CodeRuleError}, reasons: []string{teamError}},
		{mode: RuleErrorDeny, command: "rm -rf /", codes: []string{"dev.ahp-opa.fs.rm-recursive-critical", CodeRuleError}},
		{mode: RuleErrorDeny, command: "ls", codes: []string{CodeRuleError}, reasons: []string{teamError}},
		{mode: RuleErrorIgnore, command: "git push --force origin main", codes: []string{"dev.ahp-opa.git.force-push"}},
		{mode: RuleErrorIgnore, command: "rm -rf /", codes: []string{"dev.ahp-opa.fs.rm-recursive-critical"}},
		{mode: RuleErrorIgnore, command: "ls"},
		// The failing rule's sibling in the same package still denies.
		{mode: RuleErrorIgnore, command: "sibling", codes: []string{""}, reasons: []string{"sibling"}},
		{mode: RuleErrorFail, command: "git push --force origin main", fails: true},
		{mode: RuleErrorFail, command: "ls", fails: true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%s", tt.mode, tt.command), func(t *testing.T) {
			e := New(Options{OnRuleError: tt.mode, Home: "/home/dev", EvalTimeout: testEvalTimeout})
			e.Activate(builtinSnapshot(t, map[string]string{"rules/team.rego": teamRule}, CompileOptions{OnRuleError: tt.mode}))
			d, err := judge(t, e, event("Bash", map[string]any{"command": tt.command, "x": "abc"}))
			if len(d.Errors) != 1 || d.Errors[0].Rule != "ahp.tool.before.team.deny" ||
				d.Errors[0].Location != "rules/team.rego:3" || d.Errors[0].Builtin != "to_number" {
				t.Fatalf("errors %+v, want one to_number error at rules/team.rego:3", d.Errors)
			}
			if tt.fails {
				// on_rule_error: fail makes the failing rule an evaluation
				// failure for the harness (-32004), not a silent allow.
				var rpc *transport.Error
				if !errors.As(err, &rpc) || rpc.Code != ahp.CodeBackendInternalError {
					t.Fatalf("err %v, want -32004", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var codes, reasons []string
			for _, m := range d.Matches {
				codes = append(codes, m.Code)
				reasons = append(reasons, m.Reason)
			}
			if fmt.Sprint(codes) != fmt.Sprint(tt.codes) {
				t.Errorf("codes %q, want %q", codes, tt.codes)
			}
			for _, r := range tt.reasons {
				if !contains(reasons, r) {
					t.Errorf("reasons %q lack %q", reasons, r)
				}
			}
		})
	}
}

func TestConflictErrorsAreIsolated(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, src, builtin string }{
		{"complete rule with two values", `package ahp.tool.before.conflict
level = "a" if input.tool.name == "Bash"
level = "b" if input.tool.name == "Bash"
deny contains "never" if level == "c"
`, "eval_conflict_error"},
		{"object key with two values", `package ahp.tool.before.conflict
labels[k] := v if { some k, v in {"a": 1} }
labels[k] := v if { some k, v in {"a": 2} }
deny contains "never" if labels.a == 3
`, "eval_conflict_error"},
		{"function with two outputs", `package ahp.tool.before.conflict
f(x) := 1 if x
f(x) := 2 if x
deny contains "never" if f(true) == 3
`, "eval_conflict_error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := New(Options{OnRuleError: RuleErrorIgnore, Home: "/home/dev", EvalTimeout: testEvalTimeout})
			if err := e.Load(context.Background(), withBuiltin(t, map[string]string{"conflict.rego": tt.src})); err != nil {
				t.Fatal(err)
			}
			d, err := judge(t, e, event("Bash", map[string]any{"command": "git push --force origin main"}))
			if err != nil {
				t.Fatal(err)
			}
			if !d.Denied() || d.Matches[0].Code != "dev.ahp-opa.git.force-push" {
				t.Errorf("matches %+v, want the force-push deny", d.Matches)
			}
			if len(d.Errors) != 1 || d.Errors[0].Rule != "ahp.tool.before.conflict.deny" || d.Errors[0].Builtin != tt.builtin {
				t.Errorf("errors %+v, want one %s in ahp.tool.before.conflict.deny", d.Errors, tt.builtin)
			}
		})
	}
}

// TestRuleErrorReports checks each error is counted every time, logged
// once per rule and distinct message, with secrets masked.
func TestRuleErrorReports(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	counter := &countRules{}
	e := New(Options{Counter: counter, Home: "/home/dev", EvalTimeout: testEvalTimeout,
		Logger: slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	e.Activate(builtinSnapshot(t, map[string]string{"rules/team.rego": teamRule}, CompileOptions{}))
	const token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	inputs := []string{"abc", "abc", "abc", "GITHUB_TOKEN=" + token}
	intercept := func(x string) (*transport.InterceptResult, error) {
		req := &transport.InterceptRequest{ID: transport.StringID("e1"), Effects: []string{"deny"},
			Event: *typed(t, event("Bash", map[string]any{"command": "ls", "x": x}))}
		return e.Intercept(context.Background(), req)
	}
	for _, x := range inputs {
		res, err := intercept(x)
		if err != nil || len(res.Effects) != 1 || res.Effects[0].Code != CodeRuleError {
			t.Fatalf("answer %+v, %v: want the on_rule_error deny", res, err)
		}
		if strings.Contains(res.Effects[0].Reason, "abc") {
			t.Errorf("reason quotes the input: %q", res.Effects[0].Reason)
		}
	}
	if n := counter.errors["ahp.tool.before.team.deny"]; n != len(inputs) {
		t.Errorf("counted %d errors, want %d", n, len(inputs))
	}
	logged := strings.Count(buf.String(), `"msg":"policy rule failed"`)
	if logged != 2 {
		t.Errorf("logged %d rule errors, want 2 (one per distinct message):\n%s", logged, buf.String())
	}
	if strings.Contains(buf.String(), token) {
		t.Errorf("the token reached the log:\n%s", buf.String())
	}
	// A new policy's errors are logged again.
	e.Activate(e.Snapshot())
	buf.Reset()
	if _, err := intercept("abc"); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), `"msg":"policy rule failed"`); n != 1 {
		t.Errorf("after a reload logged %d rule errors, want 1", n)
	}
}

func TestErrorLogIsBounded(t *testing.T) {
	t.Parallel()
	var l errorLog
	newKeys, filled := 0, 0
	for i := range maxLoggedErrors + 10 {
		isNew, full := l.first(fmt.Sprint(i))
		if isNew {
			newKeys++
		}
		if full {
			filled++
		}
	}
	if newKeys != maxLoggedErrors || filled != 1 {
		t.Errorf("%d logged, %d fill notices; want %d and 1", newKeys, filled, maxLoggedErrors)
	}
	if isNew, _ := l.first("0"); isNew {
		t.Error("a key seen before was new again")
	}
	l.reset()
	if isNew, _ := l.first("0"); !isNew {
		t.Error("reset kept an old key")
	}
}

func TestShadowNeverAnswersAlwaysRecords(t *testing.T) {
	t.Parallel()
	shadowPkg := `# METADATA
# custom:
#   mode: shadow
package ahp.tool.before.trial

deny contains "trial: no ls" if input.tool.input.command == "ls"
deny contains "trial error" if to_number(input.tool.input.x) > 1
`
	shadowRule := `package ahp.tool.before.team

# METADATA
# custom:
#   mode: shadow
deny contains {"code": "com.example.no-echo", "reason": "no echo"} if startswith(input.tool.input.command, "echo")

deny contains {"code": "com.example.no-cat", "reason": "no cat"} if startswith(input.tool.input.command, "cat")

# METADATA
# custom:
#   mode: shadow
deny contains {"code": "com.example.small", "reason": "too big"} if {
	to_number(input.tool.input.y) > 1
}
`
	tests := []struct {
		name     string
		shadow   []string
		command  string
		x, y     any
		denied   string // code of the answer's first match, "" for none
		wouldBe  string // code or reason of the shadowed match
		shadowed string // the counter's rule label
		errors   int
	}{
		{name: "built-in code by flag", shadow: []string{"dev.ahp-opa.git.force-push"}, command: "git push --force origin main",
			wouldBe: "dev.ahp-opa.git.force-push", shadowed: "dev.ahp-opa.git.force-push"},
		{name: "package by flag", shadow: []string{"ahp.tool.before.builtin"}, command: "rm -rf /",
			wouldBe: "dev.ahp-opa.fs.rm-recursive-critical", shadowed: "dev.ahp-opa.fs.rm-recursive-critical"},
		{name: "unshadowed rule still denies", shadow: []string{"dev.ahp-opa.git.force-push"}, command: "rm -rf /",
			denied: "dev.ahp-opa.fs.rm-recursive-critical"},
		{name: "package annotation", command: "ls", wouldBe: "trial: no ls", shadowed: "ahp.tool.before.trial"},
		{name: "rule annotation", command: "echo hi", wouldBe: "com.example.no-echo", shadowed: "com.example.no-echo"},
		{name: "sibling of an annotated rule enforces", command: "cat x", denied: "com.example.no-cat"},
		{name: "shadowed package's error changes nothing", command: "pwd", x: "abc", errors: 1},
		{name: "shadowed rule's error changes nothing", command: "pwd", y: "abc", errors: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			counter := &countRules{}
			e := New(Options{Shadow: tt.shadow, Counter: counter, Home: "/home/dev", EvalTimeout: testEvalTimeout})
			e.Activate(builtinSnapshot(t, map[string]string{"trial.rego": shadowPkg, "team.rego": shadowRule}, CompileOptions{Shadow: tt.shadow}))
			in := map[string]any{"command": tt.command}
			if tt.x != nil {
				in["x"] = tt.x
			}
			if tt.y != nil {
				in["y"] = tt.y
			}
			req := &transport.InterceptRequest{ID: transport.StringID("e1"), Effects: []string{"deny"},
				Event: *typed(t, event("Bash", in))}
			v := e.Judge(context.Background(), req)
			if v.Err != nil {
				t.Fatal(v.Err)
			}
			got := ""
			if len(v.Result.Effects) > 0 {
				got = v.Result.Effects[0].Code
			}
			if got != tt.denied {
				t.Errorf("answered %q, want %q (%+v)", got, tt.denied, v.Result.Effects)
			}
			if tt.wouldBe != "" {
				found := false
				for _, m := range v.Decision.Shadowed {
					found = found || m.Code == tt.wouldBe || m.Reason == tt.wouldBe
				}
				if !found {
					t.Errorf("shadowed %+v, want %q", v.Decision.Shadowed, tt.wouldBe)
				}
				if counter.shadow[tt.shadowed] != 1 {
					t.Errorf("shadow counter %v, want %s once", counter.shadow, tt.shadowed)
				}
			}
			if len(v.Decision.Errors) != tt.errors {
				t.Errorf("errors %+v, want %d", v.Decision.Errors, tt.errors)
			}
			for _, re := range v.Decision.Errors {
				if !re.Shadow {
					t.Errorf("error %+v of a shadowed rule is not marked shadow", re)
				}
			}
		})
	}
}

func TestShadowIDsAreChecked(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		shadow  []string
		files   map[string]string
		want    string
		notWant string
		long    bool // each case compiles the library: several seconds under -race
	}{
		{name: "misspelt code", shadow: []string{"dev.ahp-opa.git.force-psh"},
			want: `unknown shadow id "dev.ahp-opa.git.force-psh": not a deny code or a package of the policy; did you mean "dev.ahp-opa.git.force-push"?`},
		{name: "misspelt package", shadow: []string{"ahp.tool.before.buitlin"}, want: `did you mean "ahp.tool.before.builtin"?`, long: true},
		{name: "letters swapped", shadow: []string{"dev.ahp-opa.git.froce-push"}, want: `did you mean "dev.ahp-opa.git.force-push"?`, long: true},
		{name: "data. prefix and a typo", shadow: []string{"data.ahp.tool.before.builtn"}, want: `did you mean "ahp.tool.before.builtin"?`},
		{name: "nothing near", shadow: []string{"zzz"}, want: `unknown shadow id "zzz"`, notWant: "did you mean", long: true},
		// One rule for every hint (internal/suggest): at most a third of
		// the name in edits, so a name half gone gets no wild guess.
		{name: "too far for a guess", shadow: []string{"dev.ahp-opa.agent.co"},
			want: `unknown shadow id "dev.ahp-opa.agent.co"`, notWant: "did you mean", long: true},
		{name: "annotated rule without a code", files: map[string]string{"x.rego": `package ahp.tool.before.x

# METADATA
# custom:
#   mode: shadow
deny contains "no code" if input.tool.name == "x"
`}, want: "x.rego:6: a rule in shadow mode needs a code"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.long {
				testkit.RequireLong(t)
			}
			_, err := Compile(context.Background(), withBuiltin(t, tt.files), CompileOptions{Shadow: tt.shadow})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
			if tt.notWant != "" && err != nil && strings.Contains(err.Error(), tt.notWant) {
				t.Errorf("error %v, want no %q", err, tt.notWant)
			}
		})
	}
	if _, err := Compile(context.Background(), withBuiltin(t, nil), CompileOptions{Shadow: []string{"data.ahp.tool.before.builtin", "dev.ahp-opa.git.force-push"}}); err != nil {
		t.Errorf("valid ids refused: %v", err)
	}
}

func TestEffectCapsListedMatches(t *testing.T) {
	t.Parallel()
	e := loaded(t, Options{OnRuleError: RuleErrorDeny}, map[string]string{"many.rego": `package ahp.tool.before.many
deny contains sprintf("reason %03d", [i]) if some i in numbers.range(1, 40)
`})
	d, err := judge(t, e, event("x", nil))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(d.Effect().Extensions[ExtensionKey])
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Rules     []Match `json:"rules"`
		Truncated int     `json:"truncated"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Rules) != MaxListedMatches || got.Truncated != 40-MaxListedMatches {
		t.Errorf("listed %d matches, truncated %d; want %d and %d", len(got.Rules), got.Truncated, MaxListedMatches, 40-MaxListedMatches)
	}
}

func TestParseOnRuleError(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]OnRuleError{"": RuleErrorDeny, "deny": RuleErrorDeny, "ignore": RuleErrorIgnore, "error": RuleErrorFail} {
		if got, err := ParseOnRuleError(in); err != nil || got != want {
			t.Errorf("ParseOnRuleError(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseOnRuleError("allow"); err == nil || !strings.Contains(err.Error(), "want deny, ignore or error") {
		t.Errorf("ParseOnRuleError(allow): %v", err)
	}
}

func TestExplainShowsShadowAndErrors(t *testing.T) {
	t.Parallel()
	s, err := Compile(context.Background(), withBuiltin(t, map[string]string{"rules/team.rego": teamRule}),
		CompileOptions{Shadow: []string{"dev.ahp-opa.git.force-push"}, OnRuleError: RuleErrorFail})
	if err != nil {
		t.Fatal(err)
	}
	input := fullInput(t, event("Bash", map[string]any{"command": "git push --force origin main", "x": "abc"}), "/home/dev")
	d, fired, err := s.Explain(context.Background(), input)
	if err != nil {
		t.Fatalf("explain under on_rule_error=error: %v", err)
	}
	if len(d.Errors) != 1 || d.Errors[0].Location != "rules/team.rego:3" {
		t.Errorf("errors %+v", d.Errors)
	}
	shadowed := false
	for _, f := range fired {
		if f.Code == "dev.ahp-opa.git.force-push" {
			shadowed = f.Shadowed
			if f.Suppressed {
				t.Errorf("a shadowed rule shows as suppressed: %+v", f)
			}
		}
	}
	if !shadowed {
		t.Errorf("fired %+v: force push not shown as shadowed", fired)
	}
}

// TestRuleErrorsConcurrently decides failing events from many goroutines:
// every error is counted, the log line is written once.
func TestRuleErrorsConcurrently(t *testing.T) {
	t.Parallel()
	var buf testkit.Buffer
	counter := &countRules{}
	e := New(Options{Counter: counter, Home: "/home/dev", EvalTimeout: testEvalTimeout,
		Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
	e.Activate(builtinSnapshot(t, map[string]string{"rules/team.rego": teamRule}, CompileOptions{}))
	const workers, each = 4, 10
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range each {
				req := &transport.InterceptRequest{ID: transport.StringID("e1"), Effects: []string{"deny"},
					Event: *typed(t, event("Bash", map[string]any{"command": "git push --force origin main", "x": "abc"}))}
				v := e.Judge(context.Background(), req)
				if v.Err != nil || len(v.Result.Effects) != 1 || v.Result.Effects[0].Code != "dev.ahp-opa.git.force-push" {
					t.Errorf("verdict %+v", v)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := counter.errors["ahp.tool.before.team.deny"]; n != workers*each {
		t.Errorf("counted %d, want %d", n, workers*each)
	}
	if n := strings.Count(buf.String(), `"msg":"policy rule failed"`); n != 1 {
		t.Errorf("logged %d times, want once", n)
	}
}

// TestRuleErrorDenyOnTheWire pins the deny effect on_rule_error=deny sends.
func TestRuleErrorDenyOnTheWire(t *testing.T) {
	t.Parallel()
	e := loaded(t, Options{}, map[string]string{"rules/team.rego": teamRule})
	req := &transport.InterceptRequest{ID: transport.StringID("e1"), Effects: []string{"deny"},
		Event: *typed(t, event("Bash", map[string]any{"command": "ls", "x": "sk-live-abcdefghijklmnop1234"}))}
	res, err := e.Intercept(context.Background(), req)
	if err != nil || len(res.Effects) != 1 {
		t.Fatalf("%+v, %v", res, err)
	}
	b, err := json.Marshal(res.Effects[0])
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"deny","reason":"policy error in rules/team.rego:3 (to_number): denied by on_rule_error=deny","code":"dev.ahp-opa.policy-error",` +
		`"extensions":{"dev.ahp-opa":{"revision":"test-1","rules":[{"package":"ahp.tool.before.team","code":"dev.ahp-opa.policy-error"}],` +
		`"rule_errors":["rules/team.rego:3 (to_number)"]}}}`
	if string(b) != want {
		t.Errorf("effect\n got %s\nwant %s", b, want)
	}
}
