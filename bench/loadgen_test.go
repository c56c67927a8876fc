package bench

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var testEvent = map[string]any{
	"id": "x", "source": "urn:test", "type": "tool.before", "time": "2026-01-02T03:04:05Z",
	"call": map[string]any{"id": "c"}, "path": "native",
	"tool": map[string]any{"name": "Bash", "origin": "native", "input": map[string]any{"command": "ls"}},
}

// fakeAHP answers like ahp-opa; wrongEvery > 0 makes every n-th answer
// carry another id.
func fakeAHP(t *testing.T, deny bool, wrongEvery int) (*httptest.Server, *sync.Map) {
	seen := &sync.Map{}
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     string
			Params struct{ Event map[string]any }
		}
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &req); err != nil || r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "bad request", 400)
			return
		}
		if req.Params.Event["id"] != req.ID {
			http.Error(w, "event id differs", 400)
			return
		}
		if _, dup := seen.LoadOrStore(req.ID, true); dup {
			http.Error(w, "id reused", 400)
			return
		}
		mu.Lock()
		n++
		wrong := wrongEvery > 0 && n%wrongEvery == 0
		mu.Unlock()
		id := req.ID
		if wrong {
			id = "other"
		}
		effects := "[]"
		if deny {
			effects = `[{"type":"deny","reason":"no"}]`
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":"`+id+`","result":{"protocolVersion":"draft","effects":`+effects+`}}`)
	}))
	t.Cleanup(srv.Close)
	return srv, seen
}

func TestRunAHP(t *testing.T) {
	srv, seen := fakeAHP(t, false, 0)
	opts := Options{Conns: 3, Requests: 90, Event: testEvent, Warmup: 20 * time.Millisecond}
	r, err := Run(context.Background(), Target{Protocol: AHP, URL: srv.URL + "/ahp"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 90 || r.Errors != 0 || r.P50 <= 0 || r.P99 < r.P50 || r.RPS() <= 0 {
		t.Errorf("result %+v (first error %v)", r, r.FirstErr)
	}
	// A second run must not reuse ids either (B-DUP-1 replays would skip
	// the evaluation being measured).
	if _, err := Run(context.Background(), Target{Protocol: AHP, URL: srv.URL + "/ahp"}, opts); err != nil {
		t.Fatal(err)
	}
	count := 0
	seen.Range(func(any, any) bool { count++; return true })
	if count < 180 {
		t.Errorf("%d distinct ids for at least 180 requests", count)
	}
}

func TestRunCountsWrongAnswers(t *testing.T) {
	tests := []struct {
		name       string
		deny, want bool
		wrongEvery int
		errors     int
	}{
		{"decision differs", true, false, 0, 40},
		{"id differs", false, false, 4, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := fakeAHP(t, tt.deny, tt.wrongEvery)
			r, err := Run(context.Background(), Target{Protocol: AHP, URL: srv.URL},
				Options{Conns: 1, Requests: 40, Event: testEvent, Deny: tt.want})
			if err != nil {
				t.Fatal(err)
			}
			if r.Errors != tt.errors || r.FirstErr == nil {
				t.Errorf("errors %d (%v), want %d", r.Errors, r.FirstErr, tt.errors)
			}
		})
	}
}

func TestRunOPA(t *testing.T) {
	var mu sync.Mutex
	var inputs []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Input map[string]any }
		json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		inputs = append(inputs, body.Input)
		mu.Unlock()
		if r.URL.Path != "/v1/data/ahp/deny" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, `{"result":["no"]}`)
	}))
	defer srv.Close()
	opts := Options{Conns: 2, Requests: 20, Event: testEvent, Deny: true,
		OPAInput: func(ev map[string]any) (any, error) {
			return map[string]any{"event": ev, "ahp": map[string]any{"extra": true}}, nil
		}}
	r, err := Run(context.Background(), Target{Protocol: OPA, URL: srv.URL + "/v1/data/ahp/deny"}, opts)
	if err != nil || r.Errors != 0 || r.Requests != 20 {
		t.Fatalf("%+v %v (first error %v)", r, err, r.FirstErr)
	}
	mu.Lock()
	defer mu.Unlock()
	if ev, _ := inputs[0]["event"].(map[string]any); ev == nil || !strings.HasPrefix(ev["id"].(string), "bench-") || inputs[0]["ahp"] == nil {
		t.Errorf("OPA input = %v", inputs[0])
	}
}

func TestRunByDuration(t *testing.T) {
	srv, _ := fakeAHP(t, false, 0)
	start := time.Now()
	r, err := Run(context.Background(), Target{Protocol: AHP, URL: srv.URL},
		Options{Conns: 2, Duration: 100 * time.Millisecond, Event: testEvent})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second || r.Requests == 0 || r.Errors != 0 {
		t.Errorf("took %v for %d requests, %d errors", took, r.Requests, r.Errors)
	}
}

func TestRunRejectsBadOptions(t *testing.T) {
	for _, o := range []Options{{Conns: 0, Requests: 1, Event: testEvent}, {Conns: 1, Event: testEvent}, {Conns: 1, Requests: 1}} {
		if _, err := Run(context.Background(), Target{URL: "http://127.0.0.1:1/"}, o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	if _, err := Run(context.Background(), Target{URL: "https://x/"}, Options{Conns: 1, Requests: 1, Event: testEvent}); err == nil {
		t.Error("https accepted")
	}
}

func TestMedian(t *testing.T) {
	rs := []Result{
		{Requests: 100, Elapsed: time.Second, P50: 3, P99: 30, CPU: 100 * 5},
		{Requests: 300, Elapsed: time.Second, P50: 1, P99: 10, CPU: 300 * 1, Errors: 1},
		{Requests: 200, Elapsed: time.Second, P50: 2, P99: 20, CPU: 200 * 2},
	}
	m := Median(rs)
	if m.RPS() != 200 || m.P50 != 2 || m.P99 != 20 || m.CPUPerRequest() != 2 || m.Errors != 1 {
		t.Errorf("median %+v", m)
	}
}

// TestRunClaudeHook: the native hook protocol posts the event as a Claude
// Code PreToolUse payload with a new tool_use_id per request, and accepts
// {} or a deny, nothing else.
func TestRunClaudeHook(t *testing.T) {
	seen := &sync.Map{}
	var answer atomic.Value
	answer.Store(`{}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p struct {
			Hook      string         `json:"hook_event_name"`
			ToolName  string         `json:"tool_name"`
			ToolInput map[string]any `json:"tool_input"`
			ToolUseID string         `json:"tool_use_id"`
		}
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &p); err != nil || p.Hook != "PreToolUse" || p.ToolName != "Bash" || p.ToolInput["command"] != "ls" {
			http.Error(w, "bad payload", 400)
			return
		}
		if _, dup := seen.LoadOrStore(p.ToolUseID, true); dup {
			http.Error(w, "tool_use_id reused", 400)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, answer.Load().(string))
	}))
	t.Cleanup(srv.Close)
	target := Target{Protocol: ClaudeHook, URL: srv.URL + "/hooks/claude-code"}
	r, err := Run(context.Background(), target, Options{Conns: 2, Requests: 40, Event: testEvent})
	if err != nil || r.Errors != 0 || r.Requests != 40 {
		t.Fatalf("no objection: %+v, %v (first error %v)", r, err, r.FirstErr)
	}
	answer.Store(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}`)
	if r, err := Run(context.Background(), target, Options{Conns: 1, Requests: 5, Event: testEvent, Deny: true}); err != nil || r.Errors != 0 {
		t.Fatalf("deny: %+v, %v (first error %v)", r, err, r.FirstErr)
	}
	answer.Store(`{"permissionDecision":"allow"}`)
	if r, err := Run(context.Background(), target, Options{Conns: 1, Requests: 5, Event: testEvent}); err != nil || r.Errors != 5 {
		t.Fatalf("allow must count as wrong: %+v, %v", r, err)
	}
}
