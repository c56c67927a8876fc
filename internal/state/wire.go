package state

import (
	"log/slog"
	"time"

	"github.com/ahp-opa/ahp-opa/engine"
	"github.com/ahp-opa/ahp-opa/internal/audit"
	"github.com/ahp-opa/ahp-opa/internal/enrich"
	"github.com/ahp-opa/ahp-opa/internal/metrics"
)

// closeTimeout bounds how long stopping waits for queued updates to reach
// a server that does not answer.
const closeTimeout = 2 * time.Second

// Attach opens the store cfg names and makes aud keep its session state
// there; the memory store needs nothing, and Attach returns a no-op. Facts
// are read only while the engine eng returns (the current one: reloads
// replace it) runs a policy that reads input.ahp.session. The returned
// function closes the store: call it after aud.Close, so that the last
// updates are written.
func Attach(cfg Config, auditCfg audit.Config, aud *audit.Auditor, eng func() *engine.Engine, met *metrics.Metrics, log *slog.Logger) (closeFn func(), err error) {
	if !cfg.Shared() {
		return func() {}, cfg.Validate()
	}
	ac := auditCfg.WithDefaults()
	r, err := Open(cfg, Windows{Retry: ac.RetryWindow, Outcome: ac.OutcomeTimeout, Session: ac.SessionTTL}, log)
	if err != nil {
		return nil, err
	}
	aud.Share(audit.SharedOptions{
		Store:        r,
		ReadsSession: readsSession(eng),
		Timeout:      cfg.Timeout,
		Required:     cfg.Required,
	})
	met.TrackState(func() metrics.StateCounts {
		st, as := r.Stats(), aud.Stats()
		return metrics.StateCounts{Up: r.Health() == "", StaleDecisions: as.StaleDecisions, Refused: as.SharedRefused,
			ReadErrors: st.ReadErrors, Dropped: st.Dropped, WriteFailures: st.WriteFailures, ItemsEvicted: st.ItemsEvicted,
			Behind: r.Behind(), BehindReads: st.BehindReads}
	})
	return func() { r.Close(closeTimeout) }, nil
}

// readsSession reports whether the policy that will judge reads
// input.ahp.session. Before a policy is active it cannot say, and says
// yes: a decision that arrives then waits for the policy (a replica just
// started, reached before its health check passed), and facts read in the
// same round trip cost little, while facts not read leave that policy
// this replica's own, stale.
func readsSession(eng func() *engine.Engine) func() bool {
	return func() bool {
		e := eng()
		if e == nil {
			return true
		}
		s := e.Snapshot()
		return s == nil || s.Needs().Has(enrich.Session)
	}
}
