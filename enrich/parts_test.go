package enrich

import (
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
)

func TestNeeded(t *testing.T) {
	tests := []struct {
		name, body string
		want       Parts
	}{
		{"raw event only", `deny contains "x" if input.tool.name == "Bash"`, 0},
		{"one key", `deny contains "x" if input.ahp.shell.programs.rm`, Shell},
		{"two keys", `deny contains "x" if { input.ahp.tool.family == "shell"; input.ahp.writes }`, Tool | Writes},
		{"session", `deny contains "x" if input.ahp.session.reads > 3`, Session},
		{"unknown key", `deny contains "x" if input.ahp.nonesuch`, 0},
		{"whole ahp", `deny contains "x" if { a := input.ahp; a.shell }`, All},
		{"computed key", `deny contains "x" if { some k; input.ahp[k] }`, All},
		{"computed top key", `deny contains "x" if { some k; input[k].shell }`, All},
		{"whole input", `deny contains "x" if { x := input; x.ahp.shell }`, All},
		{"input as argument", `deny contains "x" if { walk(input, [p, v]); v == "rm" }`, All},
		{"nested in another ref", `deny contains "x" if data.lists[input.ahp.agent]`, Agent},
		{"import alias", "import input.ahp.shell as sh\ndeny contains \"x\" if sh.programs.rm", Shell},
		{"import of ahp", "import input.ahp\ndeny contains \"x\" if ahp.writes", Writes},
		{"function argument", "f(x) if x.programs.rm\ndeny contains \"x\" if f(input.ahp.shell)", Shell},
		{"with", `deny contains "x" if { input.ahp.secrets with input.ahp.tool as {} }`, Secrets | Tool},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := ast.MustParseModuleWithOpts("package p\n"+tt.body, ast.ParserOptions{RegoVersion: ast.RegoV1})
			c := ast.NewCompiler()
			c.Compile(map[string]*ast.Module{"p.rego": m})
			if c.Failed() {
				t.Fatal(c.Errors)
			}
			if got := Needed(c.Modules); got != tt.want {
				t.Errorf("Needed = %b, want %b", got, tt.want)
			}
		})
	}
}

// TestPartsSelect: only the parts asked for are in input.ahp, and each is
// the same as in the whole enrichment.
func TestPartsSelect(t *testing.T) {
	ev := toolEvent(map[string]any{"name": "Bash", "input": map[string]any{
		"command": "echo ghp_abcdefghijklmnopqrstuvwxyz0123456789 > ~/.ssh/config"}})
	ev["source"] = "urn:ahp-opa:agent:codex"
	evObj := ast.MustInterfaceToValue(ev).(ast.Object)
	all := Enrich(evObj, Options{Home: "/home/dev"}, All)
	if all.Shell == nil || !all.Sensitive || !all.Writes || all.Agent != "codex" {
		t.Fatalf("whole enrichment = %+v", all)
	}
	for key, part := range partKeys {
		if part == Session {
			continue // filled by the engine
		}
		t.Run(key, func(t *testing.T) {
			one := Enrich(evObj, Options{Home: "/home/dev"}, part)
			if got := one.Object.Len(); got != 1 {
				t.Errorf("input.ahp has %d keys, want 1: %v", got, one.Object)
			}
			k := ast.StringTerm(key)
			if got, want := one.Object.Get(k), all.Object.Get(k); got == nil || !got.Equal(want) {
				t.Errorf("input.ahp.%s = %v, want %v", key, got, want)
			}
		})
	}
	if none := Enrich(evObj, Options{Home: "/home/dev"}, 0); none.Object.Len() != 0 || none.Shell != nil {
		t.Errorf("no parts: %+v", none)
	}
}
