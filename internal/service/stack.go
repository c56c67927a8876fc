package service

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/ahp-opa/ahp-opa/bundles"
	"github.com/ahp-opa/ahp-opa/bundles/remote"
	"github.com/ahp-opa/ahp-opa/engine"
	"github.com/ahp-opa/ahp-opa/internal/audit"
	"github.com/ahp-opa/ahp-opa/internal/config"
	"github.com/ahp-opa/ahp-opa/internal/metrics"
	"github.com/ahp-opa/ahp-opa/internal/rollout"
)

// BundleWait bounds how long a start waits for remote bundles
// (Options.WaitRemote), and a reload for those of its new configuration.
const BundleWait = 30 * time.Second

// watchAfter is how long a serving process runs before it watches its
// policy files (bundles.Options.WatchAfter) and its configuration file:
// longer than a per_event start, which would pay for the watch at exit and
// never use it.
const watchAfter = time.Second

// stack is the part of the pipeline that a configuration edit rebuilds:
// the engine with its reloader and the canary. The auditor, the facts and
// the metrics stay across stacks.
type stack struct {
	engine   *engine.Engine
	reloader *bundles.Reloader
	judge    audit.Judge

	canary   *rollout.Canary
	canaryRL *bundles.Reloader

	// inUse is held shared by every decision under way, and exclusively
	// to retire the stack once it was swapped out.
	inUse   sync.RWMutex
	retired bool
}

// newStack loads the policy of cfg and starts the layers that decide
// with it. wait makes it wait for remote bundles.
func (s *Service) newStack(cfg config.Config, wait bool) (st *stack, err error) {
	var onReload func(bundles.Event)
	var counter engine.RuleCounter
	if s.Metrics != nil {
		onReload, counter = reloadMetrics(s.Metrics), s.Metrics
	}
	if s.opts.Follow {
		cfg.Watch = true
	}
	eng, rl, err := startEngine(s.ctx, cfg, s.log, engineOptions{
		watch: s.opts.Watch, wait: wait, onReload: onReload, facts: s.facts, counter: counter,
	})
	if err != nil {
		return nil, &PolicyError{err}
	}
	st = &stack{engine: eng, reloader: rl, judge: eng}
	if s.opts.Canary && len(cfg.Canary) > 0 {
		if err := s.startCanary(st, cfg); err != nil {
			st.stop()
			return nil, err
		}
	}
	return st, nil
}

// startCanary loads the canary policy with its own reloader (it reloads
// like the live one) and starts the canary that compares it with the live
// policy, recording disagreements through the auditor. The canary policy
// is the canary paths, with the built-in library and its configuration
// when the live policy has them; remote bundles stay with the live policy.
func (s *Service) startCanary(st *stack, cfg config.Config) error {
	ccfg := cfg
	ccfg.Policy, ccfg.Bundles = cfg.Canary, nil
	clog := s.log.With("policy", "canary")
	eng, rl, err := startEngine(s.ctx, ccfg, clog, engineOptions{watch: s.opts.Watch})
	if err != nil {
		return fmt.Errorf("canary policy: %w", err)
	}
	c := rollout.NewCanary(rollout.EngineCandidate(eng, cfg.EvalTimeout), s.Audit, rollout.CanaryOptions{Logger: clog})
	clog.Info("canary policy active", "revision", rl.Status().Revision)
	st.canary, st.canaryRL, st.judge = c, rl, c.Wrap(st.engine)
	if s.Metrics != nil {
		s.canaryOnce.Do(func() {
			s.Metrics.TrackCanary(func() metrics.CanaryCounts {
				c := s.canaryCounts()
				return metrics.CanaryCounts{Evaluated: c.Evaluated, Disagreements: c.Disagreements,
					Dropped: c.Dropped, Errors: c.Errors}
			})
		})
	}
	return nil
}

// retire waits for the decisions under way on st, then marks it so that
// none starts on it again.
func (st *stack) retire() {
	st.inUse.Lock()
	st.retired = true
	st.inUse.Unlock()
}

// stopCanary and stopReloader stop what the stack has; a stack built
// by a test may lack the reloaders.
func (st *stack) stopCanary() {
	if st.canary != nil {
		st.canary.Close()
	}
	if st.canaryRL != nil {
		st.canaryRL.Stop()
	}
}

func (st *stack) stopReloader() {
	if st.reloader != nil {
		st.reloader.Stop()
	}
}

// stop stops a stack that never served.
func (st *stack) stop() {
	st.stopCanary()
	st.stopReloader()
}

// engineOptions are what the callers of startEngine vary.
type engineOptions struct {
	watch    bool                // follow the policy sources
	wait     bool                // wait for remote bundles
	onReload func(bundles.Event) // sees every reload attempt
	facts    engine.SessionFacts // supplies input.ahp.session
	counter  engine.RuleCounter  // counts rule errors and shadowed denies
}

// startEngine builds the engine and the reloader that feeds it from the
// configured sources: the --policy paths, remote bundles, and the built-in
// library when there is nothing else or with with_builtin. With watch the
// reloader keeps the policy up to date until ctx ends or it is stopped.
//
// Without remote bundles a policy that does not load is an error. With
// them, the engine answers backend_unavailable until the first bundle
// activates, unless wait is set: then startEngine waits for it.
func startEngine(ctx context.Context, cfg config.Config, log *slog.Logger, o engineOptions) (*engine.Engine, *bundles.Reloader, error) {
	opa, err := cfg.PolicySources.OPAConfig()
	if err != nil {
		return nil, nil, err
	}
	rescan := cfg.RescanInterval
	if !o.watch || !cfg.Watch || rescan == 0 {
		rescan = -1
	}
	var prepare func(*bundles.Policy) (*bundles.Policy, error)
	if lib := WithGuardPaths(cfg); len(lib) > 0 {
		prepare = func(p *bundles.Policy) (*bundles.Policy, error) { return bundles.WithLibraryConfig(p, lib) }
	}
	caps := engine.DefaultCapabilities()
	eng := engine.New(engine.Options{
		EvalTimeout: cfg.EvalTimeout, Capabilities: caps, Logger: log, Facts: o.facts,
		OnRuleError: engine.OnRuleError(cfg.OnRuleError), Shadow: cfg.Shadow, Counter: o.counter,
		MaxInputBytes: cfg.MaxInputBytes,
	})
	opts := bundles.Options{
		Paths:          cfg.Policy,
		Builtin:        cfg.LibraryOn(),
		OPA:            opa,
		VerifyTests:    cfg.VerifyTests,
		Watch:          o.watch && cfg.Watch,
		WatchAfter:     watchAfter,
		RescanInterval: rescan,
		Prepare:        prepare,
		Capabilities:   caps,
		Logger:         log,
		OnReload:       o.onReload,
		Limits:         cfg.PolicyLimits,
	}
	rb, err := remote.New(opa, log, cfg.PolicyLimits)
	if err != nil {
		return nil, nil, fmt.Errorf("configuration: %w", err)
	}
	if rb != nil {
		opts.Remote = rb
	}
	rl, err := bundles.NewReloader(eng, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("configuration: %w", err)
	}
	if err := rl.Start(ctx); err != nil {
		return nil, nil, err
	}
	if o.wait && rl.Remote() {
		wctx, cancel := context.WithTimeout(ctx, BundleWait)
		defer cancel()
		if err := rl.WaitReady(wctx); err != nil {
			rl.Stop()
			return nil, nil, err
		}
	}
	return eng, rl, nil
}

// reloadMetrics counts reloads in the metrics; a reload that found the
// same content is not an activation.
func reloadMetrics(met *metrics.Metrics) func(bundles.Event) {
	return func(ev bundles.Event) {
		switch ev.Outcome {
		case bundles.Activated:
			met.Reload(metrics.ReloadSuccess)
		case bundles.Failed:
			met.Reload(metrics.ReloadFailure)
		}
	}
}
