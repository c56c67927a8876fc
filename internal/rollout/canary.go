package rollout

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/engine"
	"github.com/ahp-opa/ahp-opa/internal/audit"
	"github.com/ahp-opa/ahp-opa/internal/enrich"
	"github.com/ahp-opa/ahp-opa/transport"
)

// DefaultCanaryQueue is how many events may wait for the canary policy.
// Past it events are dropped: the canary samples, it never slows answers.
const DefaultCanaryQueue = 256

// Candidate evaluates a policy input that the live engine built; the
// canary policy sees exactly what the live one saw, session facts
// included.
type Candidate interface {
	Decide(ctx context.Context, input ast.Value) (engine.Decision, error)
}

// EngineCandidate evaluates on eng's active snapshot, which eng's own
// reloader keeps current, within timeout.
func EngineCandidate(eng *engine.Engine, timeout time.Duration) Candidate {
	if timeout <= 0 {
		timeout = engine.DefaultEvalTimeout
	}
	return engineCandidate{eng: eng, timeout: timeout}
}

type engineCandidate struct {
	eng     *engine.Engine
	timeout time.Duration
}

func (c engineCandidate) Decide(ctx context.Context, input ast.Value) (engine.Decision, error) {
	s := c.eng.Snapshot()
	if s == nil {
		return engine.Decision{}, errNotReady
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	return s.Decide(ctx, input)
}

// Recorder keeps a disagreement; *audit.Auditor is one.
type Recorder interface {
	Note(r *audit.Record, event map[string]any)
}

// CanaryOptions configure a Canary. Zero values take the defaults.
type CanaryOptions struct {
	QueueSize int
	Logger    *slog.Logger
}

// CanaryStats counts what a canary did; all fields are monotonic.
type CanaryStats struct {
	Evaluated     uint64 // events the canary policy decided
	Disagreements uint64 // of those, decided otherwise than the live policy
	Dropped       uint64 // events not evaluated because the queue was full
	Errors        uint64 // evaluations of the canary policy that failed
}

// Canary evaluates a candidate policy on the events the live policy
// decides, after the live answer is made and on its own goroutine, and
// records every disagreement. It never changes or delays an answer.
type Canary struct {
	cand  Candidate
	rec   Recorder
	log   *slog.Logger
	queue chan canaryJob
	done  chan struct{}
	stop  sync.Once
	ctx   context.Context
	quit  context.CancelFunc

	evaluated, disagreements, dropped, errors atomic.Uint64
}

// canaryJob is what the worker needs, copied off the request: later
// layers may change the verdict's result (reasons are redacted in place).
type canaryJob struct {
	ev       transport.Event
	input    ast.Value
	enriched enrich.Parts // what input.ahp holds
	live     Outcome
}

// NewCanary starts a canary comparing cand with the live policy and
// reporting to rec (which may be nil). Close stops it.
func NewCanary(cand Candidate, rec Recorder, opts CanaryOptions) *Canary {
	if opts.QueueSize <= 0 {
		opts.QueueSize = DefaultCanaryQueue
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, quit := context.WithCancel(context.Background())
	c := &Canary{
		cand: cand, rec: rec, log: log, ctx: ctx, quit: quit,
		queue: make(chan canaryJob, opts.QueueSize), done: make(chan struct{}),
	}
	go c.run()
	return c
}

// Wrap returns a Judge that answers exactly as next does and hands every
// decided event to the canary without waiting.
func (c *Canary) Wrap(next Judge) Judge { return canaryJudge{c: c, next: next} }

type canaryJudge struct {
	c    *Canary
	next Judge
}

func (j canaryJudge) Judge(ctx context.Context, req *transport.InterceptRequest) engine.Verdict {
	v := j.next.Judge(ctx, req)
	if v.Input == nil {
		return v // nothing was evaluated (no policy yet, or no input): nothing to compare
	}
	select {
	case j.c.queue <- canaryJob{ev: req.Event, input: v.Input, enriched: v.Enriched, live: verdictOutcome(v)}:
	default:
		j.c.dropped.Add(1)
	}
	return v
}

// Stats returns the counters.
func (c *Canary) Stats() CanaryStats {
	return CanaryStats{
		Evaluated: c.evaluated.Load(), Disagreements: c.disagreements.Load(),
		Dropped: c.dropped.Load(), Errors: c.errors.Load(),
	}
}

// Close evaluates what is queued, then stops the worker. Nothing may be
// judged through the canary after Close.
func (c *Canary) Close() {
	c.stop.Do(func() { close(c.queue) })
	<-c.done
	c.quit()
}

func (c *Canary) run() {
	defer close(c.done)
	for job := range c.queue {
		c.evaluate(job)
	}
}

func (c *Canary) evaluate(job canaryJob) {
	input := job.input
	if !job.enriched.Has(enrich.All &^ enrich.Session) {
		// The live policy reads less of input.ahp than the candidate may:
		// enrich again, off the request path, keeping the session facts.
		input = reenrich(job.input, &job.ev)
	}
	d, err := c.cand.Decide(c.ctx, input)
	c.evaluated.Add(1)
	if err != nil {
		c.errors.Add(1)
		c.log.Debug("canary policy evaluation failed", "event", job.ev.ID, "err", err)
	}
	cand := OutcomeOf(d, err)
	if Compare(job.live, cand) == Unchanged {
		return
	}
	c.disagreements.Add(1)
	c.log.Info("canary policy disagrees", "event", job.ev.ID, "tool", job.ev.Tool.Name,
		"live", job.live.Decision, "canary", cand.Decision, "canary_rule", cand.Rule)
	if c.rec == nil {
		return
	}
	ev := &job.ev
	c.rec.Note(&audit.Record{
		Time: time.Now().UTC(), Kind: audit.KindCanary, EventID: ev.ID, EventType: ev.Type, Source: ev.Source,
		SessionID: ev.Session.ID, CallID: ev.CallID, Tool: &audit.Tool{Name: ev.Tool.Name},
		Decision: job.live.Decision, Reason: job.live.Reason, Codes: job.live.Codes, Revision: job.live.Revision,
		Canary: &audit.Verdict{Decision: cand.Decision, Reason: cand.Reason, Codes: cand.Codes, Revision: cand.Revision},
	}, ev.Map())
}

// reenrich returns input, a policy input built for a policy that reads
// only some of input.ahp, with the whole enrichment of ev instead; the
// session facts it held are kept.
func reenrich(input ast.Value, ev *transport.Event) ast.Value {
	r := enrich.Enrich(ev, enrich.Options{}, enrich.All)
	key := ast.InternedTerm("session")
	if in, ok := input.(ast.Object); ok {
		if t := in.Get(ast.InternedTerm(enrich.InputKey)); t != nil {
			if ahp, ok := t.Value.(ast.Object); ok {
				if s := ahp.Get(key); s != nil {
					r.Object.Insert(key, s)
				}
			}
		}
	}
	return enrich.Input(ev.Object, r.Object)
}
