package engine

import (
	"context"
	"testing"
)

// BenchmarkDecideRuleError measures the path taken when a user rule fails
// next to the built-in library: the combined query, then each deny rule
// set on its own.
func BenchmarkDecideRuleError(b *testing.B) {
	for _, tc := range []struct{ name, x string }{{"ok", "5"}, {"failing", "abc"}} {
		b.Run(tc.name, func(b *testing.B) {
			e := New(Options{Home: "/home/dev"})
			if err := e.Load(context.Background(), withBuiltin(b, map[string]string{"rules/team.rego": teamRule})); err != nil {
				b.Fatal(err)
			}
			req := request(b, event("Bash", map[string]any{"command": "git push --force origin main", "x": tc.x}))
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				d, err := verdict(e.Judge(ctx, req))
				if err != nil || !d.Denied() {
					b.Fatalf("%+v %v", d, err)
				}
			}
		})
	}
}
