package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-opa/ahp-opa/internal/testkit"
)

// TestFollowedDefinitions runs commands that run a definition of the
// workspace through the engine: what the definition runs is judged as if
// typed, the reason names the chain, and everyday definitions pass.
func TestFollowedDefinitions(t *testing.T) {
	t.Parallel()
	e := builtinEngine(t)
	dir := t.TempDir()
	for name, content := range map[string]string{
		"package.json":       `{"scripts":{"build":"tsc","release":"npm run build && npm publish","ship":"make deploy"}}`,
		"Makefile":           "deploy:\n\t@git push --force origin main\ntest:\n\tgo test ./...\n",
		"scripts/release.sh": "#!/bin/sh\nrm -rf \"$HOME\"\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		command, want, reason string
	}{
		{"npm run release", "dev.ahp-opa.publish.package", "npm run release → npm publish"},
		{"npm run ship", "dev.ahp-opa.git.force-push", ""},
		{"./scripts/release.sh", "dev.ahp-opa.fs.rm-recursive-critical", "./scripts/release.sh → rm -rf"},
		{"npm run build", "", ""},
		{"make test", "", ""},
		{"make nonesuch", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.command, func(t *testing.T) {
			ev := testkit.ToolEvent(map[string]any{"name": "Bash", "origin": "native", "input": cmd(tt.command)})
			ev["session"] = map[string]any{"id": "s", "cwd": dir, "workspaceRoots": []any{dir}}
			d, err := judge(t, e, ev)
			if err != nil {
				t.Fatal(err)
			}
			var codes, reasons []string
			for _, m := range d.Matches {
				codes, reasons = append(codes, m.Code), append(reasons, m.Reason)
			}
			switch {
			case tt.want == "" && len(codes) > 0:
				t.Errorf("denied by %v, want allowed", codes)
			case tt.want != "" && !contains(codes, tt.want):
				t.Errorf("codes = %v, want %s among them", codes, tt.want)
			case tt.reason != "" && !strings.Contains(strings.Join(reasons, "\n"), tt.reason):
				t.Errorf("reasons %q do not name the chain %q", reasons, tt.reason)
			}
		})
	}
}
