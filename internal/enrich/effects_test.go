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
			// A runner's target that could not be read speaks by its
			// name, as an unknown CLI's verbs do.
			name: "unread target", tool: "Bash", input: `{"command": "make deploy ENV=production"}`,
			want: `[{"effect": "publish", "target": "deployment", "program": "make", "command": 0, "source": {"kind": "target-verb", "row": "make deploy", "verb": "deploy"}, "confidence": "medium", "approvable": true}]`,
		},
		{
			name: "unread script target", tool: "Bash", input: `{"command": "npm --prefix web run release"}`,
			want: `[{"effect": "publish", "target": "release", "program": "npm", "command": 0, "source": {"kind": "target-verb", "row": "npm release", "verb": "release"}, "confidence": "medium", "approvable": true}]`,
		},
		{
			name: "unread bazel target", tool: "Bash", input: `{"command": "bazel run //deploy:push_prod"}`,
			want: `[{"effect": "publish", "target": "deployment", "program": "bazel", "command": 0, "source": {"kind": "target-verb", "row": "bazel //deploy:push_prod", "verb": "deploy"}, "confidence": "medium", "approvable": true}]`,
		},
		{
			// make's -d (debug) takes no value: deploy is the target.
			name: "unread target after a flag", tool: "Bash", input: `{"command": "make -d deploy"}`,
			want: `[{"effect": "publish", "target": "deployment", "program": "make", "command": 0, "source": {"kind": "target-verb", "row": "make deploy", "verb": "deploy"}, "confidence": "medium", "approvable": true}]`,
		},
		{name: "everyday target", tool: "Bash", input: `{"command": "make -C deploy test && npm run build && pnpm run lint"}`, want: `[]`},
		{name: "rehearsed target", tool: "Bash", input: `{"command": "npm run deploy:dry-run && make release-local"}`, want: `[]`},
		{
			name: "redirect outside", tool: "Bash", input: `{"command": "echo x > /etc/hosts"}`,
			want: `[{"effect": "fs.write-outside", "target": "/etc/hosts", "program": "echo", "command": 0, "source": {"kind": "redirect", "row": ">"}, "confidence": "high", "approvable": false}]`,
		},
		{
			name: "file tool outside", tool: "Write", input: `{"file_path": "/home/dev/notes/todo.txt", "content": "x"}`,
			want: `[{"effect": "fs.write-outside", "target": "/home/dev/notes/todo.txt", "program": "write", "command": -1, "source": {"kind": "tool", "row": "write"}, "confidence": "high", "approvable": false}]`,
		},
		{
			// The user's configuration: a change a person may approve.
			name: "file tool user configuration", tool: "Edit", input: `{"file_path": "/home/dev/.gitconfig", "old_string": "a", "new_string": "b"}`,
			want: `[{"effect": "fs.write-outside", "target": "/home/dev/.gitconfig", "program": "edit", "command": -1, "source": {"kind": "tool", "row": "edit"}, "confidence": "high", "approvable": false}, {"effect": "config.change", "target": "user configuration /home/dev/.gitconfig", "program": "edit", "command": -1, "source": {"kind": "tool", "row": "edit"}, "confidence": "high", "approvable": true}]`,
		},
		{
			// A shell redirect into it is left to the rules about what
			// the command writes.
			name: "redirect into user configuration", tool: "Bash", input: `{"command": "echo x >> ~/.gitconfig"}`,
			want: `[{"effect": "fs.write-outside", "target": "/home/dev/.gitconfig", "program": "echo", "command": 0, "source": {"kind": "redirect", "row": ">>"}, "confidence": "high", "approvable": false}]`,
		},
		{
			// An MCP tool nobody listed: the verb of its name speaks.
			name: "mcp tool verb", tool: "mcp__mongo__drop-collection", input: `{"collection": "users"}`,
			want: `[{"effect": "store.destroy", "target": "drop-collection", "program": "drop-collection", "command": -1, "source": {"kind": "tool-verb", "row": "drop-collection", "verb": "drop"}, "confidence": "medium", "approvable": false}]`,
		},
		{
			// A weak verb with an empty condition deletes every record.
			name: "mcp delete with an empty filter", tool: "mcp__mongo__delete-many", input: `{"collection": "sessions", "filter": {}}`,
			want: `[{"effect": "store.destroy", "target": "every record", "program": "delete-many", "command": -1, "source": {"kind": "tool-verb", "row": "delete-many", "verb": "delete"}, "confidence": "medium", "approvable": false}]`,
		},
		{
			name: "mcp delete with a filter", tool: "mcp__mongo__delete-many", input: `{"collection": "sessions", "filter": {"user": "x"}}`,
			want: `[{"effect": "store.destroy", "target": "delete-many", "program": "delete-many", "command": -1, "source": {"kind": "tool-verb", "row": "delete-many", "verb": "delete"}, "confidence": "low", "approvable": false}]`,
		},
		{name: "mcp tool read verb", tool: "mcp__vercel__list_deployments", input: `{"projectId": "p"}`, want: `[]`},
		{
			// A kubectl_VERB tool is its kubectl command, with the
			// local judgement of its context.
			name: "mcp kubectl tool local", tool: "mcp__kubernetes__kubectl_scale", input: `{"resourceType": "deployment", "name": "api", "replicas": 2, "context": "kind-dev"}`,
			want: `[{"effect": "remote.change", "target": "workload replicas", "program": "kubectl", "command": 0, "source": {"kind": "data", "row": "kubectl scale"}, "confidence": "high", "approvable": true, "local": {"why": "a local cluster context"}}]`,
		},
		{
			// A command-line field of a known CLI is that command.
			name: "mcp cli command", tool: "mcp__aws__call_aws", input: `{"cli_command": "aws s3 rb s3://prod --force"}`,
			want: `[{"effect": "store.destroy", "target": "object storage", "program": "aws", "command": 0, "source": {"kind": "data", "row": "aws s3 rb"}, "confidence": "high", "approvable": false}]`,
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
