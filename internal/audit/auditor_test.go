package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/bundles"
	"github.com/ahp-opa/ahp-opa/engine"
	"github.com/ahp-opa/ahp-opa/transport"
	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// fakeJudge denies tool "Danger" while deny is true, and counts calls.
type fakeJudge struct {
	mu     sync.Mutex
	deny   bool
	calls  int
	reason string
}

func (f *fakeJudge) Judge(_ context.Context, req *transport.InterceptRequest) engine.Verdict {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if req.Event.Tool.Name == "Fail" {
		return engine.Verdict{Err: transport.InternalError("")}
	}
	if f.deny && req.Event.Tool.Name == "Danger" {
		reason := f.reason
		if reason == "" {
			reason = "no"
		}
		d := engine.Decision{Revision: "r1", Matches: []engine.Match{{Package: "p", Code: "com.example.no", Reason: reason}}}
		return engine.Verdict{Decision: d, Result: transport.NewResult(d.Effect())}
	}
	return engine.Verdict{Decision: engine.Decision{Revision: "r1"}, Result: transport.NewResult()}
}

// memWriter collects records.
type memWriter struct {
	mu   sync.Mutex
	recs []Record
	fail error
}

func (m *memWriter) Write(r *Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	m.recs = append(m.recs, *r)
	return nil
}

func (m *memWriter) kinds() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, r := range m.recs {
		out = append(out, r.Kind+":"+r.EventID)
	}
	return out
}

func newReq(id, tool, command string) *transport.InterceptRequest {
	ev := map[string]any{
		"id": id, "source": "urn:h", "type": "tool.before", "time": "2026-01-02T03:04:05Z",
		"session": map[string]any{"id": "s1"}, "call": map[string]any{"id": "c-" + id},
		"tool": map[string]any{"name": tool, "kind": "shell", "input": map[string]any{"command": command}},
	}
	event, err := transport.ParseToolEvent(ast.MustInterfaceToValue(ev).(ast.Object))
	if err != nil {
		panic(err)
	}
	return &transport.InterceptRequest{ID: transport.StringID(id), Effects: []string{ahp.EffectDeny}, Event: event}
}

func observation(typ, id, callID, execution string) *transport.Observation {
	ev := map[string]any{"id": id, "source": "urn:h", "type": typ, "session": map[string]any{"id": "s1"}}
	if callID != "" {
		ev["call"] = map[string]any{"id": callID}
		ev["tool"] = map[string]any{"name": "Bash", "kind": "shell", "input": map[string]any{}}
		ev["outcome"] = "ok"
		ev["execution"] = map[string]any{"status": execution}
	}
	event, err := transport.EventOfMap(ev)
	if err != nil {
		panic(err)
	}
	return &transport.Observation{Method: ahp.MethodObserve, Event: &event}
}

func newAuditor(t *testing.T, cfg Config, w Writer) *Auditor {
	t.Helper()
	a, err := New(cfg, w, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}

func flush(t *testing.T, a *Auditor) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := a.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestDecisionRecords(t *testing.T) {
	w := &memWriter{}
	j := &fakeJudge{deny: true, reason: "do not send password=hunter22 anywhere"}
	a := newAuditor(t, Config{}, w)
	in := a.Interceptor(j)
	ctx := context.Background()

	res, err := in.Intercept(ctx, newReq("e1", "Danger", "x"))
	if err != nil || len(res.Effects) != 1 {
		t.Fatalf("deny: %+v %v", res, err)
	}
	if got := res.Effects[0].Reason; got != "do not send password="+Mask+" anywhere" {
		t.Errorf("reason left the process unredacted: %q", got)
	}
	if _, err := in.Intercept(ctx, newReq("e2", "Bash", "ls")); err != nil {
		t.Fatal(err)
	}
	_, err = in.Intercept(ctx, newReq("e3", "Fail", "ls"))
	var rpcErr *transport.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != ahp.CodeBackendInternalError {
		t.Fatalf("error passes through: %v", err)
	}
	flush(t, a)
	if len(w.recs) != 3 {
		t.Fatalf("records = %v", w.kinds())
	}
	d := w.recs[0]
	if d.Kind != KindDecision || d.Decision != DecisionDeny || d.EventID != "e1" || d.Source != "urn:h" ||
		d.SessionID != "s1" || d.CallID != "c-e1" || d.Tool.Name != "Danger" || d.Tool.Family != "shell" ||
		d.Revision != "r1" || len(d.Codes) != 1 || d.Codes[0] != "com.example.no" || d.Reason != res.Effects[0].Reason {
		t.Errorf("deny record = %+v", d)
	}
	if w.recs[1].Decision != DecisionAllow || w.recs[2].Decision != DecisionError || w.recs[2].ErrorCode != -32004 {
		t.Errorf("allow/error records = %+v / %+v", w.recs[1], w.recs[2])
	}
	if w.recs[0].Input != nil {
		t.Error("input recorded without include_input")
	}
}

// TestRetryAcrossReload: a retry (same source, event id and content) gets
// the first answer even after the policy changed (B-DUP-1), and one audit
// record; a different call reusing the id is decided afresh.
func TestRetryAcrossReload(t *testing.T) {
	w := &memWriter{}
	j := &fakeJudge{deny: true}
	a := newAuditor(t, Config{}, w)
	in := a.Interceptor(j)
	ctx := context.Background()
	first, _ := in.Intercept(ctx, newReq("e1", "Danger", "x"))
	j.mu.Lock()
	j.deny = false // "reload": the new policy allows
	j.mu.Unlock()
	again, _ := in.Intercept(ctx, newReq("e1", "Danger", "x"))
	if len(again.Effects) != 1 || again.Effects[0].Reason != first.Effects[0].Reason {
		t.Errorf("retry answered %+v, want the first answer %+v", again, first)
	}
	fresh, _ := in.Intercept(ctx, newReq("e1", "Danger", "different content"))
	if len(fresh.Effects) != 0 {
		t.Errorf("a different call reusing the id got the cached answer: %+v", fresh)
	}
	flush(t, a)
	if j.calls != 2 || a.Stats().Retries != 1 || len(w.recs) != 2 {
		t.Errorf("judge calls %d, retries %d, records %v", j.calls, a.Stats().Retries, w.kinds())
	}
}

func TestRetryWindowExpires(t *testing.T) {
	j := &fakeJudge{deny: true}
	a := newAuditor(t, Config{RetryWindow: time.Minute}, nil)
	now := time.Now()
	a.now = func() time.Time { return now }
	in := a.Interceptor(j)
	in.Intercept(context.Background(), newReq("e1", "Danger", "x"))
	now = now.Add(2 * time.Minute)
	in.Intercept(context.Background(), newReq("e1", "Danger", "x"))
	if j.calls != 2 {
		t.Errorf("judge called %d times, want 2 after the window", j.calls)
	}
}

func TestObservationsDeduplicated(t *testing.T) {
	w := &memWriter{}
	a := newAuditor(t, Config{}, w)
	obs := a.Observer()
	for range 3 { // B-OBS-6: retried delivery
		obs.Observe(context.Background(), observation("session.start", "o1", "", ""))
	}
	obs.Observe(context.Background(), &transport.Observation{Problem: "params must be an object"})
	obs.Observe(context.Background(), observation("session.end", "o2", "", ""))
	flush(t, a)
	if got := fmt.Sprint(w.kinds()); got != "[observation:o1 observation:o2]" {
		t.Errorf("records = %s", got)
	}
	st := a.Stats()
	if st.DuplicateObservations != 2 || st.InvalidNotifications != 1 || st.Observations != 2 {
		t.Errorf("stats = %+v", st)
	}
}

func TestAnomalyAndNoOutcome(t *testing.T) {
	w := &memWriter{}
	j := &fakeJudge{deny: true}
	a := newAuditor(t, Config{OutcomeTimeout: time.Minute}, w)
	in := a.Interceptor(j)
	ctx := context.Background()
	in.Intercept(ctx, newReq("d1", "Danger", "x")) // denied, then executed anyway
	in.Intercept(ctx, newReq("d2", "Danger", "y")) // denied, skipped: fine
	in.Intercept(ctx, newReq("d3", "Bash", "ls"))  // allowed, never reported
	flush(t, a)
	a.Observer().Observe(ctx, observation("tool.after", "a1", "c-d1", "executed"))
	a.Observer().Observe(ctx, observation("tool.after", "a2", "c-d2", "skipped"))
	flush(t, a)
	a.sweepAt(t, time.Now().Add(2*time.Minute))

	var anomalies, noOutcome []Record
	for _, r := range w.recs {
		switch r.Kind {
		case KindAnomaly:
			anomalies = append(anomalies, r)
		case KindNoOutcome:
			noOutcome = append(noOutcome, r)
		}
	}
	if len(anomalies) != 1 || anomalies[0].CallID != "c-d1" || anomalies[0].DecisionEventID != "d1" || anomalies[0].Execution != "executed" {
		t.Errorf("anomalies = %+v", anomalies)
	}
	if len(noOutcome) != 1 || noOutcome[0].DecisionEventID != "d3" {
		t.Errorf("no_outcome = %+v", noOutcome)
	}
	if st := a.Stats(); st.Anomalies != 1 || st.NoOutcome != 1 {
		t.Errorf("stats = %+v", st)
	}
}

// sweepAt runs a sweep on the worker goroutine, as the ticker would.
func (a *Auditor) sweepAt(t *testing.T, now time.Time) {
	t.Helper()
	done := make(chan struct{})
	a.queue <- item{sweepAt: now, flush: done}
	<-done
}

func TestQueueOverflowNeverBlocks(t *testing.T) {
	block := make(chan struct{})
	w := &blockingWriter{release: block}
	a, err := New(Config{QueueSize: 4}, w, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	in := a.Interceptor(&fakeJudge{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 100 {
			in.Intercept(context.Background(), newReq(fmt.Sprint("e", i), "Bash", "ls"))
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("intercepts blocked on a full audit queue (B-OBS-2)")
	}
	close(block)
	a.Close()
	st := a.Stats()
	if st.Dropped == 0 || st.Decisions != 100 {
		t.Errorf("stats = %+v, want drops counted", st)
	}
	if got := w.n.Load() + st.Dropped; got != 100 {
		t.Errorf("written %d + dropped %d != 100", w.n.Load(), st.Dropped)
	}
}

type blockingWriter struct {
	release chan struct{}
	n       atomic.Uint64
}

func (b *blockingWriter) Write(*Record) error {
	<-b.release
	b.n.Add(1)
	return nil
}

func TestWriteFailureKeepsDeciding(t *testing.T) {
	w := &memWriter{fail: errors.New("disk full")}
	a := newAuditor(t, Config{}, w)
	res, err := a.Interceptor(&fakeJudge{deny: true}).Intercept(context.Background(), newReq("e1", "Danger", "x"))
	if err != nil || len(res.Effects) != 1 {
		t.Fatalf("decision changed by a write failure: %+v %v", res, err)
	}
	flush(t, a)
	if a.Stats().WriteFailures != 1 {
		t.Errorf("write failures = %d", a.Stats().WriteFailures)
	}
}

func TestIncludeInputIsRedacted(t *testing.T) {
	w := &memWriter{}
	a := newAuditor(t, Config{IncludeInput: true, Redact: RedactConfig{Drop: []string{"session"}}}, w)
	a.Interceptor(&fakeJudge{}).Intercept(context.Background(), newReq("e1", "Bash", "curl -H 'Authorization: Bearer abcdefghijklmnop1234' x"))
	flush(t, a)
	b, _ := json.Marshal(w.recs[0].Input)
	if !json.Valid(b) || w.recs[0].Input == nil {
		t.Fatalf("input = %s", b)
	}
	if s := string(b); strings.Contains(s, "abcdefghijklmnop1234") || strings.Contains(s, `"session"`) || !strings.Contains(s, Mask) {
		t.Errorf("recorded input = %s", s)
	}
}

func TestSessionFacts(t *testing.T) {
	classify := func(ev *transport.Event, _ ast.Value) Call {
		var cmd string
		if c := ev.Tool.Input.Get(ast.StringTerm("command")); c != nil {
			cmd = string(c.Value.(ast.String))
		}
		if cmd == "cat .env" {
			return Call{Family: "file_read", Reads: []string{"/repo/.env"}, Secret: true}
		}
		return Call{Family: "shell"}
	}
	a := newAuditor(t, Config{Classify: classify}, nil)
	in := a.Interceptor(&fakeJudge{deny: true})
	ctx := context.Background()
	in.Intercept(ctx, newReq("e1", "Bash", "cat .env"))
	in.Intercept(ctx, newReq("e2", "Bash", "ls"))
	in.Intercept(ctx, newReq("e3", "Danger", "x"))
	in.Intercept(ctx, newReq("e2", "Bash", "ls")) // a retry counts once
	a.Observer().Observe(ctx, observation("tool.after", "a2", "c-e2", "executed"))
	flush(t, a)

	v := a.Facts().Session(context.Background(), "urn:h", "s1")
	if v == nil {
		t.Fatal("no facts for the session")
	}
	for path, want := range map[string]string{
		"calls.shell":     "1",
		"calls.file_read": "1",
		"total_calls":     "2",
		"denied":          "1",
		"files_read":      `["/repo/.env"]`,
		"files_written":   "[]",
		"secrets_touched": "true",
		"secret_paths":    `["/repo/.env"]`,
		"hosts_fetched":   "[]",
	} {
		got, err := v.Find(ast.MustParseRef("x." + path)[1:])
		if err != nil || got.String() != want {
			t.Errorf("%s = %v (%v), want %s", path, got, err, want)
		}
	}
	a.Observer().Observe(ctx, observation("session.end", "end", "", ""))
	flush(t, a)
	// An end can be forged from inside the session: the facts stay.
	v = a.Facts().Session(context.Background(), "urn:h", "s1")
	if got, err := v.Find(ast.MustParseRef("x.secrets_touched")[1:]); err != nil || got.String() != "true" {
		t.Errorf("after session.end secrets_touched = %v (%v), want true", got, err)
	}
}

// TestFactsWhenThePolicyReadsNoEnrichment: the engine enriches an event
// only with what the policy reads. What the call touches is then analysed
// for the session facts from the event, but only once some policy has read
// the facts (Facts.InUse): until then nothing would use the analysis.
func TestFactsWhenThePolicyReadsNoEnrichment(t *testing.T) {
	m, err := ast.ParseModuleWithOpts("p.rego", "package ahp.tool.before.p\ndeny contains \"no\" if input.tool.name == \"Danger\"", ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		t.Fatal(err)
	}
	eng := engine.New(engine.Options{})
	if err := eng.Load(context.Background(), &bundles.Policy{Modules: map[string]*ast.Module{"p.rego": m}}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name      string
		factsRead bool // a policy read session facts before the call
		wantRead  string
	}{
		{"facts never read", false, "[]"},
		{"facts read before", true, `["/repo/.env"]`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := newAuditor(t, Config{}, nil)
			if tt.factsRead {
				a.Facts().Session(context.Background(), "urn:h", "another session")
			}
			if a.Facts().InUse() != tt.factsRead {
				t.Fatalf("InUse = %v before the call", !tt.factsRead)
			}
			ctx := context.Background()
			if _, err := a.Interceptor(eng).Intercept(ctx, newReq("e1", "Bash", "cat /repo/.env")); err != nil {
				t.Fatal(err)
			}
			flush(t, a)
			v := a.Facts().Session(context.Background(), "urn:h", "s1")
			if v == nil {
				t.Fatal("no facts for the session")
			}
			got, err := v.Find(ast.MustParseRef("x.files_read")[1:])
			if err != nil {
				got = ast.NewArray()
			}
			if got.String() != tt.wantRead {
				t.Errorf("files_read = %v, want %s", got, tt.wantRead)
			}
		})
	}
}
