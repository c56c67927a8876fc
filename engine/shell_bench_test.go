package engine

import (
	"context"
	"strings"
	"testing"
)

// nestedCommand is a long command line that exercises the shell semantics
// the analysis follows: loops, functions, nested shells, xargs, find -exec,
// runners and here-documents, repeated to about 2 KB.
func nestedCommand() string {
	unit := []string{
		`for f in $(git ls-files '*.go'); do bash -c "gofmt -l $f | xargs -r -n1 echo"; done`,
		`find . -name '*.o' -exec rm -f {} + && find build -type d -empty -delete`,
		`check() { timeout 60 nice -n 10 flock /tmp/build.lock sh -c 'go vet ./... 2>&1 | tail -5'; }; check`,
		`printf '%s\n' pkg/a pkg/b | xargs -I{} sh -c 'go test ./{}/... -count=1'`,
		`ssh build 'cd repo && make -j4'`,
		`bash <<'EOF'
set -- lint test
for t in "$@"; do make "$t"; done
EOF`,
	}
	var parts []string
	for len(strings.Join(parts, "\n")) < 2048 {
		parts = append(parts, unit...)
	}
	return strings.Join(parts, "\n")
}

func BenchmarkDecideShellSemantics(b *testing.B) {
	e := benchEngine(b)
	cases := []struct {
		name  string
		event map[string]any
	}{
		{"benign", benchEvent("Bash", map[string]any{"command": "git status && go test ./... 2>&1 | tail -20"})},
		{"nested-2KB", benchEvent("Bash", map[string]any{"command": nestedCommand()})},
		{"powershell", benchEvent("powershell", map[string]any{"command": `Get-ChildItem -Path src -Recurse -Filter *.cs | ForEach-Object { Get-Content $_.FullName } | Select-String TODO; dotnet build -c Release`})},
		{"container", benchEvent("Bash", map[string]any{"command": `docker run --rm -v "$PWD":/src -w /src golang:1.22 sh -c 'go vet ./... && go test ./...'`})},
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
