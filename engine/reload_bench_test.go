package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/bundles"
)

// hundredRules returns a policy of n deny rules of the kind a team writes
// (an equality on the tool, a test on the command), generation gen.
func hundredRules(n, gen int) string {
	var b strings.Builder
	b.WriteString("package ahp.tool.before.many\n\n")
	for i := range n {
		fmt.Fprintf(&b, "deny contains {\"reason\": \"rule %d of generation %d\", \"code\": \"com.example.r%d\"} if {\n"+
			"\tinput.tool.name == \"T%d\"\n\tstartswith(input.tool.input.command, \"x%d\")\n}\n\n", i, gen, i, i, i)
	}
	return b.String()
}

func parsedPolicy(b *testing.B, src string, gen int) *bundles.Policy {
	b.Helper()
	m, err := ast.ParseModuleWithOpts("many.rego", src, ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		b.Fatal(err)
	}
	return &bundles.Policy{Modules: map[string]*ast.Module{"many.rego": m}, Revision: fmt.Sprint("gen-", gen)}
}

// BenchmarkReload100 measures one reload of a 100-rule bundle: compile
// (the snapshot, its failure-domain queries and the input.ahp parts it
// reads) and swap; "parse+compile+swap" parses the source first.
func BenchmarkReload100(b *testing.B) {
	ctx := context.Background()
	e := New(Options{})
	b.Run("compile+swap", func(b *testing.B) {
		p := parsedPolicy(b, hundredRules(100, 0), 0)
		b.ReportAllocs()
		for b.Loop() {
			if err := e.Load(ctx, p); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parse+compile+swap", func(b *testing.B) {
		src := hundredRules(100, 0)
		b.ReportAllocs()
		gen := 0
		for b.Loop() {
			gen++
			if err := e.Load(ctx, parsedPolicy(b, src, gen)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkDecideWhileReloading decides distinct events on a 100-rule
// policy, on a quiet engine and while another goroutine reloads that
// policy without pause. A reload compiles off to the side and swaps one
// pointer, so no request waits for it: the latencies under reload grow
// only by the CPU the compiler takes (two cores here), and the longest
// stays far below one compile.
func BenchmarkDecideWhileReloading(b *testing.B) {
	ctx := context.Background()
	for _, reloading := range []bool{false, true} {
		name := "quiet"
		if reloading {
			name = "reloading"
		}
		b.Run(name, func(b *testing.B) {
			e := New(Options{})
			if err := e.Load(ctx, parsedPolicy(b, hundredRules(100, 0), 0)); err != nil {
				b.Fatal(err)
			}
			stop := make(chan struct{})
			var wg sync.WaitGroup
			reloads := 0
			if reloading {
				pols := []*bundles.Policy{parsedPolicy(b, hundredRules(100, 1), 1), parsedPolicy(b, hundredRules(100, 2), 2)}
				wg.Go(func() {
					for {
						select {
						case <-stop:
							return
						default:
						}
						if err := e.Load(ctx, pols[reloads%2]); err != nil {
							panic(err)
						}
						reloads++
					}
				})
			}
			var lat []time.Duration
			i := 0
			for b.Loop() {
				ev := event(fmt.Sprint("T", i%100), map[string]any{"command": fmt.Sprintf("x%d --run %d", i%100, i)})
				t0 := time.Now()
				d, err := verdict(e.Judge(ctx, request(b, ev)))
				lat = append(lat, time.Since(t0))
				if err != nil || !d.Denied() {
					b.Fatalf("decision %+v, %v", d, err)
				}
				i++
			}
			close(stop)
			wg.Wait()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
			b.ReportMetric(float64(lat[len(lat)-1].Microseconds()), "max-µs")
			b.ReportMetric(float64(reloads), "reloads")
		})
	}
}
