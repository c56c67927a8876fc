package service

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/engine"
	"github.com/ahp-opa/ahp-opa/internal/audit"
	"github.com/ahp-opa/ahp-opa/internal/rollout"
	"github.com/ahp-opa/ahp-opa/transport"
)

// heldCandidate decides its first free evaluations at once and holds the
// rest until release is closed, so that a test keeps some in the queue.
type heldCandidate struct {
	free    int
	n       *atomic.Int64
	release chan struct{}
}

func (h heldCandidate) Decide(context.Context, ast.Value) (engine.Decision, error) {
	if int(h.n.Add(1)) > h.free {
		<-h.release
	}
	return engine.Decision{}, nil
}

type allowJudge struct{}

func (allowJudge) Judge(context.Context, *transport.InterceptRequest) engine.Verdict {
	return engine.Verdict{Result: &transport.InterceptResult{}, Input: ast.NewObject()}
}

type noRecorder struct{}

func (noRecorder) Note(*audit.Record, map[string]any) {}

// TestCanaryCountsAcrossASwap: the canary counters a scrape reads never go
// down while a reload swaps the canary out, and count the evaluations the
// old canary still had queued, which it finishes while it stops.
func TestCanaryCountsAcrossASwap(t *testing.T) {
	for _, tc := range []struct{ done, queued int }{{0, 1}, {3, 5}} {
		s := &Service{}
		release := make(chan struct{})
		cand := heldCandidate{free: tc.done, n: new(atomic.Int64), release: release}
		old := &stack{canary: rollout.NewCanary(cand, noRecorder{}, rollout.CanaryOptions{})}
		s.cur.Store(old)
		judge := old.canary.Wrap(allowJudge{})
		for i := range tc.done + tc.queued {
			ev, err := transport.EventOfMap(map[string]any{"id": string(rune('a' + i)), "type": "tool.before", "source": "urn:t"})
			if err != nil {
				t.Fatal(err)
			}
			judge.Judge(context.Background(), &transport.InterceptRequest{Event: ev})
		}
		for deadline := time.Now().Add(10 * time.Second); old.canary.Stats().Evaluated < uint64(tc.done); {
			if time.Now().After(deadline) {
				t.Fatalf("the canary evaluated %d of %d", old.canary.Stats().Evaluated, tc.done)
			}
			runtime.Gosched() // the canary's worker has nothing to signal on
		}
		before := s.canaryCounts().Evaluated
		next := &stack{canary: rollout.NewCanary(cand, noRecorder{}, rollout.CanaryOptions{})}
		s.swapStack(next)
		if got := s.canaryCounts().Evaluated; got < before {
			t.Errorf("%+v: evaluated went down from %d to %d at the swap", tc, before, got)
		}
		close(release)
		s.stopRetired(old)
		if got, want := s.canaryCounts().Evaluated, uint64(tc.done+tc.queued); got != want {
			t.Errorf("%+v: evaluated %d once the old canary stopped, want %d", tc, got, want)
		}
		next.canary.Close()
	}
}
