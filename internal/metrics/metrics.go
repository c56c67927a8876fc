// Package metrics provides ahp-opa's Prometheus metrics: decisions,
// latency, errors, observations, policy reloads and audit failures.
//
// Each process builds its own registry with [New]; nothing is registered
// with the Prometheus default registry, so tests stay independent of each
// other. Every method is safe on a nil *Metrics, which records nothing:
// components take a *Metrics (or a small interface of their own) and work
// unchanged when metrics are off.
package metrics

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ahp-opa/ahp-opa/transport"
	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// namespace prefixes every metric name.
const namespace = "ahp_opa"

// Decision outcomes, the values of the outcome label of decisions_total.
const (
	OutcomeNoObjection = "no_objection"
	OutcomeDeny        = "deny"
	OutcomeUnavailable = "unavailable" // -32003: no policy yet, or overloaded
	OutcomeError       = "error"       // any other error answer
)

// Reload outcomes, the values of the outcome label of policy_reloads_total.
const (
	ReloadSuccess = "success"
	ReloadFailure = "failure"
)

// Observation drop reasons used by this package; other components may add
// their own (for example "queue_full").
const DropInvalid = "invalid"

// Metrics holds the collectors of one process.
type Metrics struct {
	reg *prometheus.Registry

	decisions     *prometheus.CounterVec
	latency       prometheus.Histogram
	errors        *prometheus.CounterVec
	httpResponses *prometheus.CounterVec
	overloaded    prometheus.Counter
	obsAccepted   prometheus.Counter
	obsDropped    *prometheus.CounterVec
	reloads       *prometheus.CounterVec
	configReloads *prometheus.CounterVec
	ruleErrors    *prometheus.CounterVec
	shadowDenies  *prometheus.CounterVec
	ruleLabels    labelBound

	// Audit counters: what components report through AuditWriteFailure,
	// plus what the tracked auditor counts itself.
	auditFailures atomic.Uint64
	auditSource   atomic.Pointer[func() AuditCounts]
}

// CanaryCounts are the monotonic counters a canary keeps.
type CanaryCounts struct {
	Evaluated     uint64 // events the canary policy decided
	Disagreements uint64 // of those, decided otherwise than the live policy
	Dropped       uint64 // events not evaluated because the canary queue was full
	Errors        uint64 // canary evaluations that failed
}

// TrackCanary exports a canary's counters, read at scrape time:
// canary_evaluations_total, canary_disagreements_total,
// canary_dropped_total and canary_errors_total.
func (m *Metrics) TrackCanary(f func() CanaryCounts) {
	if m == nil || f == nil {
		return
	}
	m.reg.MustRegister(
		counterOf(f, "canary_evaluations_total", "Events the canary policy decided.",
			func(c CanaryCounts) uint64 { return c.Evaluated }),
		counterOf(f, "canary_disagreements_total", "Events the canary policy decided otherwise than the live policy.",
			func(c CanaryCounts) uint64 { return c.Disagreements }),
		counterOf(f, "canary_dropped_total", "Events the canary policy did not see because its queue was full.",
			func(c CanaryCounts) uint64 { return c.Dropped }),
		counterOf(f, "canary_errors_total", "Canary policy evaluations that failed.",
			func(c CanaryCounts) uint64 { return c.Errors }),
	)
}

// AuditCounts are the monotonic counters an auditor keeps.
type AuditCounts struct {
	WriteFailures uint64 // records that could not be written
	Dropped       uint64 // records and observations dropped on a full queue
	Retries       uint64 // decisions replayed for a retried event (B-DUP-1)
	// Session facts pushed out by their bounds: whole sessions, and list
	// entries, family counters and call ids within one.
	SessionsEvicted, FactItemsEvicted uint64
}

// New returns metrics registered with a fresh registry, Go runtime and
// process collectors included.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.decisions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "decisions_total",
		Help: "hooks/intercept requests decided, by outcome: no_objection, deny, unavailable or error.",
	}, []string{"outcome"})
	m.latency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: namespace, Name: "decision_duration_seconds",
		Help: "Time spent deciding one hooks/intercept request, policy evaluation included.",
		// From a cached no-match (tens of µs) to the longest evaluation
		// deadline a harness would tolerate.
		Buckets: []float64{.00005, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1},
	})
	m.errors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "errors_total",
		Help: "JSON-RPC error responses sent over HTTP, by error code.",
	}, []string{"code"})
	m.httpResponses = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "http_responses_total",
		Help: "Answers to POST requests on the AHP endpoint, by HTTP status.",
	}, []string{"status"})
	m.overloaded = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: namespace, Name: "http_overloaded_total",
		Help: "hooks/intercept requests refused with -32003 because every evaluation slot stayed busy.",
	})
	m.obsAccepted = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: namespace, Name: "observations_accepted_total",
		Help: "Valid hooks/observe notifications received.",
	})
	m.obsDropped = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "observations_dropped_total",
		Help: "hooks/observe notifications not recorded, by reason.",
	}, []string{"reason"})
	m.reloads = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "policy_reloads_total",
		Help: "Policy activation attempts, the initial load included, by outcome: success or failure.",
	}, []string{"outcome"})
	m.configReloads = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "config_reloads_total",
		Help: "Reloads of an edited configuration file, by outcome: success or failure (the last good configuration stays).",
	}, []string{"outcome"})
	m.ruleErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "rule_errors_total",
		Help: "Deny rule sets that failed to evaluate for an event, by rule (e.g. ahp.tool.before.team.deny).",
	}, []string{"rule"})
	m.shadowDenies = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "shadow_denies_total",
		Help: "Denies of rules in shadow mode (would_deny, not answered), by rule: the deny code, else its package.",
	}, []string{"rule"})
	audit := func() AuditCounts {
		if f := m.auditSource.Load(); f != nil {
			return (*f)()
		}
		return AuditCounts{}
	}
	m.reg.MustRegister(
		m.decisions, m.latency, m.errors, m.httpResponses, m.overloaded,
		m.obsAccepted, m.obsDropped, m.reloads, m.configReloads, m.ruleErrors, m.shadowDenies,
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Namespace: namespace, Name: "audit_write_failures_total",
			Help: "Audit records that could not be written.",
		}, func() float64 { return float64(m.auditFailures.Load() + audit().WriteFailures) }),
		counterOf(audit, "audit_dropped_total", "Audit records and observations dropped because the audit queue was full.",
			func(c AuditCounts) uint64 { return c.Dropped }),
		counterOf(audit, "audit_retries_total", "Decisions replayed for a retried event (same source, event id and content).",
			func(c AuditCounts) uint64 { return c.Retries }),
		counterOf(audit, "session_facts_sessions_evicted_total", "Live sessions whose facts were dropped because the most sessions tracked were reached.",
			func(c AuditCounts) uint64 { return c.SessionsEvicted }),
		counterOf(audit, "session_facts_items_evicted_total", "Session fact entries (files, hosts, recent calls, families, call ids) dropped by their per-session bounds.",
			func(c AuditCounts) uint64 { return c.FactItemsEvicted }),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	// Outcomes that have not happened yet still show as 0, so that rate()
	// and alerts work from the first scrape.
	for _, o := range []string{OutcomeNoObjection, OutcomeDeny, OutcomeUnavailable, OutcomeError} {
		m.decisions.WithLabelValues(o)
	}
	for _, o := range []string{ReloadSuccess, ReloadFailure} {
		m.reloads.WithLabelValues(o)
		m.configReloads.WithLabelValues(o)
	}
	m.obsDropped.WithLabelValues(DropInvalid)
	return m
}

// Registry returns the registry, for components that add collectors.
func (m *Metrics) Registry() *prometheus.Registry {
	if m == nil {
		return nil
	}
	return m.reg
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Decided records one decision and how long it took.
func (m *Metrics) Decided(outcome string, elapsed time.Duration) {
	if m == nil {
		return
	}
	m.decisions.WithLabelValues(outcome).Inc()
	m.latency.Observe(elapsed.Seconds())
}

// Answered records how the HTTP binding answered one POST: its status and,
// when the body is a JSON-RPC error, the error code (0 otherwise). It
// implements transport.HTTPRecorder.
func (m *Metrics) Answered(status, code int) {
	if m == nil {
		return
	}
	m.httpResponses.WithLabelValues(strconv.Itoa(status)).Inc()
	if code != 0 {
		m.errors.WithLabelValues(strconv.Itoa(code)).Inc()
	}
}

// Overloaded records a request refused for lack of an evaluation slot. It
// implements transport.HTTPRecorder.
func (m *Metrics) Overloaded() {
	if m == nil {
		return
	}
	m.overloaded.Inc()
}

// ObservationAccepted records a valid notification.
func (m *Metrics) ObservationAccepted() {
	if m == nil {
		return
	}
	m.obsAccepted.Inc()
}

// ObservationDropped records a notification that was not recorded.
func (m *Metrics) ObservationDropped(reason string) {
	if m == nil {
		return
	}
	m.obsDropped.WithLabelValues(reason).Inc()
}

// Reload records a policy activation attempt: ReloadSuccess or
// ReloadFailure. The active revision is read from the PolicyFunc given to
// TrackPolicy, so callers need not report it.
func (m *Metrics) Reload(outcome string) {
	if m == nil {
		return
	}
	m.reloads.WithLabelValues(outcome).Inc()
}

// ConfigReload records a reload of the configuration file: ReloadSuccess
// or ReloadFailure.
func (m *Metrics) ConfigReload(outcome string) {
	if m == nil {
		return
	}
	m.configReloads.WithLabelValues(outcome).Inc()
}

// maxRuleLabels bounds the distinct rule label values: a policy can build
// codes from input, and every label value is a time series.
const maxRuleLabels = 200

// OtherRule is the rule label once maxRuleLabels values are in use.
const OtherRule = "other"

// labelBound admits the first maxRuleLabels label values.
type labelBound struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (b *labelBound) admit(v string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.seen[v] {
		return v
	}
	if len(b.seen) >= maxRuleLabels {
		return OtherRule
	}
	if b.seen == nil {
		b.seen = map[string]bool{}
	}
	b.seen[v] = true
	return v
}

// RuleError records a deny rule set that failed for one event. It
// implements engine.RuleCounter.
func (m *Metrics) RuleError(rule string) {
	if m == nil {
		return
	}
	m.ruleErrors.WithLabelValues(m.ruleLabels.admit(rule)).Inc()
}

// ShadowDeny records a deny of a rule in shadow mode. It implements
// engine.RuleCounter.
func (m *Metrics) ShadowDeny(rule string) {
	if m == nil {
		return
	}
	m.shadowDenies.WithLabelValues(m.ruleLabels.admit(rule)).Inc()
}

// AuditWriteFailure records an audit record that could not be written.
func (m *Metrics) AuditWriteFailure() {
	if m == nil {
		return
	}
	m.auditFailures.Add(1)
}

// TrackAudit exports the counters an auditor keeps, read at scrape time,
// so that the auditor needs no reference to the metrics.
func (m *Metrics) TrackAudit(f func() AuditCounts) {
	if m == nil || f == nil {
		return
	}
	m.auditSource.Store(&f)
}

// PolicyFunc reports the active policy: its revision and when it was
// loaded; ok is false while no policy is active.
type PolicyFunc func() (revision string, loaded time.Time, ok bool)

// TrackPolicy exports the active policy, read at scrape time:
// policy_active (0 or 1), policy_revision_info{revision} and
// policy_loaded_timestamp_seconds. Reading at scrape time keeps the
// figures right whoever swaps the policy.
func (m *Metrics) TrackPolicy(f PolicyFunc) {
	if m == nil || f == nil {
		return
	}
	m.reg.MustRegister(&policyCollector{
		read: f,
		active: prometheus.NewDesc(namespace+"_policy_active",
			"1 when a policy is active and requests are decided, 0 otherwise.", nil, nil),
		info: prometheus.NewDesc(namespace+"_policy_revision_info",
			"The revision of the active policy, as a label; the value is always 1.", []string{"revision"}, nil),
		loaded: prometheus.NewDesc(namespace+"_policy_loaded_timestamp_seconds",
			"When the active policy was compiled and loaded, in seconds since the epoch.", nil, nil),
	})
}

type policyCollector struct {
	read                 PolicyFunc
	active, info, loaded *prometheus.Desc
}

func (c *policyCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.active
	ch <- c.info
	ch <- c.loaded
}

func (c *policyCollector) Collect(ch chan<- prometheus.Metric) {
	rev, at, ok := c.read()
	if !ok {
		ch <- prometheus.MustNewConstMetric(c.active, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.active, prometheus.GaugeValue, 1)
	ch <- prometheus.MustNewConstMetric(c.info, prometheus.GaugeValue, 1, rev)
	ch <- prometheus.MustNewConstMetric(c.loaded, prometheus.GaugeValue, float64(at.UnixNano())/1e9)
}

// Interceptor wraps next so that every decision is counted and timed; it
// works for every binding.
func Interceptor(next transport.Interceptor, m *Metrics) transport.Interceptor {
	if m == nil {
		return next
	}
	return &interceptor{next: next, m: m}
}

type interceptor struct {
	next transport.Interceptor
	m    *Metrics
}

func (i *interceptor) Intercept(ctx context.Context, req *transport.InterceptRequest) (*transport.InterceptResult, error) {
	start := time.Now()
	res, err := i.next.Intercept(ctx, req)
	i.m.Decided(outcomeOf(res, err), time.Since(start))
	return res, err
}

func outcomeOf(res *transport.InterceptResult, err error) string {
	if err != nil {
		var rpcErr *transport.Error
		if errors.As(err, &rpcErr) && rpcErr.Code == ahp.CodeBackendUnavailable {
			return OutcomeUnavailable
		}
		return OutcomeError
	}
	if res != nil {
		for _, e := range res.Effects {
			if e.Type == ahp.EffectDeny {
				return OutcomeDeny
			}
		}
	}
	return OutcomeNoObjection
}

// Observer wraps next so that notifications are counted: valid ones as
// accepted, invalid ones as dropped. A nil next only counts.
func Observer(next transport.Observer, m *Metrics) transport.Observer {
	if m == nil {
		return next
	}
	return &observer{next: next, m: m}
}

type observer struct {
	next transport.Observer
	m    *Metrics
}

func (o *observer) Observe(ctx context.Context, ob *transport.Observation) error {
	if ob.Problem != "" {
		o.m.ObservationDropped(DropInvalid)
	} else {
		o.m.ObservationAccepted()
	}
	if o.next != nil {
		return o.next.Observe(ctx, ob)
	}
	return nil
}

// counterOf is a counter read at scrape time: the field pick takes from
// what read reports.
func counterOf[T any](read func() T, name, help string, pick func(T) uint64) prometheus.Collector {
	return prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: namespace, Name: name, Help: help},
		func() float64 { return float64(pick(read())) })
}
