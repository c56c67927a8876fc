package audit

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
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
