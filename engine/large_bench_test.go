package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/ahp-opa/ahp-opa/bundles"
	"github.com/ahp-opa/ahp-opa/transport"
)

// largeRequest returns a hooks/intercept line for a tool whose input
// carries about n bytes of source code in field.
func largeRequest(tb testing.TB, tool string, input map[string]any) []byte {
	tb.Helper()
	b, err := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": "evt_1", "method": "hooks/intercept",
		"params": map[string]any{
			"protocolVersion": "draft",
			"capabilities":    map[string]any{"effects": []any{"deny"}},
			"event": map[string]any{
				"id": "evt_1", "source": "urn:uuid:bench", "type": "tool.before", "time": "2026-01-02T03:04:05Z",
				"session": map[string]any{"id": "s1", "cwd": "/home/dev/repo", "workspaceRoots": []any{"/home/dev/repo"}},
				"call":    map[string]any{"id": "c1"}, "path": "native",
				"tool": map[string]any{"name": tool, "origin": "native", "input": input},
			},
		},
	})
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// BenchmarkInterceptLarge is the cost-per-byte curve of a decision on
// large tool inputs with the built-in library: decode the line, validate,
// enrich (secret scan, shell parsing), evaluate, encode. The content has
// no secret, so every rule runs to the end.
func BenchmarkInterceptLarge(b *testing.B) {
	p, err := bundles.Builtin()
	if err != nil {
		b.Fatal(err)
	}
	e := New(Options{Home: "/home/dev"})
	if err := e.Load(context.Background(), p); err != nil {
		b.Fatal(err)
	}
	srv := &transport.Server{Interceptor: e}
	type bench struct {
		name string
		n    int
		line []byte
	}
	var cases []bench
	// Decimal sizes: a 4 MB content (4,000,000 bytes) fits, envelope
	// included, in the 4 MiB decided by default.
	for _, n := range []int{1e3, 1e4, 1e5, 1e6, 4e6} {
		text := bigText(n)[:n]
		cases = append(cases, bench{fmt.Sprintf("write-%dKB", n/1000), n,
			largeRequest(b, "Write", map[string]any{"file_path": "/home/dev/repo/src/big.js", "content": text})})
	}
	for _, n := range []int{1e3, 1e4, 1e5} {
		text := bigText(n)[:n]
		cases = append(cases, bench{fmt.Sprintf("heredoc-%dKB", n/1000), n,
			largeRequest(b, "Bash", map[string]any{"command": "cat > src/big.js <<'EOF'\n" + text + "\nEOF"})})
	}
	// An unquoted delimiter: the body is expanded, so the parser reads
	// its words.
	text := bigText(1e5)[:1e5]
	cases = append(cases, bench{"heredoc-unquoted-100KB", 1e5,
		largeRequest(b, "Bash", map[string]any{"command": "cat > src/big.js <<EOF\n" + text + "\nEOF"})})
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			b.SetBytes(int64(c.n))
			b.ReportAllocs()
			for b.Loop() {
				resp := srv.Handle(ctx, c.line)
				if resp == nil || resp.Error != nil || len(resp.Result.Effects) != 0 {
					b.Fatalf("unexpected response %+v", resp)
				}
			}
		})
	}
}
