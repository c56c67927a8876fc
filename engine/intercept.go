package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/internal/enrich"
	"github.com/ahp-opa/ahp-opa/internal/redact"
	"github.com/ahp-opa/ahp-opa/transport"
	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// Verdict is the answer to one intercept request together with what
// produced it, for the layers that record decisions.
type Verdict struct {
	// Result and Err are what the harness gets: exactly one is set, and
	// Err is always a *transport.Error.
	Result *transport.InterceptResult
	Err    *transport.Error
	// Decision holds the matches and the revision; Matches is empty when
	// evaluation failed.
	Decision Decision
	// Input is the policy input that was evaluated, nil when none was
	// built. It is only read.
	Input ast.Value
	// Enriched are the parts of input.ahp that Input holds: those the
	// policy reads.
	Enriched enrich.Parts
	Elapsed  time.Duration
}

// Intercept decides a hooks/intercept request: no objection, or one deny.
// It implements transport.Interceptor.
func (e *Engine) Intercept(ctx context.Context, req *transport.InterceptRequest) (*transport.InterceptResult, error) {
	v := e.Judge(ctx, req)
	if v.Err != nil {
		return nil, v.Err
	}
	return v.Result, nil
}

// TooLargeCode is the code of the deny given to a request larger than
// Options.MaxInputBytes, and TooLargePackage the package it names: no
// policy ran, so no Rego package made it.
const (
	TooLargeCode    = "dev.ahp-opa.input.too-large"
	TooLargePackage = "ahp-opa"
)

// Judge decides a request and returns the whole verdict.
func (e *Engine) Judge(ctx context.Context, req *transport.InterceptRequest) Verdict {
	start := time.Now()
	var (
		d        Decision
		input    ast.Value
		enriched enrich.Parts
		err      error
	)
	if req.Size > e.opts.MaxInputBytes {
		// Checking it would take time and memory without bound; a deny
		// says why, where an error would let a fail-open harness run it.
		d = e.tooLarge(req.Size)
	} else {
		d, input, enriched, err = e.decide(ctx, &req.Event)
	}
	v := Verdict{Decision: d, Input: input, Enriched: enriched}
	v.Result, v.Err = e.answer(ctx, req, d, err)
	v.Elapsed = time.Since(start)
	return v
}

// tooLarge is the decision for a request of size bytes, over the limit.
func (e *Engine) tooLarge(size int) Decision {
	d := Decision{Matches: []Match{{
		Package: TooLargePackage,
		Code:    TooLargeCode,
		Reason: fmt.Sprintf("Blocked: this tool call is %d bytes, more than the %d bytes ahp-opa checks, so it could not be checked. "+
			"Write large content in parts (create the file, then append to it in pieces), or ask the user to raise max_input_bytes.",
			size, e.opts.MaxInputBytes),
	}}}
	if s := e.current.Load(); s != nil {
		d.Revision = s.Revision
	}
	return d
}

func (e *Engine) answer(ctx context.Context, req *transport.InterceptRequest, d Decision, err error) (*transport.InterceptResult, *transport.Error) {
	if err == nil && !d.Denied() && len(d.Errors) == 0 && len(d.Shadowed) == 0 {
		// Most answers: nothing to report, and a logger With the event's
		// attributes would be made for nothing.
		if e.log.Enabled(ctx, slog.LevelDebug) {
			e.log.DebugContext(ctx, "no objection", "event", req.Event.ID, "tool", req.Event.Tool.Name, "revision", d.Revision)
		}
		return transport.NewResult(), nil
	}
	log := e.log.With("event", req.Event.ID, "tool", req.Event.Tool.Name)
	var evalErr *EvalError
	switch {
	case errors.Is(err, ErrNotReady):
		return nil, transport.Unavailable("no policy is active yet")
	case errors.Is(err, ErrTimeout):
		log.WarnContext(ctx, "policy evaluation timed out", "timeout", e.opts.EvalTimeout)
		return nil, transport.InternalError("policy evaluation exceeded its deadline")
	case errors.Is(err, context.Canceled):
		log.DebugContext(ctx, "request abandoned by its caller")
		return nil, transport.InternalError("request cancelled")
	case errors.As(err, &evalErr):
		e.report(ctx, log, d)
		// The error text may quote input values: keep it out of warn-level
		// logs, which are the ones that get shipped (and masked anyway).
		log.WarnContext(ctx, "policy evaluation failed", "revision", d.Revision)
		log.DebugContext(ctx, "policy evaluation error", "err", redact.Default().String(err.Error()))
		return nil, transport.InternalError("")
	case err != nil:
		log.ErrorContext(ctx, "deciding failed", "err", err)
		return nil, transport.InternalError("")
	}
	e.report(ctx, log, d)
	for _, m := range d.Matches {
		if m.Malformed != "" {
			log.WarnContext(ctx, "malformed deny from policy", "package", m.Package, "problem", m.Malformed)
		}
	}
	if !d.Denied() {
		log.DebugContext(ctx, "no objection", "revision", d.Revision)
		return transport.NewResult(), nil
	}
	log.InfoContext(ctx, "denied", "revision", d.Revision, "code", d.Matches[0].Code, "matches", len(d.Matches))
	// B-INT-6: a deny the harness will not enforce must not look like a
	// clean answer; an error makes the harness apply its failure policy.
	if !req.Advertises(ahp.EffectDeny) {
		return nil, transport.InvalidParams("the policy denies this call but the request does not advertise the deny effect")
	}
	return transport.NewResult(d.Effect()), nil
}
