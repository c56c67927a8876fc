package audit

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

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
