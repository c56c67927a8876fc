package main

import (
	"context"
	"log/slog"

	"github.com/ahp-opa/ahp-opa/bundles"
	"github.com/ahp-opa/ahp-opa/engine"
	"github.com/ahp-opa/ahp-opa/internal/audit"
	"github.com/ahp-opa/ahp-opa/internal/metrics"
	"github.com/ahp-opa/ahp-opa/transport"
)

// decisions is what answers AHP messages behind any binding: the engine
// and its reloader, the auditor with its session facts, the metrics, and,
// when configured, the canary and the decision-log shipper, composed as
// transport layers. serve puts its bindings in front of it; the decision
// daemon answers ahp-opa-hook with it, so that a message gets the same
// answer, audit record and facts either way.
type decisions struct {
	Server   *transport.Server
	Engine   *engine.Engine
	Reloader *bundles.Reloader
	Metrics  *metrics.Metrics
	Audit    *audit.Auditor

	ship       *audit.Shipper
	stopCanary func()
}

// policyLoadError marks a policy that did not load, as opposed to a
// configuration the other parts refused, so that a caller can say how to
// check the policy.
type policyLoadError struct{ err error }

func (e policyLoadError) Error() string { return e.err.Error() }
func (e policyLoadError) Unwrap() error { return e.err }

// startDecisions loads the policy and starts the layers; they stop with
// Close. waitRemote waits for the first remote bundle before returning,
// for a caller that has no readiness probe to offer instead.
func startDecisions(ctx context.Context, cfg Config, log *slog.Logger, waitRemote bool) (d *decisions, err error) {
	d = &decisions{Metrics: metrics.New()}
	defer func() {
		if err != nil {
			d.Close()
		}
	}()
	met := d.Metrics
	// One store: the auditor writes session facts, the engine reads them.
	facts := audit.NewFacts(cfg.Audit.SessionTTL)
	eng, rl, err := startEngine(ctx, cfg, log, true, waitRemote, reloadMetrics(met), facts, met)
	if err != nil {
		return d, policyLoadError{err}
	}
	d.Engine, d.Reloader = eng, rl
	met.TrackPolicy(policyOf(eng))
	aud, err := startAudit(ctx, cfg.Audit, facts, log)
	if err != nil {
		return d, err
	}
	d.Audit = aud
	if d.ship, err = startShipper(cfg, log); err != nil {
		return d, err
	}
	if d.ship != nil {
		aud.ShipTo(d.ship)
	}
	met.TrackAudit(func() metrics.AuditCounts {
		st, fs := aud.Stats(), facts.Stats()
		return metrics.AuditCounts{WriteFailures: st.WriteFailures, Dropped: st.Dropped, Retries: st.Retries,
			SessionsEvicted: fs.SessionsEvicted, FactItemsEvicted: fs.ItemsEvicted}
	})
	var judge audit.Judge = eng
	if len(cfg.Canary) > 0 {
		canary, stop, err := startCanary(ctx, cfg, log, aud)
		if err != nil {
			return d, err
		}
		d.stopCanary = stop
		met.TrackCanary(func() metrics.CanaryCounts {
			st := canary.Stats()
			return metrics.CanaryCounts{Evaluated: st.Evaluated, Disagreements: st.Disagreements, Dropped: st.Dropped, Errors: st.Errors}
		})
		judge = canary.Wrap(eng)
	}
	d.Server = &transport.Server{
		Interceptor: metrics.Interceptor(aud.Interceptor(judge), met),
		Observer:    metrics.Observer(aud.Observer(), met),
		Logger:      log,
	}
	return d, nil
}

// Close stops the layers: the canary first (its last records still get
// written), then the auditor (what is queued gets written), the shipper
// (and shipped), and the reloader last.
func (d *decisions) Close() {
	if d.stopCanary != nil {
		d.stopCanary()
	}
	if d.Audit != nil {
		d.Audit.Close()
	}
	if d.ship != nil {
		d.ship.Close()
	}
	if d.Reloader != nil {
		d.Reloader.Stop()
	}
}
