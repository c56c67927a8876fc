package engine

import (
	"context"
	"testing"
)

// rulesNestedCommand is a long command with nesting of the kind agents send:
// shells inside substitutions inside pipelines, a loop and a here-string.
const rulesNestedCommand = `for d in src test docs; do (cd "$d" && bash -c "find . -name '*.go' -newer ../go.mod | xargs -r gofmt -l | tee -a ../fmt.log" && echo "$(git -C .. log -1 --format=%h -- "$d") $(wc -l < ../fmt.log)"); done && ` +
	`docker run --rm -v "$PWD":/src -w /src golang:1.22 sh -c 'go vet ./... && go test -count=1 ./... 2>&1 | tail -n 50' && ` +
	`curl -fsSL -o /tmp/release.json https://api.github.com/repos/org/app/releases/latest && jq -r '.tag_name' /tmp/release.json && ` +
	`git add -A && git commit -m "chore: fmt $(date +%F)" && git push origin HEAD:feature/fmt && gh pr create --fill <<< "body"`

// BenchmarkDecideCoverage measures decisions on the shapes the library's
// coverage work touched: a benign command, a long nested one, an MCP
// command tool and a release act.
func BenchmarkDecideCoverage(b *testing.B) {
	e := benchEngine(b)
	cases := []struct {
		name  string
		event map[string]any
	}{
		{"benign", benchEvent("Bash", map[string]any{"command": "git status && go test ./... 2>&1 | tail -20"})},
		{"nested", benchEvent("Bash", map[string]any{"command": rulesNestedCommand})},
		{"mcp-command", benchEvent("mcp__shell__run_command", map[string]any{"command": "npm ci && npm run build"})},
		{"git-push-main", benchEvent("Bash", map[string]any{"command": "git push origin main"})},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			req := request(b, c.event) // parsed once, as the transport does
			b.ReportAllocs()
			for b.Loop() {
				if _, err := verdict(e.Judge(ctx, req)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
