// Package engine decides tool.before events with Rego. It compiles a policy
// into a snapshot (compiler, store and prepared query), keeps the active
// snapshot behind an atomic pointer so that a reload never blocks or
// disturbs a request in flight, and maps what the policy says to AHP
// effects.
package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/bundles"
	"github.com/ahp-opa/ahp-opa/transport"
)

// DefaultEvalTimeout bounds one evaluation. Harnesses give a backend 100 ms
// to 30 s (B-HTTP-8); a policy that needs more than this is broken.
const DefaultEvalTimeout = 250 * time.Millisecond

// ErrNotReady is returned while no policy has been activated.
var ErrNotReady = errors.New("no policy is active")

// ErrTimeout is returned when evaluation exceeds its deadline.
var ErrTimeout = errors.New("policy evaluation exceeded its deadline")

// Options configure an Engine.
type Options struct {
	// EvalTimeout bounds one evaluation; zero means DefaultEvalTimeout.
	EvalTimeout time.Duration
	// Capabilities limits the builtins policies may call; nil means
	// DefaultCapabilities.
	Capabilities *ast.Capabilities
	Logger       *slog.Logger
	// Home is the user's home directory, used to expand ~ and $HOME in
	// the input enrichment; see InputOptions.Home.
	Home string
	// Facts, when set, supplies input.ahp.session: what the event's session
	// has done so far.
	Facts SessionFacts
	// OnRuleError is what a deny rule that fails to evaluate means for the
	// event; "" means RuleErrorDeny.
	OnRuleError OnRuleError
	// Shadow lists deny codes and packages in shadow mode; see
	// CompileOptions.Shadow.
	Shadow []string
	// Counter, when set, counts rule errors and shadowed denies.
	Counter RuleCounter
	// MaxInputBytes is the largest request message the policy judges;
	// a larger one is denied as too large to check (TooLargeCode). Zero
	// means transport.DefaultMaxInputBytes.
	MaxInputBytes int
}

// RuleCounter counts what the rule layer reports, by rule: the failing
// deny rule set, or the code (else package) of a shadowed deny.
type RuleCounter interface {
	RuleError(rule string)
	ShadowDeny(rule string)
}

// SessionFacts returns the facts of a session as an AST object, or nil
// when there are none. The value is only read.
type SessionFacts interface {
	Session(source, sessionID string) ast.Value
}

// Engine evaluates events against the active snapshot.
type Engine struct {
	opts     Options
	log      *slog.Logger
	current  atomic.Pointer[Snapshot]
	reported errorLog
}

// New returns an engine with no active policy.
func New(opts Options) *Engine {
	if opts.EvalTimeout <= 0 {
		opts.EvalTimeout = DefaultEvalTimeout
	}
	if opts.MaxInputBytes <= 0 {
		opts.MaxInputBytes = transport.DefaultMaxInputBytes
	}
	if opts.Capabilities == nil {
		opts.Capabilities = DefaultCapabilities()
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Engine{opts: opts, log: log}
}

// Load compiles p and, if that succeeds, makes it the active policy. On
// failure the previous policy stays active.
func (e *Engine) Load(ctx context.Context, p *bundles.Policy) error {
	s, err := CompileWith(ctx, p, CompileOptions{
		Capabilities: e.opts.Capabilities,
		OnRuleError:  e.opts.OnRuleError,
		Shadow:       e.opts.Shadow,
	})
	if err != nil {
		return err
	}
	e.Activate(s)
	return nil
}

// Activate makes s the active snapshot. Requests already evaluating finish
// on the snapshot they started with.
func (e *Engine) Activate(s *Snapshot) {
	e.current.Store(s)
	e.reported.reset() // a new policy's errors are news again
}

// Snapshot returns the active snapshot, or nil.
func (e *Engine) Snapshot() *Snapshot { return e.current.Load() }

// Decide evaluates a tool.before event (the decoded JSON object) against the
// active snapshot.
func (e *Engine) Decide(ctx context.Context, event map[string]any) (Decision, error) {
	d, _, err := e.decide(ctx, event)
	return d, err
}

// decide also returns the input it built, for the layers that describe the
// call afterwards without enriching it twice.
func (e *Engine) decide(ctx context.Context, event map[string]any) (Decision, ast.Value, error) {
	s := e.current.Load()
	if s == nil {
		return Decision{}, nil, ErrNotReady
	}
	input, err := e.Input(event)
	if err != nil {
		return Decision{}, nil, fmt.Errorf("building policy input: %w", err)
	}
	e.addSession(event, input)
	ctx, cancel := context.WithTimeout(ctx, e.opts.EvalTimeout)
	defer cancel()
	d, err := s.Decide(ctx, input)
	return d, input, err
}

// addSession puts the session's facts at input.ahp.session.
func (e *Engine) addSession(event map[string]any, input ast.Value) {
	if e.opts.Facts == nil {
		return
	}
	session, _ := event["session"].(map[string]any)
	id, _ := session["id"].(string)
	source, _ := event["source"].(string)
	facts := e.opts.Facts.Session(source, id)
	if facts == nil {
		return
	}
	obj, _ := input.(ast.Object)
	if obj == nil {
		return
	}
	if t := obj.Get(ast.InternedTerm(InputKey)); t != nil {
		if ahp, ok := t.Value.(ast.Object); ok {
			ahp.Insert(ast.InternedTerm("session"), ast.NewTerm(facts))
		}
	}
}
