package audit

import (
	"context"
	"fmt"
	"hash/maphash"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/engine"
	"github.com/ahp-opa/ahp-opa/internal/enrich"
	"github.com/ahp-opa/ahp-opa/transport"
	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// Config configures an Auditor. Zero values take the defaults below.
type Config struct {
	File         FileConfig   `koanf:"file"`
	QueueSize    int          `koanf:"queue_size"`    // records and observations waiting; default 4096
	IncludeInput bool         `koanf:"include_input"` // record the redacted event with each decision
	Redact       RedactConfig `koanf:"redact"`
	// RetryWindow is how long a decision is replayed for a retry with the
	// same (source, event id) and content (B-DUP-1); default 10m.
	RetryWindow time.Duration `koanf:"retry_window"`
	// OutcomeTimeout is how long a decision waits for its tool.after before
	// a no_outcome record notes the gap; default 10m.
	OutcomeTimeout time.Duration `koanf:"outcome_timeout"`
	// SessionTTL evicts facts of sessions with no activity; default 24h.
	SessionTTL time.Duration `koanf:"session_ttl"`
	// Required answers a decision whose record cannot be written with a
	// backend_unavailable error instead of the decision, and refuses an
	// acknowledged observation (HTTP answers 503 instead of 202) whose
	// record cannot be written. Off by default:
	// a broken audit sink is reported (log, metrics, /healthz) and the
	// decisions go on.
	Required bool `koanf:"required"`
	// Classify maps a tool to its family and what it touches; nil reads
	// them from the input the policy evaluated (Auditor.describe).
	Classify Classifier `koanf:"-"`
}

// WithDefaults returns c with its zero values replaced by the defaults.
func (c Config) WithDefaults() Config {
	c.defaults()
	return c
}

func (c *Config) defaults() {
	if c.QueueSize <= 0 {
		c.QueueSize = 4096
	}
	if c.RetryWindow <= 0 {
		c.RetryWindow = 10 * time.Minute
	}
	if c.OutcomeTimeout <= 0 {
		c.OutcomeTimeout = 10 * time.Minute
	}
	if c.SessionTTL <= 0 {
		c.SessionTTL = 24 * time.Hour
	}
}

// describe classifies a call from the input the engine evaluated, or, for
// an observed event or one whose policy read too little of input.ahp,
// from the event. What a call touches (files read, hosts) only feeds the
// session facts, so while no policy has read them (Facts.InUse) the event
// is not analysed for it: a policy that never reads input.ahp.session does
// not pay for parsing every command twice.
func (a *Auditor) describe(ev *transport.Event, input ast.Value) Call {
	switch {
	case input != nil:
		return enrich.DescribeCall(input)
	case ev == nil:
		return Call{}
	case !a.facts.InUse():
		return Call{Family: enrich.Enrich(ev, enrich.Options{}, 0).Family}
	}
	return enrich.DescribeEvent(ev)
}

// Bounds on memory, whatever the traffic.
const (
	maxCached   = 100_000 // decisions kept for retries
	maxPending  = 100_000 // decisions waiting for their tool.after
	maxObserved = 100_000 // observation ids kept for deduplication
)

// Writer stores audit records; *File is one.
type Writer interface {
	Write(*Record) error
}

// Stats counts what the auditor did; all fields are monotonic.
type Stats struct {
	Decisions, Observations, Retries uint64
	Dropped, InvalidNotifications    uint64
	DuplicateObservations, Anomalies uint64
	NoOutcome, WriteFailures         uint64
	// StaleDecisions were decided without the shared session facts, which
	// could not be read in time; SharedRefused were answered -32003 for
	// that because state.required is set.
	StaleDecisions, SharedRefused uint64
}

// Auditor records decisions and observations off the request path.
type Auditor struct {
	cfg    Config
	log    *slog.Logger
	out    Writer   // nil: records are not written, correlation still runs
	ship   *Shipper // nil: decisions stay local
	redact *Redactor
	facts  *Facts
	shared *sharing // nil: this process alone
	now    func() time.Time

	queue chan item
	done  chan struct{}
	stop  sync.Once

	mu    sync.Mutex // guards cache
	cache *window[eventKey, cachedResult]
	seed  maphash.Seed

	// Owned by the worker goroutine.
	pending  *window[callKey, pendingDecision]
	observed *window[eventKey, struct{}]

	stats struct {
		decisions, observations, retries, dropped, invalid atomic.Uint64
		duplicates, anomalies, noOutcome, writeFailures    atomic.Uint64
		stale, sharedRefused                               atomic.Uint64
	}

	// Owned by the worker goroutine: write failures reported at most once
	// per failureReportEvery, with the count since the last report.
	failing         bool
	unreported      uint64
	lastFailureNote time.Time
	// The last write failure, for health; nil while writes succeed.
	health atomic.Pointer[writeProblem]
	// Owned by the worker: session-fact evictions already logged.
	factsReported FactsStats
	lastFactsNote time.Time
}

type writeProblem struct {
	since time.Time
	err   string
}

// failureReportEvery rate-limits the log lines of a failing audit sink.
const failureReportEvery = 10 * time.Second

type eventKey struct{ source, id string }

type callKey struct{ source, session, call string }

type cachedResult struct {
	fingerprint uint64
	result      *transport.InterceptResult
}

type pendingDecision struct {
	eventID  string
	decision string
	tool     *Tool
}

// item is one unit of work for the worker: a record to write, perhaps
// joined with a decision to correlate, or an observation to process.
type item struct {
	rec     *Record
	pending *pendingDecision
	obs     *transport.Observation
	sweepAt time.Time     // sweep as of this time (tests drive the clock)
	flush   chan struct{} // closed once the item is processed
	written chan error    // audit.required: the result of writing rec or obs
}

// New starts an auditor writing to out (which may be nil). Close stops it.
func New(cfg Config, out Writer, facts *Facts, log *slog.Logger) (*Auditor, error) {
	cfg.defaults()
	red, err := NewRedactor(cfg.Redact)
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if facts == nil {
		facts = NewFacts(cfg.SessionTTL)
	}
	a := &Auditor{
		cfg: cfg, log: log, out: out, redact: red, facts: facts, now: time.Now,
		queue:    make(chan item, cfg.QueueSize),
		done:     make(chan struct{}),
		cache:    newWindow[eventKey, cachedResult](cfg.RetryWindow, maxCached),
		seed:     maphash.MakeSeed(),
		pending:  newWindow[callKey, pendingDecision](cfg.OutcomeTimeout, maxPending),
		observed: newWindow[eventKey, struct{}](cfg.RetryWindow, maxObserved),
	}
	if a.cfg.Classify == nil {
		a.cfg.Classify = a.describe
	}
	go a.run()
	return a, nil
}

// ShipTo sends decision records to s as well. Call it before the auditor
// sees traffic.
func (a *Auditor) ShipTo(s *Shipper) { a.ship = s }

// Redactor returns the redactor the auditor uses, for logs and reasons.
func (a *Auditor) Redactor() *Redactor { return a.redact }

// Facts returns the session facts the auditor maintains.
func (a *Auditor) Facts() *Facts { return a.facts }

// Stats returns the counters.
func (a *Auditor) Stats() Stats {
	s := &a.stats
	return Stats{
		Decisions: s.decisions.Load(), Observations: s.observations.Load(), Retries: s.retries.Load(),
		Dropped: s.dropped.Load(), InvalidNotifications: s.invalid.Load(),
		DuplicateObservations: s.duplicates.Load(), Anomalies: s.anomalies.Load(),
		NoOutcome: s.noOutcome.Load(), WriteFailures: s.writeFailures.Load(),
		StaleDecisions: s.stale.Load(), SharedRefused: s.sharedRefused.Load(),
	}
}

// Close processes what is queued, then stops the worker. Nothing may be
// recorded after Close.
func (a *Auditor) Close() {
	a.stop.Do(func() { close(a.queue) })
	<-a.done
}

// Flush returns once everything queued before it has been processed.
func (a *Auditor) Flush(ctx context.Context) error {
	ch := make(chan struct{})
	select {
	case a.queue <- item{flush: ch}:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// enqueue hands work to the worker without ever blocking: a full queue
// drops the item and counts it (B-OBS-2).
func (a *Auditor) enqueue(it item) {
	select {
	case a.queue <- it:
	default:
		a.stats.dropped.Add(1)
	}
}

// Judge is what the auditor wraps: the engine.
type Judge interface {
	Judge(ctx context.Context, req *transport.InterceptRequest) engine.Verdict
}

// Interceptor wraps next so that every decision is recorded, retries get
// the first answer (B-DUP-1) and deny reasons leave redacted.
func (a *Auditor) Interceptor(next Judge) transport.Interceptor {
	return &interceptor{a: a, next: next}
}

type interceptor struct {
	a    *Auditor
	next Judge
}

func (i *interceptor) Intercept(ctx context.Context, req *transport.InterceptRequest) (*transport.InterceptResult, error) {
	a := i.a
	key := eventKey{req.Event.Source, req.Event.ID}
	fp := fingerprint(a.seed, req.Event.Object)
	now := a.now()
	a.mu.Lock()
	c, hit := a.cache.get(key, now)
	a.mu.Unlock()
	if hit && c.fingerprint == fp {
		a.stats.retries.Add(1)
		return c.result, nil
	}

	var (
		sharedFP string
		stale    bool
		loaded   *loadedFacts
	)
	if a.shared != nil {
		sharedFP = stableFingerprint(req.Event.Object)
		var replay *transport.InterceptResult
		ctx, replay, loaded = a.shared.load(ctx, req, sharedFP)
		if replay != nil {
			a.stats.retries.Add(1)
			return replay, nil
		}
		if stale = loaded.stale(); stale {
			a.stats.stale.Add(1)
			if loaded.failed && a.shared.required {
				return nil, a.refuseStale(req, now)
			}
		}
	}

	v := i.next.Judge(ctx, req)
	if !stale && loaded.usedLocal() {
		// The policy that judged read the session, but its facts were not
		// read from the store: it saw this replica's own, marked stale.
		stale = true
		a.stats.stale.Add(1)
		if a.shared.required {
			return nil, a.refuseStale(req, now)
		}
	}
	if v.Result != nil {
		for j := range v.Result.Effects {
			v.Result.Effects[j].Reason = a.redact.String(v.Result.Effects[j].Reason)
		}
	}
	rec := a.decisionRecord(req, v, now)
	rec.Stale = stale
	input := v.Input
	if !v.Enriched.Has(enrich.Describe) {
		input = nil // the policy read too little of input.ahp to describe the call
	}
	call := a.cfg.Classify(&req.Event, input)
	rec.Tool.Family = call.Family
	a.facts.observeDecision(req.Event.Source, req.Event.Session.ID, req.Event.CallID, rec.Decision, call, now)
	a.stats.decisions.Add(1)
	var p *pendingDecision
	if req.Event.CallID != "" && rec.Decision != DecisionError {
		p = &pendingDecision{eventID: req.Event.ID, decision: rec.Decision, tool: rec.Tool}
	}
	if a.cfg.Required {
		if err := a.writeRequired(ctx, item{rec: rec, pending: p}, "decision"); err != nil {
			return nil, err
		}
	} else {
		a.enqueue(item{rec: rec, pending: p})
	}
	if v.Result != nil {
		// Cached once recorded: a retry must not replay an answer whose
		// record was refused.
		a.mu.Lock()
		a.cache.put(key, cachedResult{fingerprint: fp, result: v.Result}, now)
		a.mu.Unlock()
	}
	if a.shared != nil && rec.Decision != DecisionError {
		a.shared.decided(req, rec, call, p, v.Result, sharedFP, a.redact)
	}
	if v.Err != nil {
		return nil, v.Err
	}
	return v.Result, nil
}

// refuseStale answers -32003 for a decision whose session facts could not
// be read, with state.required set, and records it.
func (a *Auditor) refuseStale(req *transport.InterceptRequest, now time.Time) error {
	a.stats.sharedRefused.Add(1)
	err := transport.Unavailable("the session state store could not be read in time, and state.required is set")
	rec := a.decisionRecord(req, engine.Verdict{Err: err}, now)
	rec.Stale = true
	a.stats.decisions.Add(1)
	a.enqueue(item{rec: rec})
	return err
}

// writeRequired hands a decision record or an observation (what names
// it) to the worker and waits until its record is written: with
// audit.required, no answer or acknowledgement leaves without its record.
func (a *Auditor) writeRequired(ctx context.Context, it item, what string) *transport.Error {
	it.written = make(chan error, 1)
	refuse := func(why string) *transport.Error {
		return transport.Unavailable("the audit record of this " + what + " " + why + ", and audit.required is set")
	}
	select {
	case a.queue <- it:
	default:
		a.stats.dropped.Add(1)
		return refuse("was dropped (the audit queue is full)")
	}
	select {
	case err := <-it.written:
		if err != nil {
			return refuse("could not be written")
		}
		return nil
	case <-ctx.Done():
		return refuse("was not written before the request ended")
	}
}

func (a *Auditor) decisionRecord(req *transport.InterceptRequest, v engine.Verdict, now time.Time) *Record {
	ev := &req.Event
	r := &Record{
		Time: now.UTC(), Kind: KindDecision, EventID: ev.ID, EventType: ev.Type, Source: ev.Source,
		SessionID: ev.Session.ID, CallID: ev.CallID,
		Tool:     &Tool{Name: ev.Tool.Name},
		Revision: v.Decision.Revision, LatencyUS: v.Elapsed.Microseconds(),
	}
	switch {
	case v.Err != nil:
		r.Decision, r.ErrorCode = DecisionError, v.Err.Code
	case len(v.Result.Effects) == 0:
		r.Decision = DecisionAllow
	default:
		r.Decision, r.Reason = DecisionDeny, v.Result.Effects[0].Reason
		for _, m := range v.Decision.Matches {
			if m.Code == "" || slices.Contains(r.Codes, m.Code) {
				continue
			}
			if len(r.Codes) == engine.MaxListedMatches {
				r.CodesTruncated++
				continue
			}
			r.Codes = append(r.Codes, m.Code)
		}
	}
	a.ruleOutcomes(r, v.Decision)
	if a.cfg.IncludeInput {
		r.Input, _ = a.redact.Value(ev.Map(), "").(map[string]any)
	}
	return r
}

// ruleOutcomes records what the rule layer found: failed rules and the
// denies of rules in shadow mode, both bounded and masked.
func (a *Auditor) ruleOutcomes(r *Record, d engine.Decision) {
	for _, e := range d.Errors[:min(len(d.Errors), engine.MaxListedMatches)] {
		r.RuleErrors = append(r.RuleErrors, RuleError{Rule: e.Rule, Location: e.Location, Builtin: e.Builtin,
			Code: e.Code, Message: a.redact.String(e.Message), Shadow: e.Shadow})
	}
	for _, m := range d.Shadowed[:min(len(d.Shadowed), engine.MaxListedMatches)] {
		r.WouldDeny = append(r.WouldDeny, WouldDeny{Package: m.Package, Code: m.Code, Reason: a.redact.String(m.Reason)})
	}
}

// Note records r, a record another layer made (a canary disagreement), off
// the request path like every record: its reasons are redacted and, with
// include_input, event is attached redacted. A full queue drops it and
// counts it.
func (a *Auditor) Note(r *Record, event map[string]any) {
	r.Reason = a.redact.String(r.Reason)
	if r.Canary != nil {
		r.Canary.Reason = a.redact.String(r.Canary.Reason)
	}
	if a.cfg.IncludeInput && event != nil {
		r.Input, _ = a.redact.Value(event, "").(map[string]any)
	}
	a.enqueue(item{rec: r})
}

// Observer returns the transport.Observer that feeds the auditor.
func (a *Auditor) Observer() transport.Observer { return observer{a} }

type observer struct{ a *Auditor }

// Observe queues a valid observation. One the binding acknowledges
// (HTTP's 202) waits, with audit.required, until its record is written,
// and is refused when it cannot be: the sender may then send it again,
// as it would a decision answered -32003.
func (o observer) Observe(ctx context.Context, ob *transport.Observation) error {
	if ob.Problem != "" {
		o.a.stats.invalid.Add(1)
		o.a.log.Debug("invalid notification dropped", "method", ob.Method, "problem", ob.Problem)
		return nil
	}
	if o.a.cfg.Required && ob.Ack {
		if err := o.a.writeRequired(ctx, item{obs: ob}, "observation"); err != nil {
			return err
		}
		return nil
	}
	o.a.enqueue(item{obs: ob})
	return nil
}

// run is the worker: the only goroutine that writes records and touches
// the correlation state.
func (a *Auditor) run() {
	defer close(a.done)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case it, ok := <-a.queue:
			if !ok {
				if a.shared != nil {
					a.shared.retryLate(a.joinLate) // a last chance before stopping
				}
				return
			}
			a.process(it)
		case <-tick.C:
			a.sweep(a.now())
		}
	}
}

func (a *Auditor) process(it item) {
	if it.flush != nil {
		defer close(it.flush)
	}
	switch {
	case !it.sweepAt.IsZero():
		a.sweep(it.sweepAt)
	case it.obs != nil:
		err := a.observe(it.obs)
		if it.written != nil {
			it.written <- err
		}
	case it.rec != nil:
		if it.pending != nil {
			k := callKey{it.rec.Source, it.rec.SessionID, it.rec.CallID}
			a.pending.put(k, *it.pending, it.rec.Time)
		}
		err := a.write(it.rec)
		if it.written != nil {
			it.written <- err
		}
	}
}

func (a *Auditor) write(r *Record) error {
	if a.ship != nil {
		a.ship.Add(r)
	}
	if a.out == nil {
		return nil
	}
	err := a.out.Write(r)
	a.noteWrite(err)
	return err
}

// noteWrite keeps health and the failure count, and reports a failing
// sink on the log without flooding it: the first failure at once, then at
// most once per failureReportEvery with the count, and the recovery.
func (a *Auditor) noteWrite(err error) {
	now := a.now()
	if err == nil {
		if a.failing {
			a.failing = false
			a.health.Store(nil)
			a.log.Info("audit log writable again", "lost_since_last_report", a.unreported)
			a.unreported = 0
		}
		return
	}
	a.stats.writeFailures.Add(1)
	if !a.failing {
		a.failing = true
		a.health.Store(&writeProblem{since: now, err: err.Error()})
	}
	a.unreported++
	if a.lastFailureNote.IsZero() || now.Sub(a.lastFailureNote) >= failureReportEvery {
		a.log.Error("audit records are being lost", "lost", a.unreported, "total_lost", a.stats.writeFailures.Load(), "err", err)
		a.lastFailureNote, a.unreported = now, 0
	}
}

// Health describes a failing audit sink, or returns "" when records are
// being written. fatal is set when audit.required makes the failure stop
// decisions.
// A shared state store that cannot be reached degrades the replica but
// never makes it unready: decisions go on with stale facts (or -32003
// with state.required), and taking every replica out would stop all.
func (a *Auditor) Health() (problem string, fatal bool) {
	var shared string
	if a.shared != nil {
		shared = a.shared.store.Health()
	}
	p := a.health.Load()
	switch {
	case p == nil:
		return shared, false
	case shared != "":
		shared = "; " + shared
	}
	return fmt.Sprintf("audit log failing since %s: %s", p.since.UTC().Format(time.RFC3339), p.err) + shared, a.cfg.Required
}

// observe records an observation and returns the error of writing its
// record; a retried delivery of one already recorded is not an error.
func (a *Auditor) observe(ob *transport.Observation) error {
	ev := ob.Event
	if ev == nil {
		return nil // only a notification with a Problem has no event, and those are counted, not queued
	}
	now := a.now()
	key := eventKey{ev.Source, ev.ID}
	if _, dup := a.observed.get(key, now); dup && ev.ID != "" {
		a.stats.duplicates.Add(1) // B-OBS-6: retried delivery, one record
		return nil
	}
	a.observed.put(key, struct{}{}, now)
	a.stats.observations.Add(1)

	r := &Record{
		Time: now.UTC(), Kind: KindObservation, EventID: ev.ID, EventType: ev.Type, Source: ev.Source,
		SessionID: ev.Session.ID, CallID: ev.CallID, Outcome: ev.Outcome, Execution: ev.Execution.Status,
	}
	var call Call
	if ev.Tool.Name != "" {
		call = a.cfg.Classify(ev, nil)
		r.Tool = &Tool{Name: ev.Tool.Name, Family: call.Family}
	}
	if a.cfg.IncludeInput {
		r.Input, _ = a.redact.Value(ev.Map(), "").(map[string]any)
	}
	werr := a.write(r)
	if werr != nil {
		// Not remembered as seen: the sender's retry gets the record
		// this delivery could not write.
		a.observed.delete(key)
	}

	switch ev.Type {
	case ahp.EventToolAfter:
		a.correlate(r)
		if r.Execution == ahp.ExecutionExecuted {
			a.facts.observeExecuted(r.Source, r.SessionID, r.CallID, call, now)
			if a.shared != nil {
				a.shared.store.Send(Update{Kind: UpdateExecuted, Time: now, Source: r.Source,
					SessionID: r.SessionID, EventID: ev.ID, CallID: r.CallID, Call: call})
			}
		}
	case ahp.EventSessionEnd:
		a.facts.ended(ev.Source, r.SessionID, now)
		if a.shared != nil {
			a.shared.store.Send(Update{Kind: UpdateEnd, Time: now, Source: ev.Source, SessionID: r.SessionID, EventID: ev.ID})
		}
	}
	return werr
}

// correlate joins a tool.after with the decision for the same call. A call
// we denied that the harness reports as executed is an anomaly: either the
// harness ignored the deny or something else ran the tool.
func (a *Auditor) correlate(after *Record) {
	if after.CallID == "" {
		// Only a decision with a call id is kept pending; without one,
		// asking the shared store would cost round trips on the worker,
		// and a place among the late records, for nothing.
		return
	}
	k := callKey{after.Source, after.SessionID, after.CallID}
	p, ok := a.pending.get(k, after.Time)
	a.pending.delete(k)
	if a.shared != nil {
		// Whichever replica made the decision; this one's own memory
		// answers when the store has not received it yet or is down.
		if sp, found, _ := a.shared.takePending(after); found {
			p, ok = pendingDecision{eventID: sp.EventID, decision: sp.Decision, tool: sp.Tool}, true
		} else if !ok {
			a.shared.later(after) // the decision may still be on its way to the store
			return
		}
	}
	if ok {
		a.joined(after, p)
	}
}

// joinLate joins a tool.after whose decision was not in the shared store
// when it came, if it is there now.
func (a *Auditor) joinLate(after *Record) (bool, error) {
	sp, found, err := a.shared.takePending(after)
	if found {
		a.joined(after, pendingDecision{eventID: sp.EventID, decision: sp.Decision, tool: sp.Tool})
	}
	return found, err
}

// joined is a tool.after joined with its decision.
func (a *Auditor) joined(after *Record, p pendingDecision) {
	if p.decision != DecisionDeny || after.Execution != ahp.ExecutionExecuted {
		return
	}
	a.stats.anomalies.Add(1)
	a.log.Warn("denied tool call was executed", "source", after.Source, "session", after.SessionID,
		"call", after.CallID, "decision_event", p.eventID)
	a.write(&Record{
		Time: after.Time, Kind: KindAnomaly, EventID: after.EventID, EventType: after.EventType,
		Source: after.Source, SessionID: after.SessionID, CallID: after.CallID, Tool: p.tool,
		Decision: p.decision, Outcome: after.Outcome, Execution: after.Execution, DecisionEventID: p.eventID,
	})
}

// sweep notes decisions that never saw their tool.after and forgets old
// sessions.
func (a *Auditor) sweep(now time.Time) {
	if a.shared != nil {
		a.shared.retryLate(a.joinLate)
	}
	a.pending.expire(now, func(k callKey, p pendingDecision) {
		if a.shared != nil && !a.shared.stillPending(k) {
			return // another replica saw its tool.after
		}
		a.stats.noOutcome.Add(1)
		a.write(&Record{
			Time: now.UTC(), Kind: KindNoOutcome, Source: k.source, SessionID: k.session, CallID: k.call,
			Tool: p.tool, Decision: p.decision, DecisionEventID: p.eventID,
		})
	})
	a.observed.expire(now, nil)
	a.mu.Lock()
	a.cache.expire(now, nil)
	a.mu.Unlock()
	a.facts.expire(now)
	a.noteFactsEvictions(now)
}

// noteFactsEvictions logs, at most once per failureReportEvery, what the
// session-fact bounds pushed out since the last note: policies reading
// input.ahp.session then see less than happened.
func (a *Auditor) noteFactsEvictions(now time.Time) {
	st := a.facts.Stats()
	if st == a.factsReported || !a.lastFactsNote.IsZero() && now.Sub(a.lastFactsNote) < failureReportEvery {
		return
	}
	a.log.Warn("session facts pushed out by their bounds",
		"sessions_evicted", st.SessionsEvicted-a.factsReported.SessionsEvicted,
		"items_evicted", st.ItemsEvicted-a.factsReported.ItemsEvicted,
		"max_sessions", maxSessions, "max_items", maxFactItems)
	a.factsReported, a.lastFactsNote = st, now
}

// fingerprint hashes an event's content, so that a retry (same ids, same
// content) replays the first answer while a different call that reuses an
// id is decided afresh.
func fingerprint(seed maphash.Seed, v ast.Value) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	hashValue(&h, v)
	return h.Sum64()
}

// hashWriter is what hashValue writes to: a *maphash.Hash or a digest.
type hashWriter interface {
	WriteByte(byte) error
	WriteString(string) (int, error)
}

func hashValue(h hashWriter, v ast.Value) {
	switch v := v.(type) {
	case ast.Object:
		keys := v.Keys()
		slices.SortFunc(keys, func(a, b *ast.Term) int { return a.Value.Compare(b.Value) })
		h.WriteByte('{')
		for _, k := range keys {
			s, _ := k.Value.(ast.String)
			h.WriteString(string(s))
			h.WriteByte(0)
			hashValue(h, v.Get(k).Value)
		}
		h.WriteByte('}')
	case *ast.Array:
		h.WriteByte('[')
		for i := range v.Len() {
			hashValue(h, v.Elem(i).Value)
		}
		h.WriteByte(']')
	case ast.String:
		h.WriteByte('s')
		h.WriteString(string(v))
		h.WriteByte(0)
	case ast.Number:
		h.WriteByte('n')
		h.WriteString(string(v))
	case ast.Boolean:
		if v {
			h.WriteByte('t')
		} else {
			h.WriteByte('f')
		}
	case ast.Null:
		h.WriteByte('0')
	}
}
