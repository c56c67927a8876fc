package transport

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/internal/adapters"
	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// HookPathPrefix starts the path of the native hook endpoints: POST
// /hooks/AGENT, one per agent in adapters.HTTPAgents.
const HookPathPrefix = "/hooks/"

// HookDecider decides native hook events (adapters.Event) through the same
// Interceptor and Observer as hooks/intercept and hooks/observe, so that a
// native hook gets the same engine, audit records, metrics and limits as an
// AHP request. It implements adapters.Decider and adapters.Observer.
type HookDecider struct {
	Interceptor Interceptor
	Observer    Observer // nil drops observations
}

// Decide implements adapters.Decider. Its errors become the reason the
// agent shows, so they say what to do and quote nothing of the input.
func (d HookDecider) Decide(ctx context.Context, ev *adapters.Event) (adapters.Decision, error) {
	// The adapters build Go values (they link no OPA); the event is turned
	// into AST values once, here, as a message body is on /ahp.
	v, err := ast.InterfaceToValue(ev.Object)
	obj, ok := v.(ast.Object)
	if err != nil || !ok {
		return adapters.Decision{}, fmt.Errorf("the %s payload maps to an event that cannot be evaluated (please report it, with the output of 'ahp-opa version')", ev.Agent)
	}
	event, perr := parseToolEvent(obj)
	if perr != nil {
		return adapters.Decision{}, fmt.Errorf("the %s payload maps to an invalid event: %s (please report it, with the output of 'ahp-opa version')", ev.Agent, perr.Data.(ReasonData).Reason)
	}
	req := &InterceptRequest{ID: StringID(event.ID), Event: event, Effects: []string{ahp.EffectDeny}, Size: ev.Size}
	res, err := d.Interceptor.Intercept(ctx, req)
	if err != nil {
		return adapters.Decision{}, hookError(err)
	}
	if res == nil || len(res.Effects) == 0 {
		return adapters.Decision{}, nil
	}
	first := res.Effects[0]
	return adapters.Decision{Deny: true, Reason: first.Reason, Code: first.Code}, nil
}

// hookError turns an intercept error into a reason a user can act on.
func hookError(err error) error {
	var rpc *Error
	if !errors.As(err, &rpc) {
		// As on the AHP endpoint, an error that is not an *Error may hold
		// internals or input: it is not passed on.
		rpc = InternalError("")
	}
	why := rpc.Message
	if r, ok := rpc.Data.(ReasonData); ok && r.Reason != "" {
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
func (d HookDecider) Observe(ctx context.Context, ev *adapters.Event) error {
	if d.Observer == nil {
		return nil
	}
	v, err := ast.InterfaceToValue(ev.Object)
	obj, ok := v.(ast.Object)
	if err != nil || !ok {
		return fmt.Errorf("the %s payload maps to an event that cannot be recorded", ev.Agent)
	}
	event := EventOf(obj)
	d.Observer.Observe(ctx, &Observation{Method: ahp.MethodObserve, Event: &event})
	return nil
}

// serveHook answers one native hook POST for agent with the agent's own
// answer. The checks are those of the AHP endpoint, in the same order,
// except that a payload that cannot be decided gets the agent's fail-closed
// deny at 200: the agents read any other status as "go ahead".
func (h *HTTP) serveHook(w http.ResponseWriter, r *http.Request, agent string) {
	ex := &exchange{h: h, w: w, r: r}
	if !h.authorized(r) {
		h.unauthorized(w, r)
		ex.record(http.StatusUnauthorized, 0)
		return
	}
	if r.Method != http.MethodPost {
		methodNotAllowed(w, "POST")
		ex.record(http.StatusMethodNotAllowed, 0)
		return
	}
	if !adapters.HasHTTPHook(agent) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, "ahp-opa: no HTTP hook for %q; HTTP hooks are %s%s (the other agents use the command hook 'ahp-opa hook AGENT')\n",
			agent, HookPathPrefix, strings.Join(adapters.HTTPAgents, ", "+HookPathPrefix))
		ex.record(http.StatusNotFound, 0)
		return
	}
	if !isJSON(r.Header.Get("Content-Type")) {
		ex.reject(http.StatusUnsupportedMediaType)
		return
	}
	opts := *h.Hooks
	if opts.Logger == nil {
		opts.Logger = h.log
	}
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			h.log.Error("http: panic while answering a hook", "agent", agent, "panic", p)
			if !ex.written {
				ex.sendHook(refuseHook(agent, "ahp-opa: internal error while answering the hook; please report it", opts))
			}
		}
	}()
	tooLarge := func() {
		h.log.Warn("http: hook payload over max_body_bytes", "agent", agent, "remote", r.RemoteAddr, "limit", h.maxBody)
		ex.sendHook(refuseHook(agent, fmt.Sprintf("ahp-opa: this hook payload is larger than the %d bytes the server reads, so it could not be checked (raise max_body_bytes)", h.maxBody), opts))
	}
	if r.ContentLength > h.maxBody {
		tooLarge()
		return
	}
	data, err := readBody(w, r, h.maxBody, nil)
	if err != nil {
		var over *http.MaxBytesError
		if errors.As(err, &over) {
			tooLarge()
		} else {
			h.log.Debug("http: reading hook body failed", "remote", r.RemoteAddr, "err", err)
			ex.reject(http.StatusBadRequest)
		}
		return
	}
	dec := HookDecider{Interceptor: h.srv.Interceptor, Observer: h.srv.Observer}
	ex.sendHook(adapters.Run(r.Context(), dec, agent, data, opts))
}

// refuseHook is the agent's answer when no decision can be made: its deny,
// or with FailOpen its "no decision".
func refuseHook(agent, reason string, opts adapters.Options) adapters.Answer {
	f := adapters.Refuse
	if opts.FailOpen {
		f = adapters.Pass
	}
	ans, _ := f(agent, reason) // agent is one of adapters.HTTPAgents
	return ans
}

// sendHook writes a native answer as the 2xx body the agent reads; what a
// command hook would print on stderr goes to the log.
func (ex *exchange) sendHook(ans adapters.Answer) {
	if ans.Stderr != "" {
		ex.h.log.Warn("http: hook answered without a decision", "path", ex.r.URL.Path, "reason", ans.Stderr)
	}
	status := http.StatusOK
	if ans.Exit != 0 || len(ans.Stdout) == 0 {
		// Only an agent adapters does not know gets here, and routing
		// keeps those out.
		status = http.StatusInternalServerError
	}
	hdr := ex.w.Header()
	hdr.Set("Content-Type", "application/json")
	hdr.Set("Content-Length", strconv.Itoa(len(ans.Stdout)))
	hdr.Set("Cache-Control", "no-store")
	ex.send(status, 0, ans.Stdout)
}
