package audit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/engine"
	"github.com/ahp-opa/ahp-opa/transport"
	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// fakeShared is a Shared store in memory whose availability a test sets.
type fakeShared struct {
	mu      sync.Mutex
	down    bool
	pending map[string]SharedPending
	asked   int // TakePending calls that reached the store
}

func (f *fakeShared) Load(context.Context, Query) (Loaded, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return Loaded{}, errors.New("down")
	}
	return Loaded{}, nil
}

func (f *fakeShared) Send(Update) {}

func (f *fakeShared) TakePending(_ context.Context, _, _, call string) (SharedPending, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked++
	p, ok := f.pending[call]
	delete(f.pending, call)
	return p, ok, nil
}

func (f *fakeShared) Health() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return "down"
	}
	return ""
}

func (f *fakeShared) set(down bool, pending map[string]SharedPending) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.down, f.pending = down, pending
}

// TestLateToolAfter: a tool.after whose decision (made by another
// replica) is not in the store yet, or comes while the store is down, is
// joined at a later sweep; a store known to be down is not asked at all,
// so it cannot hold the worker.
func TestLateToolAfter(t *testing.T) {
	w := &memWriter{}
	a := newAuditor(t, Config{}, w)
	store := &fakeShared{}
	a.Share(SharedOptions{Store: store})
	ctx := context.Background()

	store.set(true, nil)
	a.Observer().Observe(ctx, observation("tool.after", "a1", "c-x1", "executed"))
	flush(t, a)
	a.sweepAt(t, time.Now())
	if store.asked != 0 {
		t.Errorf("a store known to be down was asked %d times", store.asked)
	}

	store.set(false, map[string]SharedPending{"c-x1": {EventID: "x1", Decision: DecisionDeny, Tool: &Tool{Name: "Bash"}}})
	a.sweepAt(t, time.Now())
	var anomalies []Record
	for _, r := range w.recs {
		if r.Kind == KindAnomaly {
			anomalies = append(anomalies, r)
		}
	}
	if len(anomalies) != 1 || anomalies[0].DecisionEventID != "x1" {
		t.Fatalf("anomalies = %+v, want one for x1", anomalies)
	}

	// One that never finds its decision is given up after maxLateTries.
	a.Observer().Observe(ctx, observation("tool.after", "a2", "c-none", "executed"))
	flush(t, a)
	for range maxLateTries + 1 {
		a.sweepAt(t, time.Now())
	}
	if n := len(a.shared.late); n != 0 {
		t.Errorf("%d tool.after records still waiting after %d sweeps", n, maxLateTries+1)
	}
}

// TestToolAfterWithoutCallID: a tool.after that names no call cannot be
// joined with any decision (a decision without a call id leaves nothing
// pending), so the shared store is not asked for it, now or at a sweep,
// and it does not take a place among the late records.
func TestToolAfterWithoutCallID(t *testing.T) {
	for _, tc := range []struct {
		name string
		ev   map[string]any
	}{
		{"no call", map[string]any{"id": "a1", "source": "urn:h", "type": "tool.after", "session": map[string]any{"id": "s1"}}},
		{"a tool but no call id", map[string]any{"id": "a2", "source": "urn:h", "type": "tool.after", "session": map[string]any{"id": "s1"},
			"tool":    map[string]any{"name": "Bash", "kind": "shell", "input": map[string]any{}},
			"outcome": "ok", "execution": map[string]any{"status": "executed"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAuditor(t, Config{}, &memWriter{})
			store := &fakeShared{}
			a.Share(SharedOptions{Store: store})
			event, err := transport.EventOfMap(tc.ev)
			if err != nil {
				t.Fatal(err)
			}
			a.Observer().Observe(context.Background(), &transport.Observation{Method: ahp.MethodObserve, Event: &event})
			flush(t, a)
			a.sweepAt(t, time.Now())
			if store.asked != 0 || len(a.shared.late) != 0 {
				t.Errorf("store asked %d times, %d late records; want 0 and 0", store.asked, len(a.shared.late))
			}
		})
	}
}

// sessionJudge reads the session's facts as a policy reading
// input.ahp.session does, and denies when they are marked stale.
type sessionJudge struct {
	facts *Facts
	read  bool // whether this policy reads the session at all
}

func (j *sessionJudge) Judge(ctx context.Context, req *transport.InterceptRequest) engine.Verdict {
	if j.read {
		facts, _ := j.facts.Session(ctx, req.Event.Source, req.Event.Session.ID).(ast.Object)
		if facts != nil && facts.Get(ast.InternedTerm("stale")) != nil {
			d := engine.Decision{Revision: "r1", Matches: []engine.Match{{Package: "p", Code: "t.stale", Reason: "stale"}}}
			return engine.Verdict{Decision: d, Result: transport.NewResult(d.Effect())}
		}
	}
	return engine.Verdict{Decision: engine.Decision{Revision: "r1"}, Result: transport.NewResult()}
}

// TestSessionNotReadIsStale: a policy that reads input.ahp.session is
// never given this replica's own facts unmarked when they were not read
// from the shared store for its decision: they miss what other replicas
// decided. That happens when the read was planned without the session
// (the policy that judged was not active yet, as on a replica just
// started, or a reload changed it) or when the store did not answer.
// Such a decision is stale for the policy, in its record and in the
// count, and refused with state.required.
func TestSessionNotReadIsStale(t *testing.T) {
	for _, tc := range []struct {
		name                      string
		down, planned, policyRead bool
		required                  bool
		want                      string
		wantStale                 bool
	}{
		{name: "read from the store", planned: true, policyRead: true, want: "allow"},
		{name: "policy does not read the session, store down", down: true, want: "allow"},
		{name: "read not planned", policyRead: true, want: "deny t.stale", wantStale: true},
		{name: "read not planned, store down", down: true, policyRead: true, want: "deny t.stale", wantStale: true},
		{name: "planned, store down", down: true, planned: true, policyRead: true, want: "deny t.stale", wantStale: true},
		{name: "read not planned, required", policyRead: true, required: true, want: "error -32003", wantStale: true},
		{name: "planned, store down, required", down: true, planned: true, policyRead: true, required: true,
			want: "error -32003", wantStale: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &memWriter{}
			facts := NewFacts(0)
			a, err := New(Config{}, w, facts, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(a.Close)
			store := &fakeShared{}
			store.set(tc.down, nil)
			a.Share(SharedOptions{Store: store, ReadsSession: func() bool { return tc.planned }, Required: tc.required})
			in := a.Interceptor(&sessionJudge{facts: facts, read: tc.policyRead})
			got := "allow"
			res, err := in.Intercept(context.Background(), newReq("e1", "Bash", "curl https://example.com"))
			var te *transport.Error
			switch {
			case errors.As(err, &te):
				got = fmt.Sprintf("error %d", te.Code)
			case err != nil:
				t.Fatal(err)
			case len(res.Effects) > 0:
				got = "deny " + res.Effects[0].Code
			}
			flush(t, a)
			if got != tc.want {
				t.Errorf("answer %s, want %s", got, tc.want)
			}
			if len(w.recs) != 1 || w.recs[0].Stale != tc.wantStale {
				t.Errorf("records %+v, want one with stale %v", w.recs, tc.wantStale)
			}
			if n := a.Stats().StaleDecisions; n != map[bool]uint64{true: 1}[tc.wantStale] {
				t.Errorf("stale decisions counted: %d, want it for a stale record only", n)
			}
		})
	}
}
