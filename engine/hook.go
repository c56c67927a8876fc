package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/ahp-opa/ahp-opa/adapters"
)

// HookDecider decides native-hook events (adapters.Event) with an engine:
// the same snapshot, input enrichment and deny order as hooks/intercept.
type HookDecider struct {
	Engine *Engine
	// Redact, if set, masks secrets in a deny reason before it reaches the
	// agent, as the audit layer does for AHP answers.
	Redact func(string) string
}

// Decide implements adapters.Decider. Its errors are the user's reason,
// so they say what to do and never quote the tool input.
func (h HookDecider) Decide(ctx context.Context, ev *adapters.Event) (adapters.Decision, error) {
	d, err := h.Engine.Decide(ctx, ev.Object)
	var evalErr *EvalError
	switch {
	case errors.Is(err, ErrNotReady):
		return adapters.Decision{}, errors.New("no policy is active yet (remote bundles not fetched; check the bundle service)")
	case errors.Is(err, ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return adapters.Decision{}, fmt.Errorf("policy evaluation exceeded its deadline of %s (raise eval_timeout, or find the slow rule with 'ahp-opa eval --explain')", h.Engine.opts.EvalTimeout)
	case errors.As(err, &evalErr):
		// The detail may quote input values: it goes to the debug log only.
		h.Engine.log.DebugContext(ctx, "policy evaluation error", "err", err)
		return adapters.Decision{}, fmt.Errorf("policy evaluation failed at revision %s (run the payload through 'ahp-opa eval --explain' with --log-level debug to see the error)", d.Revision)
	case err != nil:
		return adapters.Decision{}, fmt.Errorf("deciding failed: %w", err)
	}
	if !d.Denied() {
		return adapters.Decision{}, nil
	}
	first := d.Matches[0]
	reason := first.Reason
	if h.Redact != nil {
		reason = h.Redact(reason)
	}
	return adapters.Decision{Deny: true, Reason: reason, Code: first.Code}, nil
}
