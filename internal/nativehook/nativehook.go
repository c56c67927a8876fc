// Package nativehook decides the agents' native hooks through a
// transport.Server: the same Interceptor and Observer as hooks/intercept
// and hooks/observe, so that a native hook gets the same engine, audit
// records, metrics and limits as an AHP request. Decider serves the
// command hook ('ahp-opa hook AGENT') and Handler the HTTP hooks (POST
// /hooks/AGENT), mounted into transport.HTTP.
//
// It joins the two sides that must not know each other: adapters, which
// the small hook client links without OPA, and transport, which speaks
// AHP only.
package nativehook

import (
	"context"
	"errors"
	"fmt"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/internal/adapters"
	"github.com/ahp-opa/ahp-opa/transport"
	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// Decider decides native hook events (adapters.Event) through an
// Interceptor and records observations through an Observer. It implements
// adapters.Decider and adapters.Observer.
type Decider struct {
	Interceptor transport.Interceptor
	Observer    transport.Observer // nil drops observations
}

// Decide implements adapters.Decider. Its errors become the reason the
// agent shows, so they say what to do and quote nothing of the input.
func (d Decider) Decide(ctx context.Context, ev *adapters.Event) (adapters.Decision, error) {
	// The adapters build Go values (they link no OPA); the event is
	// parsed once, here, as a message body is on /ahp.
	event, err := toolEvent(ev)
	if err != nil {
		return adapters.Decision{}, err
	}
	req := &transport.InterceptRequest{ID: transport.StringID(event.ID), Event: event, Effects: []string{ahp.EffectDeny}, Size: ev.Size}
	res, err := d.Interceptor.Intercept(ctx, req)
	if err != nil {
		return adapters.Decision{}, hookError(err)
	}
	if res == nil || len(res.Effects) == 0 {
		return adapters.Decision{}, nil
	}
	first := res.Effects[0]
	ask, _ := first.Extensions[ahp.ExtensionApprovable].(bool)
	return adapters.Decision{Deny: true, Reason: first.Reason, Code: first.Code, Ask: ask}, nil
}

// toolEvent validates the mapped event as hooks/intercept would.
func toolEvent(ev *adapters.Event) (transport.Event, error) {
	v, err := ast.InterfaceToValue(ev.Object)
	obj, ok := v.(ast.Object)
	if err != nil || !ok {
		return transport.Event{}, fmt.Errorf("the %s payload maps to an event that cannot be evaluated (please report it, with the output of 'ahp-opa version')", ev.Agent)
	}
	event, err := transport.ParseToolEvent(obj)
	if err != nil {
		why := err.Error()
		var rpc *transport.Error
		if errors.As(err, &rpc) {
			if r, ok := rpc.Data.(transport.ReasonData); ok {
				why = r.Reason
			}
		}
		return event, fmt.Errorf("the %s payload maps to an invalid event: %s (please report it, with the output of 'ahp-opa version')", ev.Agent, why)
	}
	return event, nil
}

// hookError turns an intercept error into a reason a user can act on.
func hookError(err error) error {
	var rpc *transport.Error
	if !errors.As(err, &rpc) {
		// As on the AHP endpoint, an error that is not an *Error may hold
		// internals or input: it is not passed on.
		rpc = transport.InternalError("")
	}
	why := rpc.Message
	if r, ok := rpc.Data.(transport.ReasonData); ok && r.Reason != "" {
		why = r.Reason
	}
	switch rpc.Code {
	case ahp.CodeBackendUnavailable:
		return fmt.Errorf("no decision: %s (the server log and /readyz say more)", why)
	case ahp.CodeBackendInternalError:
		return fmt.Errorf("policy evaluation failed: %s (run the payload through 'ahp-opa eval --explain' to see why; a slow policy needs a larger eval_timeout)", why)
	}
	return fmt.Errorf("no decision: %s (error %d)", why, rpc.Code)
}

// Observe implements adapters.Observer: the event reaches the Observer as
// a valid hooks/observe notification would.
func (d Decider) Observe(ctx context.Context, ev *adapters.Event) error {
	if d.Observer == nil {
		return nil
	}
	event, err := transport.EventOfMap(ev.Object)
	if err != nil {
		return fmt.Errorf("the %s payload maps to an event that cannot be recorded", ev.Agent)
	}
	return d.Observer.Observe(ctx, &transport.Observation{Method: ahp.MethodObserve, Event: &event})
}
