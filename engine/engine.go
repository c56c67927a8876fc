// Package engine decides tool.before events with Rego. It compiles a policy
// into a snapshot (compiler, store and prepared query), keeps the active
// snapshot behind an atomic pointer so that a reload never blocks or
// disturbs a request in flight, and maps what the policy says to AHP
// effects.
package engine

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/bundles"
	"github.com/ahp-opa/ahp-opa/internal/enrich"
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
	// the input enrichment; empty means guessed from the session's
	// directories, else this process's home.
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
	Session(ctx context.Context, source, sessionID string) ast.Value
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
	s, err := Compile(ctx, p, CompileOptions{
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

// decide evaluates ev against the active snapshot. It also returns the
// input it built and the parts of input.ahp it holds, for the layers that
// describe the call afterwards without enriching it twice.
func (e *Engine) decide(ctx context.Context, ev *transport.Event) (Decision, ast.Value, enrich.Parts, error) {
	s := e.current.Load()
	if s == nil {
		return Decision{}, nil, 0, ErrNotReady
	}
	input, parts := e.input(ctx, s, ev)
	ctx, cancel := context.WithTimeout(ctx, e.opts.EvalTimeout)
	defer cancel()
	d, err := s.Decide(ctx, input)
	return d, input, parts, err
}

// input builds the policy input for s: the event's fields, and under
// input.ahp the parts s reads. An "ahp" key sent by the harness is
// always replaced. The event itself is not modified.
func (e *Engine) input(ctx context.Context, s *Snapshot, ev *transport.Event) (ast.Object, enrich.Parts) {
	opts := e.enrichOptions()
	opts.Effects = s.effects
	r := enrich.Enrich(ev, opts, s.needs)
	if s.needs&enrich.Session != 0 && e.opts.Facts != nil {
		if facts := e.opts.Facts.Session(ctx, ev.Source, ev.Session.ID); facts != nil {
			r.Object.Insert(ast.InternedTerm("session"), ast.NewTerm(facts))
		}
	}
	return enrich.Input(ev.Object, r.Object), r.Parts
}

// InputFor builds the policy input for an event as a decision on s builds
// it: input.ahp holds only the parts s reads (Snapshot.Needs), and the
// parts are returned, for `eval --explain` to say what was computed.
func (e *Engine) InputFor(ctx context.Context, s *Snapshot, ev *transport.Event) (ast.Object, enrich.Parts) {
	return e.input(ctx, s, ev)
}

// Input returns the whole policy input for an event with the engine's
// options, every part of input.ahp included but the session facts: what
// a policy can see of it.
func (e *Engine) Input(ev *transport.Event) ast.Object {
	return enrich.FullInput(ev, e.enrichOptions())
}

// enrichOptions are the engine's enrichment options, with the effects
// table of the active snapshot.
func (e *Engine) enrichOptions() enrich.Options {
	opts := enrich.Options{Home: e.opts.Home}
	if s := e.current.Load(); s != nil {
		opts.Effects = s.effects
	}
	return opts
}
