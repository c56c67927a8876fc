package rollout

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/engine"
	"github.com/ahp-opa/ahp-opa/internal/audit"
	"github.com/ahp-opa/ahp-opa/transport"
	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// fixedJudge is a live policy that always gives the same verdict.
type fixedJudge struct{ v engine.Verdict }

func (j fixedJudge) Judge(context.Context, *transport.InterceptRequest) engine.Verdict { return j.v }

func liveAllow() engine.Verdict {
	return engine.Verdict{Result: transport.NewResult(), Input: ast.NewObject(), Decision: engine.Decision{Revision: "live"}}
}

func liveDeny(code string) engine.Verdict {
	d := engine.Decision{Revision: "live", Matches: []engine.Match{{Package: "ahp.tool.before.t", Code: code, Reason: "live says no"}}}
	return engine.Verdict{Result: transport.NewResult(d.Effect()), Input: ast.NewObject(), Decision: d}
}

// candidateFunc is a canary policy written as a function.
type candidateFunc func(ctx context.Context, input ast.Value) (engine.Decision, error)

func (f candidateFunc) Decide(ctx context.Context, input ast.Value) (engine.Decision, error) {
	return f(ctx, input)
}

func denies(code, reason string) candidateFunc {
	return func(context.Context, ast.Value) (engine.Decision, error) {
		return engine.Decision{Revision: "canary", Matches: []engine.Match{{Package: "ahp.tool.before.t", Code: code, Reason: reason}}}, nil
	}
}

// notes keeps what a canary records.
type notes struct {
	mu   sync.Mutex
	recs []*audit.Record
}

func (n *notes) Note(r *audit.Record, _ map[string]any) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.recs = append(n.recs, r)
}

func request(id string) *transport.InterceptRequest {
	return &transport.InterceptRequest{
		Event: transport.Event{ID: id, Source: "urn:test", Type: "tool.before", Session: transport.Session{ID: "s1"}, CallID: "c-" + id,
			Tool: transport.Tool{Name: "Bash"}, Object: ast.MustInterfaceToValue(map[string]any{"id": id}).(ast.Object)},
		Effects: []string{ahp.EffectDeny},
	}
}

func TestCanaryRecordsDisagreements(t *testing.T) {
	tests := []struct {
		name     string
		live     engine.Verdict
		cand     candidateFunc
		disagree bool
		canary   string
	}{
		{"both allow", liveAllow(), func(context.Context, ast.Value) (engine.Decision, error) { return engine.Decision{}, nil }, false, ""},
		{"both deny alike", liveDeny("com.example.a"), denies("com.example.a", "live says no"), false, ""},
		{"canary denies", liveAllow(), denies("com.example.new", "new rule"), true, audit.DecisionDeny},
		{"canary allows", liveDeny("com.example.a"), func(context.Context, ast.Value) (engine.Decision, error) { return engine.Decision{}, nil }, true, audit.DecisionAllow},
		{"canary rewords", liveDeny("com.example.a"), denies("com.example.a", "other words"), true, audit.DecisionDeny},
		{"canary fails", liveAllow(), func(context.Context, ast.Value) (engine.Decision, error) {
			return engine.Decision{}, errors.New("boom")
		}, true, audit.DecisionError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &notes{}
			c := NewCanary(tt.cand, rec, CanaryOptions{})
			j := c.Wrap(fixedJudge{tt.live})
			v := j.Judge(context.Background(), request("e1"))
			if v.Result != tt.live.Result {
				t.Fatal("the canary changed the answer")
			}
			c.Close() // evaluates what is queued
			st := c.Stats()
			if st.Evaluated != 1 || st.Dropped != 0 {
				t.Fatalf("stats %+v, want 1 evaluated, none dropped", st)
			}
			if !tt.disagree {
				if len(rec.recs) != 0 || st.Disagreements != 0 {
					t.Fatalf("agreement recorded: %+v, %+v", rec.recs, st)
				}
				return
			}
			if len(rec.recs) != 1 || st.Disagreements != 1 {
				t.Fatalf("want one disagreement recorded, got %d (stats %+v)", len(rec.recs), st)
			}
			r := rec.recs[0]
			live := verdictOutcome(tt.live)
			if r.Kind != audit.KindCanary || r.EventID != "e1" || r.SessionID != "s1" || r.CallID != "c-e1" ||
				r.Decision != live.Decision || r.Revision != "live" || r.Canary == nil || r.Canary.Decision != tt.canary {
				t.Errorf("record %+v canary %+v", r, r.Canary)
			}
		})
	}
}

// TestCanaryNeverWaits: the answer comes back while the canary policy is
// still evaluating, and is the live one.
func TestCanaryNeverWaits(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	cand := candidateFunc(func(context.Context, ast.Value) (engine.Decision, error) {
		close(started)
		<-release
		return engine.Decision{}, nil
	})
	c := NewCanary(cand, &notes{}, CanaryOptions{})
	live := liveDeny("com.example.a")
	v := c.Wrap(fixedJudge{live}).Judge(context.Background(), request("e1"))
	<-started // the canary is evaluating this very event, and the answer is already here
	if v.Result != live.Result || v.Err != nil {
		t.Fatalf("answer %+v, want the live one", v)
	}
	close(release)
	c.Close()
	if st := c.Stats(); st.Disagreements != 1 {
		t.Fatalf("stats %+v, want the disagreement counted once the canary finished", st)
	}
}

// TestCanaryDropsUnderLoad: with the worker busy and the queue full, more
// events are answered and dropped from the canary, and counted.
func TestCanaryDropsUnderLoad(t *testing.T) {
	started, release := make(chan struct{}, 8), make(chan struct{})
	cand := candidateFunc(func(context.Context, ast.Value) (engine.Decision, error) {
		started <- struct{}{}
		<-release
		return engine.Decision{}, nil
	})
	c := NewCanary(cand, &notes{}, CanaryOptions{QueueSize: 2})
	j := c.Wrap(fixedJudge{liveAllow()})
	j.Judge(context.Background(), request("busy"))
	<-started // the worker holds the first event
	for _, id := range []string{"q1", "q2", "d1", "d2", "d3"} {
		if v := j.Judge(context.Background(), request(id)); v.Result == nil {
			t.Fatalf("%s got no answer", id)
		}
	}
	if st := c.Stats(); st.Dropped != 3 {
		t.Fatalf("dropped %d, want 3 (queue of 2 full, worker busy)", st.Dropped)
	}
	close(release)
	c.Close()
	if st := c.Stats(); st.Evaluated != 3 || st.Dropped != 3 {
		t.Fatalf("stats %+v, want 3 evaluated and 3 dropped", st)
	}
}

// TestCanaryWithEngines: a real canary engine sees the live engine's input,
// and the auditor writes the disagreement with redacted reasons.
func TestCanaryWithEngines(t *testing.T) {
	live := loadEngine(t, `package ahp.tool.before.t
deny contains {"reason": "no rm", "code": "com.example.rm"} if input.tool.input.command == "rm x"
`, nil)
	cand := loadEngine(t, candidate, nil)
	w := &memWriter{}
	aud, err := audit.New(audit.Config{IncludeInput: true}, w, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := NewCanary(EngineCandidate(cand, 0), aud, CanaryOptions{})
	srv := aud.Interceptor(c.Wrap(live))
	for _, rec := range calls(
		call{id: "e1", command: "rm x"},                          // both deny alike
		call{id: "e2", command: "git push token=hunter2hunter2"}, // the canary denies
		call{id: "e3", command: "ls"},                            // both allow
	) {
		req := requestOf(rec)
		want := live.Judge(context.Background(), req)
		res, err := srv.Intercept(context.Background(), req)
		if err != nil || len(res.Effects) != len(want.Result.Effects) {
			t.Fatalf("%s: answer %+v %v, want the live policy's %+v", rec.EventID, res, err, want.Result)
		}
	}
	c.Close()
	aud.Close()
	var canary []*audit.Record
	for _, r := range w.recs {
		if r.Kind == audit.KindCanary {
			canary = append(canary, r)
		}
	}
	if len(canary) != 1 {
		t.Fatalf("canary records %d, want 1", len(canary))
	}
	r := canary[0]
	if r.EventID != "e2" || r.Decision != audit.DecisionAllow || r.Canary.Decision != audit.DecisionDeny ||
		r.Canary.Codes[0] != "com.example.push" || r.Canary.Revision != "candidate" || r.Input == nil {
		t.Errorf("record %+v canary %+v", r, r.Canary)
	}
	cmd := r.Input["tool"].(map[string]any)["input"].(map[string]any)["command"].(string)
	if cmd == "git push token=hunter2hunter2" {
		t.Errorf("the recorded input was not redacted: %q", cmd)
	}
}

type memWriter struct {
	mu   sync.Mutex
	recs []*audit.Record
}

func (w *memWriter) Write(r *audit.Record) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.recs = append(w.recs, r)
	return nil
}
