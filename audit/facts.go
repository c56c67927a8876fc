package audit

import (
	"slices"
	"sync"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/engine"
)

// Call is what a classifier says about one tool call.
type Call = engine.CallFacts

// Classifier describes a tool call from its event and, when the engine
// evaluated it, the policy input it built (nil otherwise).
type Classifier func(event map[string]any, input ast.Value) Call

// Bounds per session: facts are a summary, not a history.
const (
	maxSessions     = 10_000
	maxFactItems    = 64 // files_read, hosts_fetched, secret_paths, recent
	maxCountedCalls = 1024
)

// Facts keeps per-session facts built from decisions and observations and
// serves them to policies as input.ahp.session. Facts live in one process:
// a fleet must route a session to one replica.
type Facts struct {
	mu       sync.Mutex
	sessions *window[sessionKey, *session]
}

type sessionKey struct{ source, id string }

// session keeps its lists as AST terms, built once per entry: the facts
// object is rebuilt after every call, and must cost little.
type session struct {
	calls   map[string]int // allowed or executed calls by family
	denied  int
	reads   []*ast.Term
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
// session is unknown. The value is shared and must not be changed.
func (f *Facts) Session(source, id string) ast.Value {
	if f == nil || id == "" {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.sessions.get(sessionKey{source, id}, time.Now())
	if !ok {
		return nil
	}
	if s.value == nil {
		s.value = s.toValue()
	}
	return s.value
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
	s.count(callID, c, now)
}

func (f *Facts) observeExecuted(source, sessionID, callID string, c Call, now time.Time) {
	if sessionID == "" {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.touch(source, sessionID, now).count(callID, c, now)
}

// count adds a call once, whether its decision or its tool.after (or
// both) report it.
func (s *session) count(callID string, c Call, now time.Time) {
	if callID != "" {
		if _, seen := s.counted[callID]; seen {
			return
		}
		if len(s.order) >= maxCountedCalls { // forget the older half at once
			half := maxCountedCalls / 2
			for _, id := range s.order[:half] {
				delete(s.counted, id)
			}
			s.order = slices.Clone(s.order[half:])
		}
		s.counted[callID] = struct{}{}
		s.order = append(s.order, callID)
	}
	family := c.Family
	if family == "" {
		family = "other"
	}
	s.calls[family]++
	s.recent = appendBounded(s.recent, maxFactItems, ast.ObjectTerm(
		ast.Item(ast.InternedTerm("family"), ast.StringTerm(family)),
		ast.Item(ast.InternedTerm("time_ns"), ast.IntNumberTerm(int(now.UnixNano()))),
	))
	for _, p := range c.Reads {
		s.reads = addString(s.reads, p)
		if c.Secret {
			s.secrets = addString(s.secrets, p)
		}
	}
	for _, h := range c.Hosts {
		s.hosts = addString(s.hosts, h)
	}
}

// addString appends v to a bounded list of string terms unless it is there.
func addString(list []*ast.Term, v string) []*ast.Term {
	t := ast.StringTerm(v)
	if slices.ContainsFunc(list, t.Equal) {
		return list
	}
	return appendBounded(list, maxFactItems, t)
}

// appendBounded appends v, dropping the oldest entries past max. It never
// writes into the array it was given: values built from it may be in use.
func appendBounded[T any](s []T, max int, v T) []T {
	if len(s) >= max {
		s = slices.Clone(s[len(s)-max+1:])
	}
	return append(s, v)
}

// end forgets a session at session.end.
func (f *Facts) end(source, id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sessions.delete(sessionKey{source, id})
}

func (f *Facts) expire(now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sessions.expire(now, nil)
}

// toValue builds the documented input.ahp.session object.
func (s *session) toValue() ast.Value {
	calls := ast.NewObject()
	total := 0
	for fam, n := range s.calls {
		calls.Insert(ast.StringTerm(fam), ast.IntNumberTerm(n))
		total += n
	}
	return ast.NewObject(
		ast.Item(ast.InternedTerm("calls"), ast.NewTerm(calls)),
		ast.Item(ast.InternedTerm("total_calls"), ast.IntNumberTerm(total)),
		ast.Item(ast.InternedTerm("denied"), ast.IntNumberTerm(s.denied)),
		ast.Item(ast.InternedTerm("files_read"), termArray(s.reads)),
		ast.Item(ast.InternedTerm("hosts_fetched"), termArray(s.hosts)),
		ast.Item(ast.InternedTerm("secrets_touched"), ast.BooleanTerm(len(s.secrets) > 0)),
		ast.Item(ast.InternedTerm("secret_paths"), termArray(s.secrets)),
		ast.Item(ast.InternedTerm("recent"), termArray(s.recent)),
	)
}

// termArray shares the terms but not the slice, which later calls extend.
func termArray(ts []*ast.Term) *ast.Term {
	return ast.ArrayTerm(slices.Clip(ts)...)
}
