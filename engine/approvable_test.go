package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/bundles"
	"github.com/ahp-opa/ahp-opa/transport"
	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

const approvableRules = `package ahp.tool.before.team

deny contains {"code": "com.example.ship", "reason": "shipping needs a person", "approvable": true} if input.tool.input.command == "ship"

# METADATA
# custom:
#   code: com.example.tag
#   approvable: true
deny contains {"code": "com.example.tag", "reason": "tagging needs a person"} if input.tool.input.command == "tag"

deny contains {"code": "com.example.ship", "reason": "shipping needs a person", "approvable": true} if input.tool.input.command == "both"
deny contains {"code": "com.example.never", "reason": "never"} if input.tool.input.command == "both"
`

func bashEvent(command string) *transport.Event {
	obj := ast.MustInterfaceToValue(map[string]any{
		"id": "e1", "type": "tool.before",
		"session": map[string]any{"id": "s", "cwd": "/home/dev/repo", "workspaceRoots": []any{"/home/dev/repo"}},
		"tool":    map[string]any{"name": "Bash", "input": map[string]any{"command": command}},
	}).(ast.Object)
	ev := transport.EventOf(obj)
	return &ev
}

// TestApprovableDecision: a deny is approvable when every match is, from
// the element or from METADATA; the effect then says so, in an extension
// and in its reason. One forbidding match keeps it a plain deny.
func TestApprovableDecision(t *testing.T) {
	e := New(Options{Home: "/home/dev", EvalTimeout: testEvalTimeout})
	if err := e.Load(context.Background(), withBuiltin(t, map[string]string{"team.rego": approvableRules})); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		command    string
		approvable bool
	}{
		{"ship", true},
		{"tag", true},
		{"both", false},
		{"acmectl deploy --env production", true},   // effect.publish, from the verb
		{"acmectl cluster destroy prod", false},     // effect.store-destroy forbids
		{"terraform apply -auto-approve", true},     // effect.remote-change
		{"git push origin main", true},              // git.push-protected, METADATA
		{"git push origin main && rm -rf /", false}, // a forbidding rule joins
	} {
		d, _, _, err := e.decide(context.Background(), bashEvent(tc.command))
		if err != nil {
			t.Fatal(err)
		}
		if !d.Denied() {
			t.Fatalf("%s: not denied", tc.command)
		}
		if d.Approvable() != tc.approvable {
			t.Errorf("%s: approvable %v, want %v (%+v)", tc.command, d.Approvable(), tc.approvable, d.Matches)
		}
		eff := d.Effect()
		flag, _ := eff.Extensions[ahp.ExtensionApprovable].(bool)
		if flag != tc.approvable || strings.HasSuffix(eff.Reason, ApprovalNote) != tc.approvable {
			t.Errorf("%s: effect extension %v, reason %q", tc.command, flag, eff.Reason)
		}
	}
}

// TestTeamEffects: a team's rows in data.ahp_opa.config.effects reach
// input.ahp.effects with a policy load, and a broken row fails the load.
func TestTeamEffects(t *testing.T) {
	lib, err := bundles.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]any{"programs": map[string]any{
		"acmectl": map[string]any{"rows": []any{map[string]any{"path": "db wipe", "effect": "store.destroy", "target": "acme database"}}},
	}}
	p, err := bundles.WithLibraryConfig(lib, map[string]any{"effects": rows})
	if err != nil {
		t.Fatal(err)
	}
	e := New(Options{Home: "/home/dev", EvalTimeout: testEvalTimeout})
	if err := e.Load(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	d, _, _, err := e.decide(context.Background(), bashEvent("acmectl db wipe"))
	if err != nil {
		t.Fatal(err)
	}
	if !d.Denied() || d.Matches[0].Code != "dev.ahp-opa.effect.store-destroy" || !strings.Contains(d.Matches[0].Reason, "from the data row acmectl db wipe") {
		t.Errorf("team row: %+v", d.Matches)
	}

	bad, err := bundles.WithLibraryConfig(lib, map[string]any{"effects": map[string]any{"programs": map[string]any{
		"acmectl": map[string]any{"rows": []any{map[string]any{"path": "x", "effect": "store.destory"}}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Load(context.Background(), bad); err == nil || !strings.Contains(err.Error(), `unknown effect "store.destory"`) {
		t.Errorf("a broken team row loaded: %v", err)
	}
}
