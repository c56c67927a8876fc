package adapters

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// DefaultTimeout bounds one hook answer when Options.Timeout is zero,
// for `ahp-opa hook` and ahp-opa-hook alike: room for a cold start that
// compiles the built-in library, and below the 10 s `ahp-opa install`
// registers with an agent by default, so the hook answers first.
const DefaultTimeout = 9 * time.Second

// Decider decides a mapped tool.before event. The engine's in-process
// decider and the daemon client implement it; its error text becomes the
// user's reason, so it should say how to fix the problem and carry no
// secret or tool input.
type Decider interface {
	Decide(ctx context.Context, ev *Event) (Decision, error)
}

// Observer is implemented by deciders that also take observations
// (tool.after, session.*), e.g. for the audit log. Run answers those with
// "no decision" whatever Observe returns.
type Observer interface {
	Observe(ctx context.Context, ev *Event) error
}

// Options configure Run.
type Options struct {
	// FailOpen answers "no decision" instead of a deny when no decision can
	// be made. Off by default: most agents treat a failed hook as allow.
	FailOpen bool
	// Timeout bounds parse, decide and render; zero means DefaultTimeout.
	Timeout time.Duration
	// Now stamps events whose payload has no time; nil means time.Now.
	Now func() time.Time
	// Logger receives what went wrong in detail; nil discards.
	Logger *slog.Logger
	// Inline decides on the caller's goroutine. Set it only for a Decider
	// that returns soon after ctx is done, as the engine does: Run then
	// relies on it for Timeout. Otherwise Run waits on another goroutine
	// that it can abandon, and that hand-off costs a wake-up per call
	// (about 0.3 ms on a busy 2-core machine, more than the rest of Run).
	Inline bool
}

// internalError is the reason given for a panic. The panic value goes to
// the log only: like any internal detail it may quote the input.
const internalError = "ahp-opa: internal error while deciding (the log has the details); please report it, with the output of 'ahp-opa version'"

// Run answers one native payload of agent: parse, decide (tool.before
// only), render. It never fails and never panics: when no decision can be
// made (bad payload, decider error or panic, timeout) it answers with the
// agent's deny and a reason saying how to fix it, or with "no decision" and
// that reason on stderr when opts.FailOpen is set. Observations (post-tool,
// session start and end) always get "no decision", with the reason on
// stderr when the payload names one but cannot be mapped.
func Run(ctx context.Context, d Decider, agentName string, payload []byte, opts Options) (ans Answer) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if !Known(agentName) {
		// No agent to speak for: exit 2 with the reason on stderr blocks in
		// every agent (CONTRACTS.md R5) except Codex with empty stderr.
		msg := fmt.Sprintf("ahp-opa: %v %q: the hook command must name one of %v", ErrUnknownAgent, agentName, Names)
		log.Error("unknown agent", "agent", agentName)
		return Answer{Stderr: msg, Exit: 2}
	}
	fail := func(reason string) Answer {
		log.Warn("no decision could be made", "agent", agentName, "fail_open", opts.FailOpen, "reason", reason)
		if opts.FailOpen {
			a, _ := Pass(agentName, reason)
			return a
		}
		a, _ := Refuse(agentName, reason)
		return a
	}
	defer func() {
		if r := recover(); r != nil {
			log.Error("hook panicked", "agent", agentName, "panic", r)
			ans = fail(internalError)
		}
	}()
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}

	ev, hook, err := parse(agentName, payload, now())
	if err != nil {
		reason := fmt.Sprintf("ahp-opa: %v (is this hook registered for %s? 'ahp-opa install %s' writes the registration)", err, agentName, agentName)
		if hook != "" && !preTool(hook) {
			// The tool already ran or the session is starting or ending: a
			// deny undoes nothing, and Gemini CLI would show it to the
			// model in place of the tool's result.
			log.Warn("observation not recorded", "agent", agentName, "hook", hook, "reason", reason)
			return Answer{Stdout: noDecision, Stderr: oneLine(reason) + " (" + hook + " not recorded)"}
		}
		return fail(reason)
	}
	if ev.Type != ahp.EventToolBefore {
		if ev.Type != TypeNone {
			observe(ctx, d, ev, log)
		}
		return Answer{Stdout: noDecision}
	}

	type result struct {
		d   Decision
		err error
	}
	decide := func() (res result) {
		defer func() {
			if r := recover(); r != nil {
				log.Error("decider panicked", "agent", agentName, "panic", r)
				res = result{err: errors.New(strings.TrimPrefix(internalError, "ahp-opa: "))}
			}
		}()
		dec, err := d.Decide(ctx, ev)
		return result{dec, err}
	}
	var res result
	if opts.Inline {
		res = decide()
		if res.err != nil && ctx.Err() != nil {
			res.err = ctx.Err()
		}
	} else {
		done := make(chan result, 1)
		go func() { done <- decide() }()
		select {
		case res = <-done:
		case <-ctx.Done():
			res.err = ctx.Err()
		}
	}
	switch {
	case errors.Is(res.err, context.DeadlineExceeded):
		return fail(fmt.Sprintf("ahp-opa: no decision within %s (the policy is too slow or the machine is overloaded; 'ahp-opa eval --explain' shows what runs, and --timeout or hook.timeout raises the limit)", timeout))
	case res.err != nil:
		return fail("ahp-opa: " + res.err.Error())
	}
	a, _ := Render(agentName, ev.Hook, res.d)
	if res.d.Deny {
		log.Info("denied", "agent", agentName, "hook", ev.Hook, "code", res.d.Code)
	}
	return a
}

// observe hands an observation to d if it takes them. Whatever happens,
// even a panic, the observation is answered with "no decision": it is
// logged, not turned into a deny.
func observe(ctx context.Context, d Decider, ev *Event, log *slog.Logger) {
	o, ok := d.(Observer)
	if !ok {
		return
	}
	defer func() {
		if r := recover(); r != nil {
			log.Error("observer panicked", "agent", ev.Agent, "hook", ev.Hook, "panic", r)
		}
	}()
	if err := o.Observe(ctx, ev); err != nil {
		log.Warn("observation not recorded", "agent", ev.Agent, "hook", ev.Hook, "err", err)
	}
}

// ReadPayload reads a native payload, at most MaxPayloadBytes of it.
func ReadPayload(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxPayloadBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: reading stdin: %v", ErrPayload, err)
	}
	if len(data) > MaxPayloadBytes {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrPayload, MaxPayloadBytes)
	}
	return data, nil
}
