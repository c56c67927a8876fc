// Package service builds the one decision pipeline of ahp-opa from a
// Config: the engine and the reloader that feeds it, the auditor with its
// session facts, the metrics, and, when configured, the canary and the
// decision-log shipper, composed as transport layers behind one Server.
// serve, hook, the decision daemon, eval and replay all build it here;
// each command only parses flags and calls New.
//
// A Service has one lifecycle: New starts it (or, with Options.Lazy, only
// its long-lived parts), Close stops everything it started. With
// Options.Watch it follows its policy sources and its configuration file:
// a valid edit rebuilds the decision stack and swaps it in atomically; a
// broken one keeps the last good configuration and is reported.
package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ahp-opa/ahp-opa/bundles"
	"github.com/ahp-opa/ahp-opa/engine"
	"github.com/ahp-opa/ahp-opa/internal/audit"
	"github.com/ahp-opa/ahp-opa/internal/config"
	"github.com/ahp-opa/ahp-opa/internal/metrics"
	"github.com/ahp-opa/ahp-opa/internal/rollout"
	"github.com/ahp-opa/ahp-opa/internal/state"
	"github.com/ahp-opa/ahp-opa/transport"
)

// Options say how a Service runs. The zero value decides in the
// foreground, once, and writes nothing: what eval needs.
type Options struct {
	Logger *slog.Logger // nil discards
	// Watch follows the policy sources, and Source's configuration file
	// when it names one, reloading on change.
	Watch bool
	// Restart, when set, is called with the keys of a valid edit of the
	// configuration file that changed settings needing a restart (after
	// the live ones were applied), for a process that can restart itself.
	Restart func(keys []string)
	// Follow makes Watch hold whatever the configuration's watch says:
	// a process no one restarts (the decision daemon) must never keep
	// answering with files edited since it started.
	Follow bool
	// WaitRemote makes the first start wait for remote bundles, for a
	// caller with no readiness probe to offer instead.
	WaitRemote bool
	// Lazy defers loading the policy to the first decision (or Start); a
	// start that fails is tried again by the next one.
	Lazy bool
	// PerCall marks a process that lives for one call (ahp-opa hook),
	// whose stderr is the agent's log: the start-up note saying which
	// policies answer is logged at debug level there, not at every call.
	PerCall bool
	// Metrics counts decisions, reloads and sinks in Service.Metrics.
	Metrics bool
	// AuditLog writes audit.file records; without it the auditor still
	// masks reasons and keeps session facts, but writes nothing.
	AuditLog bool
	// DecisionLogs ships decisions to decision_logs.service.
	DecisionLogs bool
	// Canary evaluates the canary policy beside the live one.
	Canary bool
	// Facts replaces the session-facts store (replay rebuilds facts from
	// a log); nil makes a fresh one.
	Facts *audit.Facts
	// Source is where the configuration came from. With Watch and a
	// Source.Path, the service follows that file.
	Source config.Source
}

// PolicyError marks a policy that did not load, as opposed to a
// configuration the other parts refused, so that a caller can say how to
// check the policy.
type PolicyError struct{ Err error }

func (e *PolicyError) Error() string { return e.Err.Error() }
func (e *PolicyError) Unwrap() error { return e.Err }

// ErrClosed is returned by Start once the service is closed.
var ErrClosed = errors.New("the decision service is stopping")

// Service is one running decision pipeline.
type Service struct {
	// Server answers AHP messages with the current decision stack; it
	// stays the same value across reloads, so bindings hold it.
	Server *transport.Server
	// Metrics is nil without Options.Metrics.
	Metrics *metrics.Metrics
	// Audit records decisions and keeps session facts; it outlives
	// reloads.
	Audit *audit.Auditor

	opts   Options
	log    *slog.Logger
	ctx    context.Context // the service's life; Close cancels it
	cancel context.CancelFunc
	facts  *audit.Facts
	ship   *audit.Shipper
	file   *audit.File // the audit log, closed after the auditor
	// closeState closes the shared session state store (state.store),
	// after the auditor, whose last updates it writes.
	closeState func()
	wg         sync.WaitGroup // the configuration watch

	cur atomic.Pointer[stack] // nil until started

	// gate is held shared by every request and notification under way,
	// and exclusively by Close once, so that none reaches a stopped
	// auditor; stopped is set then.
	gate    sync.RWMutex
	stopped bool

	// reloadMu makes starts and configuration reloads one at a time, so
	// neither builds from a configuration the other is replacing.
	reloadMu sync.Mutex
	mu       sync.Mutex // guards what follows
	cfg      config.Config
	loaded   config.Config // the file as last read well: what edits are compared with
	starting chan struct{} // closed when the start under way ends
	startErr error
	closed   bool

	reloadFail  atomic.Pointer[failure]
	canaryOnce  sync.Once
	canaryTotal canaryCounts // of canaries retired by reloads
}

type failure struct {
	msg   string
	since time.Time
}

// New starts a service for cfg. Unless opts.Lazy, the policy is loaded
// before New returns, and an error of type *PolicyError says it did not
// load. On error everything started is stopped again.
func New(ctx context.Context, cfg config.Config, opts Options) (s *Service, err error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s = &Service{opts: opts, log: log, cfg: cfg, loaded: cfg}
	// Which policies answer is the first thing a user needs to know: a
	// --policy without --with-builtin drops the whole library.
	msg, warn := cfg.PolicyNotice()
	level, library := slog.LevelInfo, "on"
	if warn {
		level, library = slog.LevelWarn, "off"
	}
	if opts.PerCall {
		level = slog.LevelDebug
	}
	log.Log(ctx, level, msg, "library", library)
	s.ctx, s.cancel = context.WithCancel(ctx)
	defer func() {
		if err != nil {
			s.Close()
			s = nil
		}
	}()
	if opts.Metrics {
		s.Metrics = metrics.New()
	}
	s.facts = opts.Facts
	if s.facts == nil {
		// One store: the auditor writes session facts, the engine reads them.
		s.facts = audit.NewFacts(cfg.Audit.SessionTTL)
	}
	if s.Audit, s.file, err = startAudit(s.ctx, cfg.Audit, opts.AuditLog, s.facts, log); err != nil {
		return s, fmt.Errorf("audit: %w", err)
	}
	if s.closeState, err = state.Attach(cfg.State, cfg.Audit, s.Audit, s.Engine, s.Metrics, log); err != nil {
		return s, err
	}
	if opts.DecisionLogs {
		if s.ship, err = startShipper(cfg, log); err != nil {
			return s, err
		}
		if s.ship != nil {
			s.Audit.ShipTo(s.ship)
		}
	}
	s.track()
	s.Server = &transport.Server{
		Interceptor: gatedInterceptor{s, metrics.Interceptor(s.Audit.Interceptor(judge{s}), s.Metrics)},
		Observer:    gatedObserver{s, metrics.Observer(s.Audit.Observer(), s.Metrics)},
		Logger:      log,
	}
	if !opts.Lazy {
		if err := s.Start(ctx); err != nil {
			return s, err
		}
	}
	if opts.Watch && (cfg.Watch || opts.Follow) && opts.Source.Path != "" {
		s.wg.Go(s.watchConfig)
	}
	return s, nil
}

// track exports what the metrics read at scrape time, following whichever
// stack is current.
func (s *Service) track() {
	met := s.Metrics
	if met == nil {
		return
	}
	met.TrackPolicy(func() (string, time.Time, bool) {
		eng := s.Engine()
		if eng == nil {
			return "", time.Time{}, false
		}
		snap := eng.Snapshot()
		if snap == nil {
			return "", time.Time{}, false
		}
		return snap.Revision, snap.Built, true
	})
	aud, facts := s.Audit, s.facts
	met.TrackAudit(func() metrics.AuditCounts {
		st, fs := aud.Stats(), facts.Stats()
		return metrics.AuditCounts{WriteFailures: st.WriteFailures, Dropped: st.Dropped, Retries: st.Retries,
			SessionsEvicted: fs.SessionsEvicted, FactItemsEvicted: fs.ItemsEvicted}
	})
}

// Start loads the policy if it is not loaded yet, and returns once it is,
// once it failed (a later Start tries again), or when ctx ends while it is
// still compiling; the start goes on then, for the next caller.
func (s *Service) Start(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	if s.cur.Load() != nil {
		s.mu.Unlock()
		return nil
	}
	if s.starting == nil {
		done := make(chan struct{})
		s.starting, s.startErr = done, nil
		go func() {
			defer close(done)
			err := s.startStack()
			s.mu.Lock()
			s.starting, s.startErr = nil, err
			s.mu.Unlock()
		}()
	}
	done := s.starting
	s.mu.Unlock()
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("the policy is still loading: %w", ctx.Err())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.cur.Load() != nil:
		return nil
	case s.closed:
		return ErrClosed
	case s.startErr != nil:
		return s.startErr
	}
	return errors.New("the policy is not loaded yet")
}

// startStack builds the first stack from the configuration in force.
func (s *Service) startStack() error {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	s.mu.Lock()
	cfg := s.cfg
	s.mu.Unlock()
	st, err := s.newStack(cfg, s.opts.WaitRemote)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		st.stop() // the service stopped while this compiled
		return ErrClosed
	}
	s.cur.Store(st)
	return nil
}

// Engine returns the engine of the current stack, nil before the first
// start. A reload of the configuration replaces it.
func (s *Service) Engine() *engine.Engine {
	if st := s.cur.Load(); st != nil {
		return st.engine
	}
	return nil
}

// Reloader returns the reloader of the current stack, nil before the
// first start.
func (s *Service) Reloader() *bundles.Reloader {
	if st := s.cur.Load(); st != nil {
		return st.reloader
	}
	return nil
}

// Config returns the configuration in force: settings that need a
// restart keep the values they started with.
func (s *Service) Config() config.Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg
}

// Ready reports whether requests are decided: a policy is active.
func (s *Service) Ready() bool {
	eng := s.Engine()
	return eng != nil && eng.Snapshot() != nil
}

// Health names the problems that leave decisions working, such as a
// failing audit log or a configuration edit that was refused; fatal is
// set when one stops decisions (audit.required).
func (s *Service) Health() (problem string, fatal bool) {
	var problems []string
	if p, f := s.Audit.Health(); p != "" {
		problems, fatal = append(problems, p), f
	}
	if f := s.reloadFail.Load(); f != nil {
		problems = append(problems, fmt.Sprintf("configuration reload failing since %s (the last good configuration is in force): %s",
			f.since.UTC().Format(time.RFC3339), f.msg))
	}
	return strings.Join(problems, "; "), fatal
}

// Close stops everything the service started: the canary first (its last
// records still get written), then the auditor (what is queued gets
// written), the shipper (and shipped), and the reloader last. It does not
// wait for a policy still compiling: that start stops its own stack when
// it ends.
func (s *Service) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.gate.Lock() // the requests under way end first
	s.stopped = true
	s.gate.Unlock()
	s.cancel()
	s.wg.Wait() // the watch has stopped: no reload swaps a stack in now
	st := s.cur.Swap(nil)
	if st != nil {
		st.retire()
		st.stopCanary()
	}
	if s.Audit != nil {
		s.Audit.Close()
	}
	if s.closeState != nil {
		s.closeState()
	}
	if s.ship != nil {
		s.ship.Close()
	}
	if s.file != nil {
		if err := s.file.Close(); err != nil {
			s.log.Error("closing the audit log", "err", err)
		}
	}
	if st != nil {
		st.stopReloader()
	}
}

// acquire returns the current stack, held against retirement until
// release; it starts the service first if need be.
func (s *Service) acquire(ctx context.Context) (*stack, error) {
	for {
		st := s.cur.Load()
		if st == nil {
			if err := s.Start(ctx); err != nil {
				return nil, err
			}
			continue
		}
		st.inUse.RLock()
		if !st.retired {
			return st, nil
		}
		// Swapped out between the load and the lock: take the new one.
		st.inUse.RUnlock()
	}
}

// gatedInterceptor refuses requests once the service is closed, and keeps
// Close waiting for those under way.
type gatedInterceptor struct {
	s    *Service
	next transport.Interceptor
}

func (g gatedInterceptor) Intercept(ctx context.Context, req *transport.InterceptRequest) (*transport.InterceptResult, error) {
	g.s.gate.RLock()
	defer g.s.gate.RUnlock()
	if g.s.stopped {
		return nil, transport.Unavailable(ErrClosed.Error())
	}
	return g.next.Intercept(ctx, req)
}

// gatedObserver drops notifications once the service is closed.
type gatedObserver struct {
	s    *Service
	next transport.Observer
}

func (g gatedObserver) Observe(ctx context.Context, o *transport.Observation) error {
	g.s.gate.RLock()
	defer g.s.gate.RUnlock()
	if g.s.stopped {
		return nil
	}
	return g.next.Observe(ctx, o)
}

// judge decides through the current stack; it is what the auditor wraps.
type judge struct{ s *Service }

func (j judge) Judge(ctx context.Context, req *transport.InterceptRequest) engine.Verdict {
	st, err := j.s.acquire(ctx)
	if err != nil {
		return engine.Verdict{Err: transport.Unavailable(err.Error())}
	}
	defer st.inUse.RUnlock()
	return st.judge.Judge(ctx, req)
}

// canaryCounts adds up the counters of the canaries reloads swapped out,
// so that the exported counters stay monotonic: a canary swapped out is
// counted live while it drains its queue, then by its final figures.
type canaryCounts struct {
	mu       sync.Mutex
	done     rollout.CanaryStats // of canaries stopped by reloads
	retiring []*rollout.Canary   // swapped out, finishing what they queued
}

func addCanary(total *rollout.CanaryStats, st rollout.CanaryStats) {
	total.Evaluated += st.Evaluated
	total.Disagreements += st.Disagreements
	total.Dropped += st.Dropped
	total.Errors += st.Errors
}

// canaryCounts returns the counters of every canary this service ran.
func (s *Service) canaryCounts() rollout.CanaryStats {
	c := &s.canaryTotal
	c.mu.Lock()
	defer c.mu.Unlock()
	total := c.done
	for _, r := range c.retiring {
		addCanary(&total, r.Stats())
	}
	if cur := s.cur.Load(); cur != nil && cur.canary != nil {
		addCanary(&total, cur.canary.Stats())
	}
	return total
}

// swapStack makes st current and returns the stack it replaced, whose
// canary stays counted until stopRetired.
func (s *Service) swapStack(st *stack) *stack {
	c := &s.canaryTotal
	c.mu.Lock()
	defer c.mu.Unlock()
	old := s.cur.Swap(st)
	if old != nil && old.canary != nil {
		c.retiring = append(c.retiring, old.canary)
	}
	return old
}

// stopRetired stops a stack swapped out, once its decisions under way
// end, and keeps its canary's final counts.
func (s *Service) stopRetired(old *stack) {
	old.retire()
	old.stop()
	if old.canary == nil {
		return
	}
	c := &s.canaryTotal
	c.mu.Lock()
	defer c.mu.Unlock()
	c.retiring = slices.DeleteFunc(c.retiring, func(r *rollout.Canary) bool { return r == old.canary })
	addCanary(&c.done, old.canary.Stats())
}
