package engine

import (
	"context"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// Trace evaluates the decision query for input with OPA's tracer and
// returns every event, for `ahp-opa eval --explain=notes|fails|full|debug`,
// which filters them as `opa eval --explain` does. Like Explain it is slow
// and not for serving.
func (s *Snapshot) Trace(ctx context.Context, input ast.Value) ([]*topdown.Event, error) {
	buf := topdown.NewBufferTracer()
	if _, err := s.query.Eval(ctx, rego.EvalParsedInput(input), rego.EvalQueryTracer(buf)); err != nil {
		return *buf, &EvalError{Err: err}
	}
	return *buf, nil
}
