package audit

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/internal/enrich"
	"github.com/ahp-opa/ahp-opa/transport"
	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// Call is what a classifier says about one tool call.
type Call = enrich.CallFacts

// Classifier describes a tool call from its event and, when the engine
// evaluated it, the policy input it built (nil otherwise).
type Classifier func(ev *transport.Event, input ast.Value) Call

// Bounds per session: facts are a summary, not a history. Whatever the
// traffic, the store holds at most maxSessions × (4 lists × maxFactItems
// entries of at most maxFactItemBytes + maxFamilies counters + maxCountedCalls
// ids). What a bound pushes out is counted (FactsStats) and logged.
const (
	maxSessions      = 10_000
	maxFactItems     = 64   // files_read, files_written, hosts_fetched, secret_paths, recent
	maxFactItemBytes = 4096 // one path or host; longer ones are cut
	maxFamilies      = 64   // calls by family; more go to "other"
	maxCountedCalls  = 1024
)

// FactsStats counts what the bounds pushed out; monotonic.
type FactsStats struct {
	SessionsEvicted uint64 // live sessions dropped because maxSessions were tracked
	ItemsEvicted    uint64 // list entries, family counters and call ids dropped or merged
}

// Facts keeps per-session facts built from decisions and observations and
// serves them to policies as input.ahp.session. Facts live in one process;
// replicas of a fleet share theirs through a Shared store as well.
type Facts struct {
	mu           sync.Mutex
	sessions     *window[sessionKey, *session]
	itemsEvicted uint64
	// replay makes the log's own clock (logTime, the time of the last
	// record applied) the facts' clock, so that a week-old log ages its
	// sessions as it did then.
	replay  bool
	logTime time.Time
	// inUse is set once a policy has read the facts: until then what a
	// call touches is not worth analysing for them (Auditor.describe).
	inUse atomic.Bool
}

// InUse reports whether a policy has read session facts in this process.
// A replay store is always in use.
func (f *Facts) InUse() bool { return f != nil && (f.replay || f.inUse.Load()) }

// Stats returns what the bounds pushed out so far.
func (f *Facts) Stats() FactsStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return FactsStats{SessionsEvicted: f.sessions.evicted, ItemsEvicted: f.itemsEvicted}
}

type sessionKey struct{ source, id string }

// session keeps its lists as AST terms, built once per entry: the facts
// object is rebuilt after every call, and must cost little.
type session struct {
	calls   map[string]int // allowed or executed calls by family
	denied  int
	reads   []*ast.Term
	writes  []*ast.Term
	hosts   []*ast.Term
	secrets []*ast.Term
	recent  []*ast.Term         // {family, time_ns}
	counted map[string]struct{} // call ids already counted
	order   []string            // the same ids, oldest first
	value   ast.Value
}

// NewFacts returns an empty store whose sessions expire after ttl without
// activity (24h when ttl is not positive).
func NewFacts(ttl time.Duration) *Facts {
	if ttl <= 0 {
		ttl = 24 * time.Hour
	}
	return &Facts{sessions: newWindow[sessionKey, *session](ttl, maxSessions)}
}

// Session returns the facts of a session as an AST object, or nil when the
// session is unknown. The value is shared and must not be changed. With a
// shared store (Auditor.Share), the facts it returned for this decision
// come first; when they were not read from it, this process's facts are
// returned marked stale, and the decision is recorded stale.
func (f *Facts) Session(ctx context.Context, source, id string) ast.Value {
	if f == nil {
		return nil
	}
	if !f.inUse.Load() {
		f.inUse.Store(true)
	}
	if id == "" {
		return nil
	}
	if l := loadedFrom(ctx, source, id); l != nil {
		switch {
		case !l.read:
			// Not read from the store for this decision (it failed, or the
			// policy was not known to read the session when the read was
			// planned): this replica's own view, which misses what other
			// replicas decided.
			l.local.Store(true)
			return withStale(f.local(source, id))
		case l.recovering:
			return withStale(l.facts)
		}
		return l.facts
	}
	return f.local(source, id)
}

func (f *Facts) local(source, id string) ast.Value {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.sessions.get(sessionKey{source, id}, f.clock())
	if !ok {
		return nil
	}
	if s.value == nil {
		s.value = s.toValue()
	}
	return s.value
}

func (f *Facts) clock() time.Time {
	if f.replay {
		return f.logTime
	}
	return time.Now()
}

// NewReplayFacts returns a store rebuilt from an audit log with Apply: its
// clock is the time of the last record applied, not the wall clock.
func NewReplayFacts(ttl time.Duration) *Facts {
	f := NewFacts(ttl)
	f.replay = true
	return f
}

// Tick moves the clock of a store from NewReplayFacts to t, the time of
// the record about to be re-decided; the clock never goes back.
func (f *Facts) Tick(t time.Time) {
	if !f.replay {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if t.After(f.logTime) {
		f.logTime = t
	}
}

// Apply updates the facts with one audit record as the live server did
// when it wrote it: a decision, a tool.after that reports execution, a
// session.end. c describes the record's call. Records must come in log
// order; only a store from NewReplayFacts follows their clock.
func (f *Facts) Apply(r *Record, c Call) {
	f.Tick(r.Time)
	switch {
	case r.Kind == KindDecision:
		f.observeDecision(r.Source, r.SessionID, r.CallID, r.Decision, c, r.Time)
	case r.Kind == KindObservation && r.EventType == ahp.EventToolAfter && r.Execution == ahp.ExecutionExecuted:
		f.observeExecuted(r.Source, r.SessionID, r.CallID, c, r.Time)
	case r.Kind == KindObservation && r.EventType == ahp.EventSessionEnd:
		f.ended(r.Source, r.SessionID, r.Time)
	}
}

// touch returns the session, creating it, and refreshes its expiry.
func (f *Facts) touch(source, id string, now time.Time) *session {
	k := sessionKey{source, id}
	s, ok := f.sessions.get(k, now)
	if !ok {
		s = &session{calls: map[string]int{}, counted: map[string]struct{}{}}
	}
	f.sessions.put(k, s, now)
	s.value = nil
	return s
}

func (f *Facts) observeDecision(source, sessionID, callID, decision string, c Call, now time.Time) {
	if sessionID == "" || decision == DecisionError {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.touch(source, sessionID, now)
	if decision == DecisionDeny {
		s.denied++
		return
	}
	f.itemsEvicted += s.count(callID, c, now)
}

func (f *Facts) observeExecuted(source, sessionID, callID string, c Call, now time.Time) {
	if sessionID == "" {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.itemsEvicted += f.touch(source, sessionID, now).count(callID, c, now)
}

// count adds a call once, whether its decision or its tool.after (or
// both) report it. It returns how many entries the bounds pushed out.
func (s *session) count(callID string, c Call, now time.Time) (evicted uint64) {
	if callID != "" {
		if _, seen := s.counted[callID]; seen {
			return 0
		}
		if len(s.order) >= maxCountedCalls { // forget the older half at once
			half := maxCountedCalls / 2
			for _, id := range s.order[:half] {
				delete(s.counted, id)
			}
			s.order = slices.Clone(s.order[half:])
			evicted += uint64(half)
		}
		s.counted[callID] = struct{}{}
		s.order = append(s.order, callID)
	}
	family := c.Family
	if family == "" {
		family = "other"
	}
	if _, known := s.calls[family]; !known && len(s.calls) >= maxFamilies {
		family = "other" // a classifier with open-ended families
		evicted++
	}
	s.calls[family]++
	var n uint64
	s.recent, n = appendBounded(s.recent, maxFactItems,
		RecentCall(family, ast.Number(strconv.FormatInt(now.UnixNano(), 10))))
	evicted += n
	for _, p := range c.Reads {
		s.reads, n = addString(s.reads, p)
		evicted += n
		if c.Secret {
			s.secrets, n = addString(s.secrets, p)
			evicted += n
		}
	}
	for _, p := range c.Writes {
		s.writes, n = addString(s.writes, p)
		evicted += n
	}
	for _, h := range c.Hosts {
		s.hosts, n = addString(s.hosts, h)
		evicted += n
	}
	return evicted
}

// addString appends v to a bounded list of string terms unless it is
// there; a value longer than maxFactItemBytes is cut, marked with "…".
func addString(list []*ast.Term, v string) ([]*ast.Term, uint64) {
	t := ast.StringTerm(CutFactItem(v))
	if slices.ContainsFunc(list, t.Equal) {
		return list, 0
	}
	return appendBounded(list, maxFactItems, t)
}

// CutFactItem cuts a path or host longer than the bound of one fact
// entry, marking the cut with "…"; every store keeps entries this way.
func CutFactItem(v string) string {
	if len(v) > maxFactItemBytes {
		return strings.ToValidUTF8(v[:maxFactItemBytes-len("…")], "") + "…"
	}
	return v
}

// appendBounded appends v, dropping the oldest entries past max, and
// says how many it dropped. It never writes into the array it was given:
// values built from it may be in use.
func appendBounded[T any](s []T, max int, v T) ([]T, uint64) {
	var dropped uint64
	if len(s) >= max {
		dropped = uint64(len(s) - max + 1)
		s = slices.Clone(s[len(s)-max+1:])
	}
	return append(s, v), dropped
}

// ended keeps a session's facts through a session.end, for a ttl from
// the end: an end can be forged from inside the session, and a resumed
// session is the same session. Facts go only by age or capacity.
func (f *Facts) ended(source, id string, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := sessionKey{source, id}
	if s, ok := f.sessions.get(k, now); ok {
		f.sessions.put(k, s, now)
	}
}

func (f *Facts) expire(now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sessions.expire(now, nil)
}

// toValue builds the documented input.ahp.session object.
func (s *session) toValue() ast.Value {
	return (&SessionSummary{Calls: s.calls, Denied: s.denied, Reads: s.reads, Writes: s.writes, Hosts: s.hosts,
		Secrets: s.secrets, Recent: s.recent}).Value()
}

// SessionSummary is what a store keeps of a session, the parts
// input.ahp.session is built from. Every store builds the object with
// Value, so that a policy sees one shape whichever store holds the
// session (this process's memory, or the fleet's shared store).
type SessionSummary struct {
	Calls                         map[string]int // allowed or executed calls by family
	Denied                        int
	Reads, Writes, Hosts, Secrets []*ast.Term // strings
	Recent                        []*ast.Term // RecentCall entries, oldest first
}

// RecentCall is one entry of input.ahp.session.recent.
func RecentCall(family string, timeNS ast.Number) *ast.Term {
	return ast.ObjectTerm(
		ast.Item(ast.InternedTerm("family"), ast.StringTerm(family)),
		ast.Item(ast.InternedTerm("time_ns"), ast.NewTerm(timeNS)),
	)
}

// Value builds the documented input.ahp.session object. It shares the
// terms of the lists, not the slices.
func (s *SessionSummary) Value() ast.Value {
	calls := ast.NewObject()
	total := 0
	for fam, n := range s.Calls { // an object's keys are ordered by the object, not by insertion
		calls.Insert(ast.StringTerm(fam), ast.IntNumberTerm(n))
		total += n
	}
	return ast.NewObject(
		ast.Item(ast.InternedTerm("calls"), ast.NewTerm(calls)),
		ast.Item(ast.InternedTerm("total_calls"), ast.IntNumberTerm(total)),
		ast.Item(ast.InternedTerm("denied"), ast.IntNumberTerm(s.Denied)),
		ast.Item(ast.InternedTerm("files_read"), termArray(s.Reads)),
		ast.Item(ast.InternedTerm("files_written"), termArray(s.Writes)),
		ast.Item(ast.InternedTerm("hosts_fetched"), termArray(s.Hosts)),
		ast.Item(ast.InternedTerm("secrets_touched"), ast.BooleanTerm(len(s.Secrets) > 0)),
		ast.Item(ast.InternedTerm("secret_paths"), termArray(s.Secrets)),
		ast.Item(ast.InternedTerm("recent"), termArray(s.Recent)),
	)
}

// termArray shares the terms but not the slice, which later calls extend.
func termArray(ts []*ast.Term) *ast.Term {
	return ast.ArrayTerm(slices.Clip(ts)...)
}
