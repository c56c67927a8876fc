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

type session struct {
	calls   map[string]int // allowed or executed calls by family
	denied  int
	reads   []string
	hosts   []string
	secrets []string
	recent  []recentCall
	counted []string // call ids already counted, oldest first
	value   ast.Value
}

type recentCall struct {
	family string
	at     time.Time
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
		s = &session{calls: map[string]int{}}
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
		if slices.Contains(s.counted, callID) {
			return
		}
		s.counted = appendBounded(s.counted, maxCountedCalls, callID)
	}
	family := c.Family
	if family == "" {
		family = "other"
	}
	s.calls[family]++
	s.recent = appendBounded(s.recent, maxFactItems, recentCall{family: family, at: now})
	for _, p := range c.Reads {
		if !slices.Contains(s.reads, p) {
			s.reads = appendBounded(s.reads, maxFactItems, p)
		}
		if c.Secret && !slices.Contains(s.secrets, p) {
			s.secrets = appendBounded(s.secrets, maxFactItems, p)
		}
	}
	for _, h := range c.Hosts {
		if !slices.Contains(s.hosts, h) {
			s.hosts = appendBounded(s.hosts, maxFactItems, h)
		}
	}
}

func appendBounded[T any](s []T, max int, v T) []T {
	if len(s) >= max {
		s = append(s[:0], s[len(s)-max+1:]...)
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
	recent := make([]*ast.Term, len(s.recent))
	for i, r := range s.recent {
		recent[i] = ast.ObjectTerm(
			ast.Item(ast.StringTerm("family"), ast.StringTerm(r.family)),
			ast.Item(ast.StringTerm("time_ns"), ast.IntNumberTerm(int(r.at.UnixNano()))),
		)
	}
	return ast.NewObject(
		ast.Item(ast.StringTerm("calls"), ast.NewTerm(calls)),
		ast.Item(ast.StringTerm("total_calls"), ast.IntNumberTerm(total)),
		ast.Item(ast.StringTerm("denied"), ast.IntNumberTerm(s.denied)),
		ast.Item(ast.StringTerm("files_read"), stringArray(s.reads)),
		ast.Item(ast.StringTerm("hosts_fetched"), stringArray(s.hosts)),
		ast.Item(ast.StringTerm("secrets_touched"), ast.BooleanTerm(len(s.secrets) > 0)),
		ast.Item(ast.StringTerm("secret_paths"), stringArray(s.secrets)),
		ast.Item(ast.StringTerm("recent"), ast.ArrayTerm(recent...)),
	)
}

func stringArray(ss []string) *ast.Term {
	ts := make([]*ast.Term, len(ss))
	for i, s := range ss {
		ts[i] = ast.StringTerm(s)
	}
	return ast.ArrayTerm(ts...)
}
