package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/bundles"
	"github.com/ahp-opa/ahp-opa/engine"
)

const explainEvent = `{"id":"e1","source":"urn:x","type":"tool.before","time":"2026-01-02T03:04:05Z","call":{"id":"c1"},"path":"native",
 "session":{"id":"s1","cwd":"/home/dev/repo","workspaceRoots":["/home/dev/repo"]},
 "tool":{"name":"Bash","origin":"native","input":{"command":"git push -f && cat .env"}}}`

func TestPrintInput(t *testing.T) {
	request := `{"jsonrpc":"2.0","id":"1","method":"hooks/intercept","params":{"protocolVersion":"draft","capabilities":{"effects":["deny"]},"event":` + explainEvent + `}}`
	for _, data := range []string{explainEvent, request} {
		var out bytes.Buffer
		if err := printPolicyInput(&out, []byte(data)); err != nil {
			t.Fatal(err)
		}
		var input struct {
			Tool struct{ Name string }
			AHP  struct {
				Tool  struct{ Family string }
				Shell struct{ Commands []struct{ Name string } }
			}
		}
		if err := json.Unmarshal(out.Bytes(), &input); err != nil {
			t.Fatal(err)
		}
		if input.Tool.Name != "Bash" || input.AHP.Tool.Family != "shell" || len(input.AHP.Shell.Commands) != 2 {
			t.Errorf("input = %+v", input)
		}
	}
}

func TestExplainDecision(t *testing.T) {
	p, err := bundles.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	p, err = bundles.WithLibraryConfig(p, map[string]any{"disabled_rules": []any{"dev.ahp-opa.secrets.env-file"}})
	if err != nil {
		t.Fatal(err)
	}
	eng := engine.New(engine.Options{})
	if err := eng.Load(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := explainDecision(context.Background(), &out, eng, []byte(explainEvent)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"decision: deny (1 rule(s) matched",
		"git.rego:",
		"dev.ahp-opa.git.force-push",
		"Force push",
		"dev.ahp-opa.secrets.env-file [suppressed by data.ahp_opa.config]",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("explanation lacks %q:\n%s", want, out.String())
		}
	}
}

// TestExplainEffects: the explanation lists what the call does and where
// each effect came from: the data row, the verb, why it was judged local.
func TestExplainEffects(t *testing.T) {
	p, err := bundles.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	eng := engine.New(engine.Options{Home: "/home/dev"})
	if err := eng.Load(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	event := strings.Replace(explainEvent, "git push -f && cat .env", "kubectl --context kind-dev delete pod x && acmectl deploy", 1)
	var out bytes.Buffer
	if err := explainDecision(context.Background(), &out, eng, []byte(event)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"approvable: a person may approve it",
		`store.destroy of cluster resources by kubectl (from data row "kubectl delete", confidence high, local: a local cluster context)`,
		`publish of deployment by acmectl (from verb "deploy", confidence medium, approvable)`,
		"dev.ahp-opa.effect.publish",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("explanation lacks %q:\n%s", want, out.String())
		}
	}
}

// TestExplainEffectsFollowed: an effect whose command was reached through
// a workspace definition names that definition, so a deny of `make deploy`
// points at the Makefile target that made it.
func TestExplainEffectsFollowed(t *testing.T) {
	explain := explainIn(t, map[string]string{"Makefile": "deploy: build\n\tnpm publish\nbuild:\n\tgo build ./...\n"})
	for _, tc := range []struct{ command, want string }{
		{"make deploy", `publish of package registry by npm (from data row "npm publish", confidence high, approvable, via Makefile#deploy, text read from the repository (Makefile#deploy))`},
		{"npm publish", `publish of package registry by npm (from data row "npm publish", confidence high, approvable)`},
		// A command read after a variable prefix says so.
		{"$MAYBE npm publish", `publish of package registry by npm (from data row "npm publish", confidence high, approvable, read after the variable prefix $MAYBE)`},
	} {
		if out := explain(tc.command); !strings.Contains(out, tc.want+"\n") {
			t.Errorf("%s: explanation lacks %q:\n%s", tc.command, tc.want, out)
		}
	}
}

// TestExplainProvenance: a wrapper script the project committed (here in
// the style of Gradle's and Maven's wrappers: eval set -- of a decoded
// option string, exec of a variable) is judged by what it does, and the
// explanation says whose text each command was (issue 28).
func TestExplainProvenance(t *testing.T) {
	wrapper := "#!/bin/sh\nJAVACMD=${JAVA_HOME:-/usr}/bin/java\n" +
		"eval set -- $(printf '%s\\n' \"$JAVA_OPTS\" | xargs -n1 | sed 's~[^-[:alnum:]]~\\\\&~g' | tr '\\n' ' ') '\"$@\"'\n" +
		"exec \"$JAVACMD\" -jar wrapper.jar \"$@\"\n"
	out := explainIn(t, map[string]string{"buildw": wrapper})("./buildw check -x test")
	for _, want := range []string{
		"decision: no objection",
		"provenance: 1 command(s) typed by the agent, judged in full\n",
		"command(s) read from the repository (buildw): judged by their effects, not their style\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("explanation lacks %q:\n%s", want, out)
		}
	}
}

// explainIn writes files (name → content) into a new workspace and
// returns a function that explains a shell command run there with the
// built-in library.
func explainIn(t *testing.T, files map[string]string) func(command string) string {
	t.Helper()
	p, err := bundles.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	eng := engine.New(engine.Options{Home: "/home/dev"})
	if err := eng.Load(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(content), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return func(command string) string {
		event := strings.NewReplacer("/home/dev/repo", ws, "git push -f && cat .env", command).Replace(explainEvent)
		var out bytes.Buffer
		if err := explainDecision(context.Background(), &out, eng, []byte(event)); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
}

// TestTraceDecision: --explain=notes|fails|full print OPA's trace filtered
// as opa eval --explain does.
func TestTraceDecision(t *testing.T) {
	p, err := bundles.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	user := &bundles.Policy{Modules: map[string]*ast.Module{
		"note.rego": ast.MustParseModuleWithOpts("package ahp.tool.before.noted\ndeny contains \"never\" if {\n\ttrace(\"noted-here\")\n\tcount(input.tool.name) > 100\n}\n", ast.ParserOptions{RegoVersion: ast.RegoV1}),
	}}
	p, err = bundles.Merge(p, user)
	if err != nil {
		t.Fatal(err)
	}
	eng := engine.New(engine.Options{})
	if err := eng.Load(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mode      string
		want, not []string
	}{
		{"notes", []string{`Note "noted-here"`}, []string{"Fail "}},
		{"fails", []string{"Fail gt("}, []string{"Note "}},
		{"full", []string{"Enter ", `Note "noted-here"`, "Fail "}, nil},
	} {
		var out bytes.Buffer
		if err := traceDecision(context.Background(), &out, eng, []byte(explainEvent), tc.mode); err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s: trace lacks %q", tc.mode, w)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(out.String(), n) {
				t.Errorf("%s: trace has %q", tc.mode, n)
			}
		}
	}
}

// TestTraceMasksSecrets: a trace can quote the input (a note that prints
// the command), so a token in it must come out masked in every mode.
func TestTraceMasksSecrets(t *testing.T) {
	p := &bundles.Policy{Modules: map[string]*ast.Module{
		"note.rego": ast.MustParseModuleWithOpts("package ahp.tool.before.noted\ndeny contains \"never\" if {\n\ttrace(sprintf(\"cmd=%s\", [input.tool.input.command]))\n\tcount(input.tool.name) > 100\n}\n", ast.ParserOptions{RegoVersion: ast.RegoV1}),
	}}
	eng := engine.New(engine.Options{})
	if err := eng.Load(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	const token = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
	event := `{"id":"e1","source":"urn:t","type":"tool.before","time":"2026-01-02T03:04:05Z",` +
		`"session":{"id":"s","cwd":"/repo","workspaceRoots":["/repo"]},"call":{"id":"c"},` +
		`"tool":{"name":"Bash","kind":"shell","input":{"command":"GITHUB_TOKEN=` + token + ` git push"}}}`
	for _, mode := range []string{"notes", "full"} {
		var out bytes.Buffer
		if err := traceDecision(context.Background(), &out, eng, []byte(event), mode); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "cmd=GITHUB_TOKEN=") {
			t.Fatalf("%s: the note is missing from the trace:\n%s", mode, out.String())
		}
		if strings.Contains(out.String(), token) {
			t.Errorf("%s: trace quotes the token:\n%s", mode, out.String())
		}
	}
}

// TestExplainMasksSecretFields: eval --explain and its traces quote
// reasons, rule errors and notes built from the input; a secret-named
// field in them comes out masked, however the policy printed it.
func TestExplainMasksSecretFields(t *testing.T) {
	const policy = `package ahp.tool.before.quote
deny contains {"code": "com.example.quote", "reason": sprintf("input %v", [input.tool.input])} if input.tool.input.password
deny contains "big" if to_number(json.marshal(input.tool.input)) > 1
deny contains "never" if {
	trace(sprintf("env=%v", [input.tool.input.env]))
	count(input.tool.name) > 100
}
`
	p := &bundles.Policy{Modules: map[string]*ast.Module{
		"quote.rego": ast.MustParseModuleWithOpts(policy, ast.ParserOptions{RegoVersion: ast.RegoV1}),
	}}
	eng := engine.New(engine.Options{Shadow: []string{"com.example.quote"}})
	if err := eng.Load(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	event := strings.Replace(explainEvent, `{"command":"git push -f && cat .env"}`,
		`{"command":"psql","password":"correct horse","env":{"AWS_SECRET_ACCESS_KEY":"wJalrXUtnFEMI","AWS_REGION":"eu-west-1"}}`, 1)
	tests := []struct {
		name string
		run  func(*bytes.Buffer) error
		want []string
	}{
		{"explain", func(out *bytes.Buffer) error { return explainDecision(context.Background(), out, eng, []byte(event)) },
			[]string{`"password": "[REDACTED]"`, `\"password\":\"[REDACTED]\"`, `\"AWS_SECRET_ACCESS_KEY\":\"[REDACTED]\"`, `"eu-west-1"`}},
		{"trace", func(out *bytes.Buffer) error {
			return traceDecision(context.Background(), out, eng, []byte(event), "notes")
		}, []string{`env={"AWS_REGION": "eu-west-1", "AWS_SECRET_ACCESS_KEY": "[REDACTED]"}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := tt.run(&out); err != nil {
				t.Fatal(err)
			}
			text := out.String()
			for _, sec := range []string{"correct horse", "wJalrXUtnFEMI"} {
				if strings.Contains(text, sec) {
					t.Errorf("%q reached the output:\n%s", sec, text)
				}
			}
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("output lacks %s:\n%s", w, text)
				}
			}
		})
	}
}

// TestExplainSaysWhatWasComputed: eval --explain names the parts of
// input.ahp the policy made ahp-opa compute, as serving computes them.
func TestExplainSaysWhatWasComputed(t *testing.T) {
	tests := []struct {
		name, rule, want string
	}{
		{"raw event", `deny contains "x" if count(object.get(input, ["session", "workspaceRoots"], [])) > 5`,
			"input.ahp computed: none (what the policy can read; not computed: version, tool, workspace, shell, secrets, sensitive, writes, agent, session, effects)"},
		{"two parts", `deny contains "x" if { a := input.ahp; a.shell.programs.nope; a.writes }`,
			"input.ahp computed: shell, writes (what the policy can read; not computed: version, tool, workspace, secrets, sensitive, agent, session, effects)"},
		{"whole", `deny contains "x" if count(input.ahp) > 100`,
			"input.ahp computed: version, tool, workspace, shell, secrets, sensitive, writes, agent, session, effects (all: the policy can read each)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := ast.MustParseModuleWithOpts("package ahp.tool.before.p\n"+tt.rule, ast.ParserOptions{RegoVersion: ast.RegoV1})
			eng := engine.New(engine.Options{})
			if err := eng.Load(context.Background(), &bundles.Policy{Modules: map[string]*ast.Module{"p.rego": m}, Revision: "r"}); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := explainDecision(context.Background(), &out, eng, []byte(explainEvent)); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), tt.want+"\n") {
				t.Errorf("explanation lacks %q:\n%s", tt.want, out.String())
			}
		})
	}
}
