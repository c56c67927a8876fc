package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ahp-opa/ahp-opa/bundles"
	"github.com/ahp-opa/ahp-opa/internal/enrich"
)

// benchEngine loads the built-in library, as `serve` does without --policy.
func benchEngine(b *testing.B) *Engine {
	b.Helper()
	p, err := bundles.Builtin()
	if err != nil {
		b.Fatal(err)
	}
	// A deadline far away: a stall on a loaded machine must not fail the
	// benchmark.
	e := New(Options{Home: "/home/dev", EvalTimeout: time.Minute})
	if err := e.Load(context.Background(), p); err != nil {
		b.Fatal(err)
	}
	return e
}

func benchEvent(name string, input map[string]any) map[string]any {
	return map[string]any{
		"id": "evt_1", "source": "urn:uuid:bench", "type": "tool.before", "time": "2026-01-02T03:04:05Z",
		"session": map[string]any{"id": "s1", "cwd": "/home/dev/repo", "workspaceRoots": []any{"/home/dev/repo"}},
		"call":    map[string]any{"id": "c1"}, "path": "native",
		"tool": map[string]any{"name": name, "origin": "native", "input": input},
	}
}

// longCommand is a 4 KB command line of the kind agents send: a chain of
// builds, greps and git calls.
func longCommand() string {
	parts := []string{"cd /home/dev/repo"}
	for i := 0; len(strings.Join(parts, " && ")) < 4096; i++ {
		parts = append(parts,
			`go test ./pkg/... -run 'TestThing|TestOther' -count=1 2>&1 | tee build.log`,
			`grep -rn "TODO(dev)" src/ | head -20`,
			`git add -A && git commit -m "wip: step"`)
	}
	return strings.Join(parts, " && ")[:4096]
}

// interpreterCommand is a benign one-liner that hands code to python.
const interpreterCommand = `python3 -c "import json; print(json.load(open('package.json'))['version'])"`

// nestedInterpreterCommand is a 4 KB command whose shell runs python
// on a here-document, whose code runs node, whose code runs a shell.
func nestedInterpreterCommand() string {
	body := strings.Repeat("import os, subprocess\nsubprocess.run(['node', '-e', \"require('child_process').execSync('make -C build test')\"], check=True)\nprint(open(os.path.join('src', 'main.py')).read())\n", 23)
	return "cd /home/dev/repo && bash <<'SH'\npython3 - <<'EOF'\n" + body + "EOF\nSH"
}

func BenchmarkDecide(b *testing.B) {
	e := benchEngine(b)
	cases := []struct {
		name  string
		event map[string]any
	}{
		{"shell", benchEvent("Bash", map[string]any{"command": "git status && go test ./... 2>&1 | tail -20"})},
		{"shell-denied", benchEvent("Bash", map[string]any{"command": "sudo rm -rf ~/"})},
		{"file", benchEvent("Read", map[string]any{"file_path": "/home/dev/repo/main.go"})},
		{"fetch", benchEvent("WebFetch", map[string]any{"url": "https://docs.example.com/guide", "prompt": "summarise"})},
		{"shell-4KB", benchEvent("Bash", map[string]any{"command": longCommand()})},
		{"interpreter", benchEvent("Bash", map[string]any{"command": interpreterCommand})},
		{"interpreter-nested", benchEvent("Bash", map[string]any{"command": nestedInterpreterCommand()})},
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

func BenchmarkInput(b *testing.B) {
	cases := map[string]map[string]any{
		"shell":     benchEvent("Bash", map[string]any{"command": "git status && go test ./... 2>&1 | tail -20"}),
		"shell-4KB": benchEvent("Bash", map[string]any{"command": longCommand()}),
	}
	for name, ev := range cases {
		b.Run(name, func(b *testing.B) {
			event := typed(b, ev)
			b.ReportAllocs()
			for b.Loop() {
				enrich.FullInput(event, enrich.Options{Home: "/home/dev"})
			}
		})
	}
}
