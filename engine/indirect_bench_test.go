package engine

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkDecideIndirect measures what following indirection costs a
// decision: a benign command and a long nested one (which follow
// nothing), and make deploy resolved through a Makefile of a real
// workspace, whose parse is cached after the first decision.
func BenchmarkDecideIndirect(b *testing.B) {
	e := benchEngine(b)
	dir := b.TempDir()
	makefile := "IMAGE ?= ghcr.io/acme/api\nTAG := $(shell git rev-parse --short HEAD)\n.PHONY: build test deploy\n" +
		"build:\n\tgo build -o bin/api ./cmd/api\ntest:\n\tgo test ./...\n" +
		"deploy: build test\n\t@docker build -t $(IMAGE):$(TAG) .\n\t-kubectl set image deploy/api api=$(IMAGE):$(TAG) --context kind-dev\n"
	if err := os.WriteFile(filepath.Join(dir, "Makefile"), []byte(makefile), 0o644); err != nil {
		b.Fatal(err)
	}
	inWorkspace := func(ev map[string]any) map[string]any {
		ev["session"] = map[string]any{"id": "s1", "cwd": dir, "workspaceRoots": []any{dir}}
		return ev
	}
	cases := []struct {
		name  string
		event map[string]any
	}{
		{"benign", benchEvent("Bash", map[string]any{"command": "git status && go test ./... 2>&1 | tail -20"})},
		{"nested-4KB", benchEvent("Bash", map[string]any{"command": nestedInterpreterCommand()})},
		{"make-deploy", inWorkspace(benchEvent("Bash", map[string]any{"command": "make deploy"}))},
		{"make-deploy-no-makefile", benchEvent("Bash", map[string]any{"command": "make deploy"})},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			req := request(b, c.event)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := verdict(e.Judge(ctx, req)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
