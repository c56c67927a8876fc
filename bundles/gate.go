package bundles

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/tester"
)

// testTimeout bounds one Rego test.
const testTimeout = 5 * time.Second

// maxReportedTests bounds the failing tests named in an error.
const maxReportedTests = 5

// runTests runs the policy's own Rego tests (Policy.Tests) against its
// modules and data; any failure or error refuses the policy with
// ErrTestsFailed. A policy without tests passes.
func runTests(ctx context.Context, p *Policy, caps *ast.Capabilities) error {
	if len(p.Tests) == 0 {
		return nil
	}
	modules := maps.Clone(p.Modules)
	maps.Copy(modules, p.Tests)
	data := p.Data
	if data == nil {
		data = map[string]any{}
	}
	c := ast.NewCompiler()
	if caps != nil {
		c = c.WithCapabilities(caps)
	}
	ch, err := tester.NewRunner().
		SetCompiler(c).
		SetStore(inmem.NewFromObject(deepCopy(data))).
		SetTimeout(testTimeout).
		RaiseBuiltinErrors(true).
		Run(ctx, modules)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrTestsFailed, err)
	}
	var failed []string
	total := 0
	for res := range ch {
		total++
		if res.Pass() || res.Skip {
			continue
		}
		what := "failed"
		if res.Error != nil {
			what = "error: " + res.Error.Error()
		}
		failed = append(failed, fmt.Sprintf("%s.%s (%s) %s", res.Package, res.Name, res.Location, what))
	}
	if len(failed) > 0 {
		shown := failed[:min(len(failed), maxReportedTests)]
		more := ""
		if len(failed) > len(shown) {
			more = fmt.Sprintf("; and %d more", len(failed)-len(shown))
		}
		return fmt.Errorf("%w: %d of %d: %s%s", ErrTestsFailed, len(failed), total, strings.Join(shown, "; "), more)
	}
	return nil
}
