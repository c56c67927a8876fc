package enrich

import (
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/transport"
)

// TestEffectsPart: input.ahp.effects says what a call does, where it came
// from, and why it was judged local; only when the Effects part is asked.
func TestEffectsPart(t *testing.T) {
	for _, tc := range []struct {
		name, tool, input string
		want              string // the effects array, as Rego text
	}{
		{
			name: "data row", tool: "Bash", input: `{"command": "kubectl -n prod delete deploy web"}`,
			want: `[{"effect": "store.destroy", "target": "cluster resources", "program": "kubectl", "command": 0, "source": {"kind": "data", "row": "kubectl delete"}, "confidence": "high", "approvable": false}]`,
		},
		{
			name: "local", tool: "Bash", input: `{"command": "cd x && docker push localhost:5000/app"}`,
			want: `[{"effect": "publish", "target": "image registry", "program": "docker", "command": 1, "source": {"kind": "data", "row": "docker push"}, "confidence": "high", "approvable": true, "local": {"why": "a registry on this machine"}}]`,
		},
		{
			name: "verb", tool: "Bash", input: `{"command": "acmectl deploy"}`,
			want: `[{"effect": "publish", "target": "deployment", "program": "acmectl", "command": 0, "source": {"kind": "verb", "verb": "deploy"}, "confidence": "medium", "approvable": true}]`,
		},
		{
			name: "redirect outside", tool: "Bash", input: `{"command": "echo x > /etc/hosts"}`,
			want: `[{"effect": "fs.write-outside", "target": "/etc/hosts", "program": "echo", "command": 0, "source": {"kind": "redirect", "row": ">"}, "confidence": "high", "approvable": false}]`,
		},
		{
			name: "file tool outside", tool: "Write", input: `{"file_path": "/home/dev/.bashrc", "content": "x"}`,
			want: `[{"effect": "fs.write-outside", "target": "/home/dev/.bashrc", "program": "write", "command": -1, "source": {"kind": "tool", "row": "write"}, "confidence": "high", "approvable": false}]`,
		},
		{
			name: "mcp tool", tool: "mcp__warehouse__drop_table", input: `{"table": "users"}`,
			want: `[{"effect": "store.destroy", "target": "table", "program": "drop_table", "command": -1, "source": {"kind": "tool", "row": "drop_table"}, "confidence": "high", "approvable": false}]`,
		},
		{
			// A tool that acts as a shell command has the command's effects.
			name: "mcp tool as a command", tool: "mcp__github__merge_pull_request", input: `{"owner": "acme", "repo": "api", "pullNumber": 3}`,
			want: `[{"effect": "remote.change", "target": "pull request", "program": "gh", "command": 0, "source": {"kind": "data", "row": "gh pr merge"}, "confidence": "high", "approvable": true}]`,
		},
		{name: "everyday", tool: "Bash", input: `{"command": "go test ./... > /tmp/out.log"}`, want: `[]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := ast.MustParseTerm(`{"session": {"cwd": "/home/dev/repo", "workspaceRoots": ["/home/dev/repo"]}, "tool": {"name": "` + tc.tool + `", "input": ` + tc.input + `}}`).Value.(ast.Object)
			ev := transport.EventOf(obj)
			r := Enrich(&ev, Options{Home: "/home/dev"}, Effects)
			got := r.Object.Get(keyEffects)
			if want := ast.MustParseTerm(tc.want); got == nil || !got.Equal(want) {
				t.Errorf("effects:\n got %v\nwant %v", got, want)
			}
			if r.Object.Get(keyShell) != nil {
				t.Error("input.ahp.shell built though only the effects were asked for")
			}
		})
	}
	ev := transport.EventOf(ast.MustParseTerm(`{"tool": {"name": "Bash", "input": {"command": "kubectl delete ns prod"}}}`).Value.(ast.Object))
	if r := Enrich(&ev, Options{}, Shell); r.Object.Get(keyEffects) != nil {
		t.Error("input.ahp.effects computed though no policy reads it")
	}
}
