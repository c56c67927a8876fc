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
}

// Engine evaluates events against the active snapshot.
type Engine struct {
	opts    Options
	log     *slog.Logger
	current atomic.Pointer[Snapshot]
}

// New returns an engine with no active policy.
func New(opts Options) *Engine {
	if opts.EvalTimeout <= 0 {
		opts.EvalTimeout = DefaultEvalTimeout
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
	s, err := Compile(ctx, p, e.opts.Capabilities)
	if err != nil {
		return err
	}
	e.Activate(s)
	return nil
}

// Activate makes s the active snapshot. Requests already evaluating finish
// on the snapshot they started with.
func (e *Engine) Activate(s *Snapshot) { e.current.Store(s) }

// Snapshot returns the active snapshot, or nil.
func (e *Engine) Snapshot() *Snapshot { return e.current.Load() }

// Decide evaluates a tool.before event (the decoded JSON object) against the
// active snapshot.
func (e *Engine) Decide(ctx context.Context, event map[string]any) (Decision, error) {
	s := e.current.Load()
	if s == nil {
		return Decision{}, ErrNotReady
	}
	input, err := e.Input(event)
	if err != nil {
		return Decision{}, fmt.Errorf("building policy input: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, e.opts.EvalTimeout)
	defer cancel()
	return s.Decide(ctx, input)
}
