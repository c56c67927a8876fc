package nativehook

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ahp-opa/ahp-opa/internal/adapters"
	"github.com/ahp-opa/ahp-opa/internal/testkit"
	"github.com/ahp-opa/ahp-opa/transport"
	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// claudePayload is a Claude Code PreToolUse payload for a tool named tool.
func claudePayload(tool string) string {
	return `{"session_id":"s1","cwd":"/home/dev/repo","hook_event_name":"PreToolUse","tool_name":"` + tool +
		`","tool_input":{"command":"ls"},"tool_use_id":"t1"}`
}

const (
	copilotDanger = `{"sessionId":"s1","timestamp":1796229886487,"cwd":"/home/dev/repo","toolName":"Danger","toolArgs":{"command":"ls"}}`
	claudePost    = `{"session_id":"s1","cwd":"/home/dev/repo","hook_event_name":"PostToolUse","tool_name":"Bash",` +
		`"tool_input":{"command":"ls"},"tool_response":{"stdout":"a"},"tool_use_id":"t1"}`
)

// TestHookDecider: a native event is decided through the Interceptor as a
// hooks/intercept request would be, and its errors become reasons that say
// what to do without passing internals on.
func TestHookDecider(t *testing.T) {
	tests := []struct {
		tool   string
		deny   bool
		reason string // substring of the reason, or of the error
		err    bool
	}{
		{tool: "Bash"},
		{tool: "Danger", deny: true, reason: "no"},
		{tool: "Busy", err: true, reason: "no decision: no policy is active yet"},
		{tool: "Boom", err: true, reason: "policy evaluation failed"},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			f := &fakeInterceptor{}
			ev, err := adapters.Parse(adapters.ClaudeCode, []byte(claudePayload(tt.tool)), fixedNow)
			if err != nil {
				t.Fatal(err)
			}
			d, err := Decider{Interceptor: f}.Decide(context.Background(), ev)
			if (err != nil) != tt.err || d.Deny != tt.deny {
				t.Fatalf("Decide = %+v, %v", d, err)
			}
			got := d.Reason
			if err != nil {
				got = err.Error()
				if strings.Contains(got, "internal detail") {
					t.Errorf("the reason passes internals on: %q", got)
				}
			}
			if !strings.Contains(got, tt.reason) {
				t.Errorf("reason %q lacks %q", got, tt.reason)
			}
			if len(f.seen) != 1 {
				t.Fatalf("interceptor asked %d times", len(f.seen))
			}
			req := f.seen[0]
			if !req.Advertises(ahp.EffectDeny) || req.Size != len(claudePayload(tt.tool)) || req.ID.String() != `"`+req.Event.ID+`"` {
				t.Errorf("request = %+v", req)
			}
		})
	}
}

// TestHookDeciderObserve: an observation reaches the Observer as a valid
// hooks/observe notification.
func TestHookDeciderObserve(t *testing.T) {
	ev, err := adapters.Parse(adapters.ClaudeCode, []byte(claudePost), fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	obs := &recordingObserver{}
	if err := (Decider{Observer: obs}).Observe(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	if len(obs.got) != 1 {
		t.Fatalf("%d observations", len(obs.got))
	}
	o := obs.got[0]
	if o.Problem != "" || o.Method != ahp.MethodObserve || o.Event == nil || o.Event.Type != ahp.EventToolAfter ||
		o.Event.Tool.Name == "" || o.Event.CallID == "" || o.Event.Object == nil {
		t.Fatalf("observation = %+v", o)
	}
	if err := (Decider{}).Observe(context.Background(), ev); err != nil {
		t.Fatalf("without an observer: %v", err)
	}
}

// TestHTTPHooks: POST /hooks/AGENT answers in the agent's own format, with
// the AHP endpoint's token, limits and recorder; whatever cannot be decided
// gets the agent's deny at 200, since agents read other statuses as "go
// ahead".
func TestHTTPHooks(t *testing.T) {
	claudeDeny := func(reason string) string {
		return `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"` + reason + `"}}`
	}
	tests := []struct {
		name     string
		path     string
		body     string
		hdr      []string
		failOpen bool
		status   int
		want     string // the exact body, as JSON where it is JSON
		contains string // or a substring of the deny reason / text body
	}{
		{name: "deny", path: "claude-code", body: claudePayload("Danger"), status: 200, want: claudeDeny("no")},
		{name: "no objection", path: "claude-code", body: claudePayload("Bash"), status: 200, want: `{}`},
		{name: "copilot deny", path: "copilot", body: copilotDanger, status: 200,
			want: `{"permissionDecision":"deny","permissionDecisionReason":"no"}`},
		{name: "observation", path: "claude-code", body: claudePost, status: 200, want: `{}`},
		{name: "bad payload", path: "claude-code", body: `{"tool_name":`, status: 200, contains: "ahp-opa: unusable hook payload"},
		{name: "not an object", path: "copilot", body: `[1]`, status: 200, contains: "is this hook registered for copilot"},
		{name: "undecidable", path: "claude-code", body: claudePayload("Boom"), status: 200, contains: "policy evaluation failed"},
		{name: "panic", path: "claude-code", body: claudePayload("Panic"), status: 200, contains: "internal error"},
		{name: "oversize", path: "claude-code", body: claudePayload(strings.Repeat("x", 2048)), status: 200, contains: "larger than the 1024 bytes"},
		{name: "oversize, fail-open", path: "claude-code", body: claudePayload(strings.Repeat("x", 2048)), failOpen: true, status: 200, want: `{}`},
		{name: "bad payload, fail-open", path: "claude-code", body: `nope`, failOpen: true, status: 200, want: `{}`},
		{name: "no token", path: "claude-code", body: claudePayload("Danger"), hdr: []string{"Authorization", ""}, status: 401},
		{name: "wrong token", path: "claude-code", body: claudePayload("Danger"), hdr: []string{"Authorization", "Bearer nope"}, status: 401},
		{name: "not JSON", path: "claude-code", body: claudePayload("Danger"), hdr: []string{"Content-Type", "", "Content-Type", "text/plain"}, status: 415},
		{name: "command-only agent", path: "codex", body: claudePayload("Danger"), status: 404,
			contains: `no HTTP hook for "codex"; HTTP hooks are /hooks/claude-code, /hooks/copilot`},
		{name: "unknown agent", path: "claude", body: claudePayload("Danger"), status: 404, contains: "/hooks/claude-code"},
		{name: "no agent", path: "", body: claudePayload("Danger"), status: 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs := &recordingObserver{}
			rec := newRecorder()
			h := &transport.HTTP{
				Server: &transport.Server{Interceptor: statelessInterceptor{}, Observer: obs}, Token: testToken,
				MaxBodyBytes: 1024, Recorder: rec,
				Mounts: map[string]transport.Mount{PathPrefix: &Handler{Options: adapters.Options{FailOpen: tt.failOpen}}},
			}
			url, c := startHTTPTest(t, h)
			hdr := append([]string{"Authorization", "Bearer " + testToken}, tt.hdr...)
			if len(tt.hdr) > 0 && tt.hdr[0] == "Authorization" {
				hdr = tt.hdr
			}
			got := post(t, c, url+PathPrefix+tt.path, tt.body, hdr...)
			if got.status != tt.status {
				t.Fatalf("status %d, want %d; body %s", got.status, tt.status, got.body)
			}
			if n, _ := rec.get(tt.status, 0); n != 1 {
				t.Errorf("recorder saw %d answers with status %d", n, tt.status)
			}
			switch {
			case tt.want != "":
				testkit.SameJSON(t, got.body, []byte(tt.want))
				if got.header.Get("Content-Type") != "application/json" {
					t.Errorf("Content-Type %q", got.header.Get("Content-Type"))
				}
			case tt.contains != "" && tt.status == 200:
				var ans map[string]any
				if err := json.Unmarshal(got.body, &ans); err != nil {
					t.Fatalf("not JSON: %s", got.body)
				}
				if out, ok := ans["hookSpecificOutput"].(map[string]any); ok {
					ans = out // Claude Code's form; Copilot's is flat
				}
				if ans["permissionDecision"] != "deny" {
					t.Fatalf("not a deny: %s", got.body)
				}
				if r, _ := ans["permissionDecisionReason"].(string); !strings.Contains(r, tt.contains) {
					t.Errorf("reason %q lacks %q", r, tt.contains)
				}
			case tt.contains != "":
				if !strings.Contains(string(got.body), tt.contains) {
					t.Errorf("body %q lacks %q", got.body, tt.contains)
				}
			}
			if strings.Contains(string(got.body), "internal detail") {
				t.Errorf("the answer passes internals on: %s", got.body)
			}
			if tt.name == "observation" && (len(obs.got) != 1 || obs.got[0].Event.Type != ahp.EventToolAfter) {
				t.Errorf("observations: %+v", obs.got)
			}
		})
	}
}

// TestHTTPHooksOff: without the mount the native paths do not exist.
func TestHTTPHooksOff(t *testing.T) {
	url, c := startHTTPTest(t, &transport.HTTP{Server: &transport.Server{Interceptor: statelessInterceptor{}}})
	if got := post(t, c, url+"/hooks/claude-code", claudePayload("Danger")); got.status != http.StatusNotFound {
		t.Fatalf("status %d", got.status)
	}
}

var fixedNow = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)

const testToken = "s3cr3t-t0ken-for-tests-0123456789"

// fakeDecision is the fakes' policy: it denies "Danger", fails on "Boom",
// panics on "Panic", is unavailable on "Busy", has no objection otherwise.
func fakeDecision(req *transport.InterceptRequest) (*transport.InterceptResult, error) {
	switch req.Event.Tool.Name {
	case "Danger":
		return transport.NewResult(transport.Effect{Type: ahp.EffectDeny, Reason: "no", Code: "com.example.no"}), nil
	case "Boom":
		return nil, errors.New("internal detail that must not leak")
	case "Panic":
		panic("internal detail that must not leak")
	case "Busy":
		return nil, transport.Unavailable("no policy is active yet")
	}
	return transport.NewResult(), nil
}

type fakeInterceptor struct{ seen []*transport.InterceptRequest }

func (f *fakeInterceptor) Intercept(_ context.Context, req *transport.InterceptRequest) (*transport.InterceptResult, error) {
	f.seen = append(f.seen, req)
	return fakeDecision(req)
}

// statelessInterceptor is fakeInterceptor without its request log, for
// concurrent requests.
type statelessInterceptor struct{}

func (statelessInterceptor) Intercept(_ context.Context, req *transport.InterceptRequest) (*transport.InterceptResult, error) {
	return fakeDecision(req)
}

type recordingObserver struct {
	mu  sync.Mutex
	got []*transport.Observation
}

func (r *recordingObserver) Observe(_ context.Context, o *transport.Observation) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, o)
	return nil
}

// recorder is a transport.HTTPRecorder counting answers by status.
type recorder struct {
	mu       sync.Mutex
	statuses map[int]int
}

func newRecorder() *recorder { return &recorder{statuses: map[int]int{}} }

func (r *recorder) Answered(status, _ int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.statuses[status]++
}

func (r *recorder) Overloaded() {}

func (r *recorder) get(status, _ int) (int, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.statuses[status], 0
}

// startHTTPTest serves h through httptest and returns its base URL and a
// client.
func startHTTPTest(t *testing.T, h *transport.HTTP) (string, *http.Client) {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL, ts.Client()
}

type httpReply struct {
	status int
	header http.Header
	body   []byte
}

// post sends body with a JSON content type and hdr (name, value pairs; an
// empty value removes the header).
func post(t *testing.T, c *http.Client, url, body string, hdr ...string) httpReply {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
		} else {
			req.Header.Add(hdr[i], hdr[i+1])
		}
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return httpReply{status: resp.StatusCode, header: resp.Header, body: b}
}
