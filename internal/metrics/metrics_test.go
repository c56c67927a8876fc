package metrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ahp-opa/ahp-opa/transport"
	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// scrape returns the text exposition of m.
func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	w := httptest.NewRecorder()
	m.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	if w.Code != 200 {
		t.Fatalf("scrape: status %d", w.Code)
	}
	b, _ := io.ReadAll(w.Body)
	return string(b)
}

func wantLines(t *testing.T, text string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if !strings.Contains(text, "\n"+l+"\n") {
			t.Errorf("metrics lack %q", l)
		}
	}
}

type fakeInterceptor struct{}

func (fakeInterceptor) Intercept(_ context.Context, req *transport.InterceptRequest) (*transport.InterceptResult, error) {
	switch req.Event.Tool.Name {
	case "deny":
		return transport.NewResult(transport.Effect{Type: ahp.EffectDeny, Reason: "no"}), nil
	case "busy":
		return nil, transport.Unavailable("no policy")
	case "fail":
		return nil, errors.New("boom")
	case "invalid":
		return nil, transport.InvalidParams("deny not advertised")
	}
	return transport.NewResult(), nil
}

func TestInterceptorCountsOutcomes(t *testing.T) {
	m := New()
	ic := Interceptor(fakeInterceptor{}, m)
	for _, tool := range []string{"allow", "allow", "deny", "busy", "fail", "invalid"} {
		ic.Intercept(context.Background(), &transport.InterceptRequest{Event: transport.Event{Tool: transport.Tool{Name: tool}}})
	}
	text := scrape(t, m)
	wantLines(t, text,
		`ahp_opa_decisions_total{outcome="no_objection"} 2`,
		`ahp_opa_decisions_total{outcome="deny"} 1`,
		`ahp_opa_decisions_total{outcome="unavailable"} 1`,
		`ahp_opa_decisions_total{outcome="error"} 2`,
		`ahp_opa_decision_duration_seconds_count 6`,
	)
}

func TestObserverCounts(t *testing.T) {
	m := New()
	var got int
	next := observerFunc(func(*transport.Observation) { got++ })
	o := Observer(next, m)
	o.Observe(context.Background(), &transport.Observation{})
	o.Observe(context.Background(), &transport.Observation{Problem: "bad"})
	m.ObservationDropped("queue_full")
	if got != 2 {
		t.Errorf("next observer called %d times, want 2", got)
	}
	wantLines(t, scrape(t, m),
		`ahp_opa_observations_accepted_total 1`,
		`ahp_opa_observations_dropped_total{reason="invalid"} 1`,
		`ahp_opa_observations_dropped_total{reason="queue_full"} 1`,
	)
}

type observerFunc func(*transport.Observation)

func (f observerFunc) Observe(_ context.Context, o *transport.Observation) error { f(o); return nil }

func TestHTTPAndOperationalCounters(t *testing.T) {
	m := New()
	m.Answered(200, 0)
	m.Answered(200, ahp.CodeBackendUnavailable)
	m.Answered(400, ahp.CodeParseError)
	m.Answered(401, 0)
	m.Overloaded()
	m.Reload(ReloadSuccess)
	m.Reload(ReloadFailure)
	m.Reload(ReloadFailure)
	m.AuditWriteFailure()
	wantLines(t, scrape(t, m),
		`ahp_opa_http_responses_total{status="200"} 2`,
		`ahp_opa_http_responses_total{status="400"} 1`,
		`ahp_opa_http_responses_total{status="401"} 1`,
		`ahp_opa_errors_total{code="-32003"} 1`,
		`ahp_opa_errors_total{code="-32700"} 1`,
		`ahp_opa_http_overloaded_total 1`,
		`ahp_opa_policy_reloads_total{outcome="success"} 1`,
		`ahp_opa_policy_reloads_total{outcome="failure"} 2`,
		`ahp_opa_audit_write_failures_total 1`,
	)
}

func TestTrackPolicy(t *testing.T) {
	m := New()
	rev, ok := "", false
	at := time.Unix(1700000000, 0)
	m.TrackPolicy(func() (string, time.Time, bool) { return rev, at, ok })
	text := scrape(t, m)
	wantLines(t, text, `ahp_opa_policy_active 0`)
	if strings.Contains(text, "ahp_opa_policy_revision_info{") {
		t.Error("a revision is exported while no policy is active")
	}
	rev, ok = "builtin-abc", true
	wantLines(t, scrape(t, m),
		`ahp_opa_policy_active 1`,
		`ahp_opa_policy_revision_info{revision="builtin-abc"} 1`,
		`ahp_opa_policy_loaded_timestamp_seconds 1.7e+09`,
	)
	rev = "v2"
	text = scrape(t, m)
	wantLines(t, text, `ahp_opa_policy_revision_info{revision="v2"} 1`)
	if strings.Contains(text, "builtin-abc") {
		t.Error("the previous revision is still exported")
	}
}

func TestTrackAudit(t *testing.T) {
	m := New()
	m.AuditWriteFailure()
	wantLines(t, scrape(t, m), `ahp_opa_audit_write_failures_total 1`, `ahp_opa_audit_dropped_total 0`)
	counts := AuditCounts{WriteFailures: 2, Dropped: 3, Retries: 4}
	m.TrackAudit(func() AuditCounts { return counts })
	wantLines(t, scrape(t, m),
		`ahp_opa_audit_write_failures_total 3`,
		`ahp_opa_audit_dropped_total 3`,
		`ahp_opa_audit_retries_total 4`,
	)
}

// TestTrackState: a shared store's state is exported as read at scrape
// time, the behind flag as a 0/1 gauge beside state_up.
func TestTrackState(t *testing.T) {
	m := New()
	counts := StateCounts{Up: true, StaleDecisions: 5, Refused: 1, ReadErrors: 2, Dropped: 3, WriteFailures: 4,
		ItemsEvicted: 6, Behind: true, BehindReads: 7}
	m.TrackState(func() StateCounts { return counts })
	wantLines(t, scrape(t, m),
		`ahp_opa_state_up 1`,
		`ahp_opa_state_behind 1`,
		`ahp_opa_state_behind_reads_total 7`,
		`ahp_opa_state_stale_decisions_total 5`,
		`ahp_opa_state_refused_total 1`,
		`ahp_opa_state_read_errors_total 2`,
		`ahp_opa_state_updates_dropped_total 3`,
		`ahp_opa_state_write_failures_total 4`,
		`ahp_opa_state_items_evicted_total 6`,
	)
	counts.Up, counts.Behind = false, false
	wantLines(t, scrape(t, m), `ahp_opa_state_up 0`, `ahp_opa_state_behind 0`)
}

// TestZeroSeries: every outcome is exported from the first scrape, so
// that rates and alerts work before anything happened.
func TestZeroSeries(t *testing.T) {
	wantLines(t, scrape(t, New()),
		`ahp_opa_decisions_total{outcome="deny"} 0`,
		`ahp_opa_decisions_total{outcome="error"} 0`,
		`ahp_opa_policy_reloads_total{outcome="failure"} 0`,
		`ahp_opa_observations_dropped_total{reason="invalid"} 0`,
		`ahp_opa_audit_write_failures_total 0`,
	)
}

// TestRegistriesAreIndependent: two instances do not share counters.
func TestRegistriesAreIndependent(t *testing.T) {
	a, b := New(), New()
	a.AuditWriteFailure()
	wantLines(t, scrape(t, b), `ahp_opa_audit_write_failures_total 0`)
}

func TestNilMetricsIsSafe(t *testing.T) {
	var m *Metrics
	m.Decided(OutcomeDeny, time.Millisecond)
	m.Answered(200, 0)
	m.Overloaded()
	m.ObservationAccepted()
	m.ObservationDropped("x")
	m.Reload(ReloadSuccess)
	m.AuditWriteFailure()
	m.RuleError("r")
	m.ShadowDeny("r")
	m.TrackAudit(func() AuditCounts { return AuditCounts{} })
	m.TrackPolicy(func() (string, time.Time, bool) { return "", time.Time{}, false })
	if m.Registry() != nil {
		t.Error("nil metrics has a registry")
	}
	if ic := Interceptor(fakeInterceptor{}, nil); ic != (fakeInterceptor{}) {
		t.Error("Interceptor with nil metrics wraps anyway")
	}
	w := httptest.NewRecorder()
	m.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	if w.Code != 404 {
		t.Errorf("nil metrics handler: %d, want 404", w.Code)
	}
}

func TestRuleCounters(t *testing.T) {
	m := New()
	m.RuleError("ahp.tool.before.team.deny")
	m.RuleError("ahp.tool.before.team.deny")
	m.ShadowDeny("dev.ahp-opa.git.force-push")
	wantLines(t, scrape(t, m),
		`ahp_opa_rule_errors_total{rule="ahp.tool.before.team.deny"} 2`,
		`ahp_opa_shadow_denies_total{rule="dev.ahp-opa.git.force-push"} 1`,
	)
}

func TestRuleLabelsAreBounded(t *testing.T) {
	m := New()
	for i := range maxRuleLabels + 5 {
		m.ShadowDeny(fmt.Sprintf("com.example.r%d", i))
	}
	text := scrape(t, m)
	if n := strings.Count(text, "ahp_opa_shadow_denies_total{"); n != maxRuleLabels+1 {
		t.Errorf("%d series, want %d and %q", n, maxRuleLabels+1, OtherRule)
	}
	wantLines(t, text, `ahp_opa_shadow_denies_total{rule="other"} 5`)
}

func TestTrackCanary(t *testing.T) {
	m := New()
	m.TrackCanary(func() CanaryCounts { return CanaryCounts{Evaluated: 7, Disagreements: 2, Dropped: 3, Errors: 1} })
	wantLines(t, scrape(t, m),
		"ahp_opa_canary_evaluations_total 7",
		"ahp_opa_canary_disagreements_total 2",
		"ahp_opa_canary_dropped_total 3",
		"ahp_opa_canary_errors_total 1",
	)
}
