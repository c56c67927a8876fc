package audit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"slices"
	"sync/atomic"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/transport"
)

// Shared is session state shared by the replicas of a fleet: a session's
// facts, the answers given to event ids (for retries, B-DUP-1) and the
// decisions awaiting their tool.after. With it, any replica answers as one
// process would. Without it (state.store: memory, the default) this
// process's memory holds them, as it always did; with it, the memory still
// holds this replica's view, which is what a decision uses when the shared
// store cannot be read in time.
//
// internal/state provides the Redis implementation.
type Shared interface {
	// Load fetches, in one round trip, the answer recorded for an event
	// and, when q.Facts is set, the facts of its session (nil when the
	// session is unknown). It returns within ctx's deadline.
	Load(ctx context.Context, q Query) (Loaded, error)
	// Send queues u for the store. It never blocks: updates of one session
	// are applied in the order sent, and a full queue drops and counts.
	Send(u Update)
	// TakePending removes and returns the decision awaiting a call's
	// tool.after, whichever replica made it; ok is false when there is none.
	TakePending(ctx context.Context, source, sessionID, callID string) (p SharedPending, ok bool, err error)
	// Health names the store's problem, "" when it answers.
	Health() string
}

// Query is what a decision asks the shared store.
type Query struct {
	Source, EventID, SessionID string
	Facts                      bool // the active policy reads input.ahp.session
}

// Loaded is what the shared store holds for a decision.
type Loaded struct {
	Answer *SharedAnswer // nil: no replica has answered the event yet
	Facts  ast.Value     // nil: the session has no facts
	// Stale says the facts were read but may miss updates still on their
	// way: the store just came back, and replicas are writing what they
	// queued while it was away.
	Stale bool
}

// SharedAnswer is an answer kept for retries of the same event on any
// replica. Fingerprint is a collision-resistant digest of the event, so
// that a different call reusing the id is decided afresh.
type SharedAnswer struct {
	Fingerprint string                     `json:"fp"`
	Result      *transport.InterceptResult `json:"result"`
}

// SharedPending is a decision awaiting its tool.after.
type SharedPending struct {
	EventID  string `json:"event_id"`
	Decision string `json:"decision"`
	Tool     *Tool  `json:"tool,omitempty"`
}

// UpdateKind says what an Update reports.
type UpdateKind uint8

// The updates a replica sends.
const (
	UpdateDecision UpdateKind = iota + 1 // a decision: facts, answer, pending
	UpdateExecuted                       // a tool.after reporting execution
	UpdateEnd                            // session.end: keep the facts a session TTL from now
)

// Update is what one decision or observation changes in the shared store.
// It holds nothing the audit record would not: reasons are redacted and
// facts are paths, hosts and families.
type Update struct {
	Kind                               UpdateKind
	Time                               time.Time
	Source, SessionID, EventID, CallID string
	Decision                           string // allow or deny (UpdateDecision)
	Call                               Call
	Answer                             *SharedAnswer  // UpdateDecision: kept for retries
	Pending                            *SharedPending // UpdateDecision: awaits its tool.after
}

// loadedKey carries, in a decision's context, what the shared store
// returned, for Facts.Session to hand the engine.
type loadedKey struct{}

type loadedFacts struct {
	source, session string
	facts           ast.Value // from the shared store; nil when the session is unknown there
	read            bool      // the store was asked for the facts and answered
	failed          bool      // the store was asked for the facts and did not answer in time
	recovering      bool      // facts were read, but may miss updates on their way
	// local is set when the policy read the session although the facts
	// were not read from the store for this decision (the policy that
	// judged was not known when the read was planned): it was given this
	// replica's own facts, marked stale, and the decision is stale.
	local atomic.Bool
}

// stale reports whether the decision is known to be stale before it is
// judged: its facts could not be read, or may miss updates.
func (l *loadedFacts) stale() bool { return l != nil && (l.failed || l.recovering) }

// usedLocal reports whether the policy was given this replica's own facts.
func (l *loadedFacts) usedLocal() bool { return l != nil && l.local.Load() }

func withLoaded(ctx context.Context, l *loadedFacts) context.Context {
	return context.WithValue(ctx, loadedKey{}, l)
}

func loadedFrom(ctx context.Context, source, session string) *loadedFacts {
	l, _ := ctx.Value(loadedKey{}).(*loadedFacts)
	if l == nil || l.source != source || l.session != session {
		return nil
	}
	return l
}

// withStale returns facts marked input.ahp.session.stale: true, so that a
// policy can be strict while the shared store is unreachable. Unknown
// facts become an empty session.
func withStale(facts ast.Value) ast.Value {
	obj, ok := facts.(ast.Object)
	if !ok {
		obj = (&SessionSummary{}).Value().(ast.Object)
	}
	out := obj.Copy()
	out.Insert(ast.InternedTerm("stale"), ast.BooleanTerm(true))
	return out
}

// stableFingerprint digests an event's content with SHA-256: replicas
// must agree on it, and unlike the per-process keyed hash it must resist
// a crafted event that collides with an allowed one.
func stableFingerprint(v ast.Value) string {
	h := digest{sha256.New()}
	hashValue(h, v)
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// digest gives a hash.Hash the byte and string writers hashValue uses.
type digest struct{ hash.Hash }

func (d digest) WriteByte(b byte) error {
	_, err := d.Write([]byte{b})
	return err
}

func (d digest) WriteString(s string) (int, error) { return d.Write([]byte(s)) }

// SharedOptions attach a shared store to an Auditor.
type SharedOptions struct {
	Store Shared
	// ReadsSession reports whether the active policy reads
	// input.ahp.session: only then does a decision read facts.
	ReadsSession func() bool
	// Timeout bounds the read on the answer path; past it the decision
	// is made with this replica's own facts, marked stale.
	Timeout time.Duration
	// Required answers -32003 instead when facts could not be read.
	Required bool
}

// Share makes the auditor keep its state in o.Store as well. Call it
// before the auditor sees traffic.
func (a *Auditor) Share(o SharedOptions) {
	if o.Store == nil {
		a.shared = nil
		return
	}
	if o.ReadsSession == nil {
		o.ReadsSession = func() bool { return true }
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Millisecond
	}
	a.shared = &sharing{store: o.Store, readsSession: o.ReadsSession, timeout: o.Timeout, required: o.Required}
}

// offPathTimeout bounds the store calls the auditor's worker makes
// (correlation). No answer waits for them directly, but the worker also
// writes the records answers may wait for (audit.required), so a store
// that hangs must not hold it long; one known to be down is not asked.
const offPathTimeout = 100 * time.Millisecond

// errStoreDown skips a call to a store whose health names a problem.
var errStoreDown = errors.New("shared store unavailable")

// sharing is the auditor's side of a Shared store.
type sharing struct {
	store        Shared
	readsSession func() bool
	timeout      time.Duration
	required     bool
	// late holds tool.after records whose decision was not found yet: it
	// may still be in another replica's write queue, or the store down.
	// Owned by the auditor's worker.
	late []lateAfter
}

type lateAfter struct {
	after *Record
	tries int
}

// Bounds on the tool.after records waiting for their decision: how many,
// and how many sweeps (one a second) each is tried again; the store may be
// down for a while, its replicas' queues drain when it is back.
const (
	maxLate      = 10_000
	maxLateTries = 30
)

// later keeps a tool.after to join with its decision at the next sweeps.
func (s *sharing) later(after *Record) {
	if len(s.late) < maxLate {
		s.late = append(s.late, lateAfter{after: after})
	}
}

// retryLate tries join on each waiting tool.after, keeping those it did
// not join until they have been tried maxLateTries times. A store that
// cannot answer ends the pass: the rest wait for the next one, untried.
func (s *sharing) retryLate(join func(*Record) (bool, error)) {
	keep := s.late[:0]
	for i, l := range s.late {
		joined, err := join(l.after)
		if err != nil {
			keep = append(keep, s.late[i:]...)
			break
		}
		if joined {
			continue
		}
		if l.tries++; l.tries < maxLateTries {
			keep = append(keep, l)
		}
	}
	clear(s.late[len(keep):])
	s.late = keep
}

// load asks the store, in one round trip, for an earlier answer to the
// event and, when the policy reads them, the session's facts. It returns
// the context that carries what was read to the engine, the answer to
// replay if any, and what was loaded for the session (nil without one).
// Whatever was read, a policy that reads input.ahp.session is never given
// this replica's own facts unmarked: they are a partial view of a session
// other replicas also decide (Facts.Session).
func (s *sharing) load(ctx context.Context, req *transport.InterceptRequest, fp string) (_ context.Context, replay *transport.InterceptResult, l *loadedFacts) {
	ev := &req.Event
	q := Query{Source: ev.Source, EventID: ev.ID, SessionID: ev.Session.ID, Facts: ev.Session.ID != "" && s.readsSession()}
	if ev.Session.ID != "" {
		l = &loadedFacts{source: ev.Source, session: ev.Session.ID}
		ctx = withLoaded(ctx, l)
	}
	lctx, cancel := context.WithTimeout(ctx, s.timeout)
	got, err := s.store.Load(lctx, q)
	cancel()
	switch {
	case err != nil:
		// Facts asked for are stale. Without them only the retry check
		// was lost: decide afresh, stale if the policy reads the session
		// after all.
		if l != nil {
			l.failed = q.Facts
		}
		return ctx, nil, l
	case got.Answer != nil && got.Answer.Fingerprint == fp && got.Answer.Result != nil:
		return ctx, got.Answer.Result, nil
	case q.Facts:
		l.facts, l.read, l.recovering = got.Facts, true, got.Stale
	}
	return ctx, nil, l
}

// decided sends what a decision changes: the session's facts, the answer
// for retries and the decision awaiting its tool.after.
func (s *sharing) decided(req *transport.InterceptRequest, rec *Record, call Call, p *pendingDecision,
	result *transport.InterceptResult, fp string, red *Redactor) {
	ev := &req.Event
	u := Update{Kind: UpdateDecision, Time: rec.Time, Source: ev.Source, SessionID: ev.Session.ID,
		EventID: ev.ID, CallID: ev.CallID, Decision: rec.Decision, Call: call}
	if result != nil && ev.ID != "" {
		u.Answer = &SharedAnswer{Fingerprint: fp, Result: redactedResult(result, red)}
	}
	if p != nil {
		u.Pending = &SharedPending{EventID: p.eventID, Decision: p.decision, Tool: p.tool}
	}
	s.store.Send(u)
}

// redactedResult is the answer as stored: reasons are redacted already,
// extensions a policy added are redacted here.
func redactedResult(r *transport.InterceptResult, red *Redactor) *transport.InterceptResult {
	if !slices.ContainsFunc(r.Effects, func(e transport.Effect) bool { return e.Extensions != nil }) {
		return r
	}
	out := *r
	out.Effects = slices.Clone(r.Effects)
	for i := range out.Effects {
		if ext := out.Effects[i].Extensions; ext != nil {
			out.Effects[i].Extensions, _ = red.Value(ext, "").(map[string]any)
		}
	}
	return &out
}

// takePending removes and returns the decision a tool.after reports on,
// whichever replica made it.
func (s *sharing) takePending(after *Record) (SharedPending, bool, error) {
	return s.take(after.Source, after.SessionID, after.CallID)
}

func (s *sharing) take(source, session, call string) (SharedPending, bool, error) {
	if s.store.Health() != "" {
		return SharedPending{}, false, errStoreDown
	}
	ctx, cancel := context.WithTimeout(context.Background(), offPathTimeout)
	defer cancel()
	return s.store.TakePending(ctx, source, session, call)
}

// stillPending reports whether no replica has seen the call's tool.after;
// when the store cannot say, the gap is reported.
func (s *sharing) stillPending(k callKey) bool {
	_, ok, err := s.take(k.source, k.session, k.call)
	return ok || err != nil
}
