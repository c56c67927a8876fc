package main

import (
	"bytes"
	"context"
	"encoding/json"
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
