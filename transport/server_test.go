package transport

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// fakeInterceptor denies tool "Danger", fails on "Boom", panics on
// "Panic" and has no objection otherwise.
type fakeInterceptor struct{ seen []*InterceptRequest }

func (f *fakeInterceptor) Intercept(_ context.Context, req *InterceptRequest) (*InterceptResult, error) {
	f.seen = append(f.seen, req)
	return fakeDecision(req)
}

// fakeDecision is the fakes' policy.
func fakeDecision(req *InterceptRequest) (*InterceptResult, error) {
	switch req.Event.Tool.Name {
	case "Danger":
		return NewResult(Effect{Type: ahp.EffectDeny, Reason: "no", Code: "com.example.no"}), nil
	case "Boom":
		return nil, errors.New("internal detail that must not leak")
	case "Panic":
		panic("internal detail that must not leak")
	case "Busy":
		return nil, Unavailable("no policy is active yet")
	}
	return NewResult(), nil
}

type recordingObserver struct {
	mu  sync.Mutex
	got []*Observation
}

func (r *recordingObserver) Observe(_ context.Context, o *Observation) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, o)
	return nil
}

const validEvent = `{"id":"e1","source":"urn:x","type":"tool.before","time":"2026-01-02T03:04:05Z",` +
	`"session":{"id":"s1"},"call":{"id":"c1"},"path":"native",` +
	`"tool":{"name":"Bash","origin":"native","input":{"command":"ls"}}}`

func request(id, event, caps string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"hooks/intercept","params":{"protocolVersion":"draft","event":` +
		event + `,"capabilities":` + caps + `}}`
}

// withTool returns validEvent with a tool name replaced.
func withTool(name string) string { return strings.Replace(validEvent, `"Bash"`, `"`+name+`"`, 1) }

func TestHandle(t *testing.T) {
	deny := `{"effects":["deny"]}`
	tests := []struct {
		name   string
		in     string
		code   int    // 0: a result is expected
		id     string // JSON text of the reply id
		reason string // substring of error data.reason
		denied bool
	}{
		{name: "no objection (B-INT-1)", in: request(`"e1"`, validEvent, deny), id: `"e1"`},
		{name: "deny (B-INT-1)", in: request(`"e1"`, withTool("Danger"), deny), id: `"e1"`, denied: true},
		{name: "integer id echoed exactly (B-RPC-3)", in: request(`9007199254740993`, validEvent, deny), id: `9007199254740993`},
		{name: "negative integer id", in: request(`-7`, validEvent, deny), id: `-7`},
		{name: "string id with escapes", in: request(`"e\u0031"`, validEvent, deny), id: `"e1"`},
		{name: "huge exponent names the field", in: request(`"e1"`, strings.Replace(validEvent, `"command":"ls"`, `"command":"ls","n":1e999999`, 1), deny),
			id: `"e1"`, code: ahp.CodeInvalidParams, reason: "event.tool.input.n is a number out of the range a policy can evaluate"},
		{name: "tiny exponent deep in an array", in: request(`"e1"`, strings.Replace(validEvent, `"path"`, `"x":{"y":[1,{"z":-2.5E-999999}]},"path"`, 1), deny),
			id: `"e1"`, code: ahp.CodeInvalidParams, reason: "event.x.y[1].z is a number out of the range a policy can evaluate"},
		{name: "out-of-range number, integer id echoed exactly", in: request(`9007199254740993`, strings.Replace(validEvent, `"command":"ls"`, `"command":"ls","b":1e40000,"a":1e40000`, 1), deny),
			id: `9007199254740993`, code: ahp.CodeInvalidParams, reason: "event.tool.input.a is a number out of the range a policy can evaluate"},
		{name: "large number within range", in: request(`"e1"`, strings.Replace(validEvent, `"command":"ls"`, `"command":"ls","n":1e400`, 1), deny), id: `"e1"`},
		{name: "unknown fields ignored (B-RPC-6)", in: strings.Replace(request(`"e1"`, validEvent, deny), `"params"`, `"extra":{"a":1},"params"`, 1), id: `"e1"`},
		{name: "unknown event fields ignored (B-RPC-6)", in: request(`"e1"`, strings.Replace(validEvent, `"path"`, `"turn":{"id":"t"},"gaps":[],"batch":{},"path"`, 1), deny), id: `"e1"`},
		{name: "legacy shape evaluated (B-INT-5)", in: request(`"e1"`, `{"id":"e1","source":"urn:x","type":"tool.before","time":"2026-01-02T03:04:05Z","session":{"id":"s"},"tool":{"callId":"c","name":"Bash","kind":"shell","input":{}}}`, deny), id: `"e1"`},
		{name: "later-draft capability blocks ignored", in: request(`"e1"`, validEvent, `{"effects":["deny","modify"],"modify":{"input":["replace"]}}`), id: `"e1"`},

		{name: "not JSON (B-STDIO-5)", in: `{"jsonrpc":`, code: ahp.CodeParseError, id: "null"},
		{name: "invalid UTF-8", in: "{\"jsonrpc\":\"2.0\",\"id\":\"\xff\"}", code: ahp.CodeParseError, id: "null"},
		{name: "two values on one line", in: request(`"e1"`, validEvent, deny) + ` {}`, code: ahp.CodeParseError, id: "null"},
		{name: "scalar fragment", in: `"deny"`, code: ahp.CodeParseError, id: "null"},
		{name: "batch (B-RPC-1)", in: `[` + request(`"e1"`, validEvent, deny) + `]`, code: ahp.CodeInvalidRequest, id: "null"},
		{name: "empty batch", in: `[]`, code: ahp.CodeInvalidRequest, id: "null"},
		{name: "null id", in: `{"jsonrpc":"2.0","id":null,"method":"hooks/intercept"}`, code: ahp.CodeInvalidRequest, id: "null"},
		{name: "empty string id", in: `{"jsonrpc":"2.0","id":"","method":"hooks/intercept"}`, code: ahp.CodeInvalidRequest, id: "null"},
		{name: "fractional id", in: `{"jsonrpc":"2.0","id":1.5,"method":"hooks/intercept"}`, code: ahp.CodeInvalidRequest, id: "null"},
		{name: "object id", in: `{"jsonrpc":"2.0","id":{},"method":"hooks/intercept"}`, code: ahp.CodeInvalidRequest, id: "null"},
		{name: "wrong jsonrpc", in: `{"jsonrpc":"1.0","id":"e1","method":"hooks/intercept"}`, code: ahp.CodeInvalidRequest, id: `"e1"`},
		{name: "missing method", in: `{"jsonrpc":"2.0","id":"e1"}`, code: ahp.CodeInvalidRequest, id: `"e1"`},
		{name: "method not a string", in: `{"jsonrpc":"2.0","id":"e1","method":7}`, code: ahp.CodeInvalidRequest, id: `"e1"`},
		{name: "method names are case-sensitive", in: `{"jsonrpc":"2.0","id":"e1","Method":"hooks/intercept"}`, code: ahp.CodeInvalidRequest, id: `"e1"`},
		{name: "observe with id (B-OBS-7)", in: `{"jsonrpc":"2.0","id":"o1","method":"hooks/observe","params":{}}`, code: ahp.CodeInvalidRequest, id: `"o1"`},
		{name: "unknown method (B-RPC-5)", in: `{"jsonrpc":"2.0","id":"e1","method":"hooks/capabilities","params":{"protocolVersion":"draft"}}`, code: ahp.CodeMethodNotFound, id: `"e1"`},

		{name: "missing params (B-VER-2)", in: `{"jsonrpc":"2.0","id":"e1","method":"hooks/intercept"}`, code: ahp.CodeUnsupportedProtocolVersion, id: `"e1"`},
		{name: "missing version (B-VER-2)", in: `{"jsonrpc":"2.0","id":"e1","method":"hooks/intercept","params":{"event":` + validEvent + `}}`, code: ahp.CodeUnsupportedProtocolVersion, id: `"e1"`},
		{name: "old version (B-VER-1)", in: strings.Replace(request(`"e1"`, validEvent, deny), `"draft"`, `"0.1"`, 1), code: ahp.CodeUnsupportedProtocolVersion, id: `"e1"`},
		{name: "dated version (B-VER-1)", in: strings.Replace(request(`"e1"`, validEvent, deny), `"draft"`, `"2026-01-01"`, 1), code: ahp.CodeUnsupportedProtocolVersion, id: `"e1"`},
		{name: "version before event validation (B-VER-2)", in: `{"jsonrpc":"2.0","id":"e1","method":"hooks/intercept","params":{"protocolVersion":"0.1","event":"junk"}}`, code: ahp.CodeUnsupportedProtocolVersion, id: `"e1"`},

		{name: "other event type (B-INT-2)", in: request(`"e1"`, strings.Replace(validEvent, `"tool.before"`, `"tool.after"`, 1), deny), code: ahp.CodeUnsupportedEvent, id: `"e1"`},
		{name: "event type before required fields", in: request(`"e1"`, `{"type":"session.start"}`, `{}`), code: ahp.CodeUnsupportedEvent, id: `"e1"`},

		{name: "event missing", in: `{"jsonrpc":"2.0","id":"e1","method":"hooks/intercept","params":{"protocolVersion":"draft","capabilities":{"effects":[]}}}`, code: ahp.CodeInvalidParams, id: `"e1"`, reason: "params.event"},
		{name: "event type missing", in: request(`"e1"`, `{"id":"e1"}`, deny), code: ahp.CodeInvalidParams, id: `"e1"`, reason: "event.type"},
		{name: "capabilities missing (B-INT-5)", in: `{"jsonrpc":"2.0","id":"e1","method":"hooks/intercept","params":{"protocolVersion":"draft","event":` + validEvent + `}}`, code: ahp.CodeInvalidParams, id: `"e1"`, reason: "capabilities"},
		{name: "effects missing (B-INT-5)", in: request(`"e1"`, validEvent, `{}`), code: ahp.CodeInvalidParams, id: `"e1"`, reason: "capabilities.effects"},
		{name: "effects not strings", in: request(`"e1"`, validEvent, `{"effects":[1]}`), code: ahp.CodeInvalidParams, id: `"e1"`, reason: "capabilities.effects"},
		{name: "input as encoded string (B-RPC-7)", in: request(`"e1"`, strings.Replace(validEvent, `{"command":"ls"}`, `"{\"command\":\"ls\"}"`, 1), deny), code: ahp.CodeInvalidParams, id: `"e1"`, reason: "tool.input"},
		{name: "input missing", in: request(`"e1"`, strings.Replace(validEvent, `,"input":{"command":"ls"}`, ``, 1), deny), code: ahp.CodeInvalidParams, id: `"e1"`, reason: "tool.input"},
		{name: "event id missing", in: request(`"e1"`, strings.Replace(validEvent, `"id":"e1",`, ``, 1), deny), code: ahp.CodeInvalidParams, id: `"e1"`, reason: "event.id"},
		{name: "source missing", in: request(`"e1"`, strings.Replace(validEvent, `"source":"urn:x",`, ``, 1), deny), code: ahp.CodeInvalidParams, id: `"e1"`, reason: "event.source"},
		{name: "time not RFC 3339", in: request(`"e1"`, strings.Replace(validEvent, `2026-01-02T03:04:05Z`, `yesterday`, 1), deny), code: ahp.CodeInvalidParams, id: `"e1"`, reason: "event.time"},
		{name: "tool name missing", in: request(`"e1"`, strings.Replace(validEvent, `"name":"Bash",`, ``, 1), deny), code: ahp.CodeInvalidParams, id: `"e1"`, reason: "tool.name"},
		{name: "call id missing", in: request(`"e1"`, strings.Replace(validEvent, `"call":{"id":"c1"},`, ``, 1), deny), code: ahp.CodeInvalidParams, id: `"e1"`, reason: "call.id"},
		{name: "bad origin", in: request(`"e1"`, strings.Replace(validEvent, `"native","input"`, `"plugin","input"`, 1), deny), code: ahp.CodeInvalidParams, id: `"e1"`, reason: "tool.origin"},
		{name: "session without id", in: request(`"e1"`, strings.Replace(validEvent, `{"id":"s1"}`, `{}`, 1), deny), code: ahp.CodeInvalidParams, id: `"e1"`, reason: "session.id"},
		{name: "outcome on tool.before", in: request(`"e1"`, strings.Replace(validEvent, `"path"`, `"outcome":"ok","path"`, 1), deny), code: ahp.CodeInvalidParams, id: `"e1"`, reason: "outcome"},
		{name: "id differs from event id (B-RPC-8)", in: request(`"other"`, validEvent, deny), code: ahp.CodeInvalidParams, id: `"other"`, reason: "event.id"},

		{name: "deny not advertised is an error (B-INT-6)", in: request(`"e1"`, withTool("Danger"), `{"effects":["flow"]}`), code: ahp.CodeInvalidParams, id: `"e1"`, reason: "deny effect"},
		{name: "no objection needs no advertised deny", in: request(`"e1"`, validEvent, `{"effects":[]}`), id: `"e1"`},
		{name: "handler failure is generic (B-ERR-2)", in: request(`"e1"`, withTool("Boom"), deny), code: ahp.CodeBackendInternalError, id: `"e1"`},
		{name: "handler panic is recovered", in: request(`"e1"`, withTool("Panic"), deny), code: ahp.CodeBackendInternalError, id: `"e1"`},
		{name: "handler rpc error passes through", in: request(`"e1"`, withTool("Busy"), deny), code: ahp.CodeBackendUnavailable, id: `"e1"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := &Server{Interceptor: denyUnadvertised{&fakeInterceptor{}}}
			resp := srv.Handle(context.Background(), []byte(tt.in))
			if resp == nil {
				t.Fatal("no response to a request")
			}
			wire := encode(t, resp)
			if got := resp.ID.String(); got != tt.id {
				t.Errorf("id = %s, want %s", got, tt.id)
			}
			if tt.code == 0 {
				if resp.Error != nil {
					t.Fatalf("error %v, want a result", resp.Error)
				}
				if got := len(resp.Result.Effects) > 0; got != tt.denied {
					t.Errorf("denied = %v, want %v: %s", got, tt.denied, wire)
				}
				if !strings.Contains(wire, `"effects":[`) || !strings.Contains(wire, `"protocolVersion":"draft"`) {
					t.Errorf("result lacks effects array or version: %s", wire)
				}
				return
			}
			if resp.Error == nil {
				t.Fatalf("result %s, want error %d", wire, tt.code)
			}
			if resp.Error.Code != tt.code {
				t.Errorf("code = %d, want %d (%s)", resp.Error.Code, tt.code, wire)
			}
			if tt.reason != "" && !strings.Contains(wire, tt.reason) {
				t.Errorf("error data lacks %q: %s", tt.reason, wire)
			}
			if strings.Contains(wire, "internal detail") {
				t.Errorf("internal detail leaked: %s", wire)
			}
			if strings.Contains(wire, `"result"`) {
				t.Errorf("error response carries a result (B-RPC-3): %s", wire)
			}
		})
	}
}

// denyUnadvertised applies the B-INT-6 rule the way the engine does, so
// the table can check the resulting wire error.
type denyUnadvertised struct{ next Interceptor }

func (d denyUnadvertised) Intercept(ctx context.Context, req *InterceptRequest) (*InterceptResult, error) {
	res, err := d.next.Intercept(ctx, req)
	if err == nil && len(res.Effects) > 0 && !req.Advertises(ahp.EffectDeny) {
		return nil, InvalidParams("the policy denies this call but the request does not advertise the deny effect")
	}
	return res, err
}

func TestUnsupportedVersionData(t *testing.T) {
	srv := &Server{Interceptor: &fakeInterceptor{}}
	resp := srv.Handle(context.Background(), []byte(strings.Replace(request(`"e1"`, validEvent, `{"effects":["deny"]}`), `"draft"`, `"0.1"`, 1)))
	var got struct {
		Error struct {
			Data struct{ Supported []string } `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(encode(t, resp)), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Error.Data.Supported) != 1 || got.Error.Data.Supported[0] != "draft" {
		t.Errorf("data.supported = %v, want [draft] (B-VER-2)", got.Error.Data.Supported)
	}
}

func TestInterceptorSeesValidatedEvent(t *testing.T) {
	fi := &fakeInterceptor{}
	srv := &Server{Interceptor: fi}
	legacy := `{"id":"e1","source":"urn:x","type":"tool.before","time":"2026-01-02T03:04:05Z","session":{"id":"s"},"tool":{"callId":"c7","name":"Bash","kind":"shell","input":{"n":1}}}`
	srv.Handle(context.Background(), []byte(request(`"e1"`, legacy, `{"effects":["deny"]}`)))
	if len(fi.seen) != 1 {
		t.Fatalf("interceptor called %d times", len(fi.seen))
	}
	ev := fi.seen[0].Event
	if ev.CallID != "c7" || ev.Session.ID != "s" || ev.Tool.Kind != "shell" || ev.Tool.Origin != "" {
		t.Errorf("event view = %+v", ev)
	}
	if n, ok := get(ev.Tool.Input, "n").(ast.Number); !ok || n != "1" {
		t.Errorf("input number decoded as %T %v, want the number 1 as written", get(ev.Tool.Input, "n"), get(ev.Tool.Input, "n"))
	}
	if get(ev.Object, "tool") == nil {
		t.Error("Object does not hold the whole event")
	}
}

func TestNotificationsNeverAnswered(t *testing.T) {
	tests := []struct{ name, in, problem string }{
		{"observe session.end", `{"jsonrpc":"2.0","method":"hooks/observe","params":{"protocolVersion":"draft","event":{"id":"e","type":"session.end"}}}`, ""},
		{"observe with subscriptionId", `{"jsonrpc":"2.0","method":"hooks/observe","params":{"protocolVersion":"draft","subscriptionId":"s","event":{"id":"e","type":"tool.after"}}}`, ""},
		{"unknown method", `{"jsonrpc":"2.0","method":"hooks/whatever","params":{}}`, "unknown notification method"},
		{"wrong version", `{"jsonrpc":"2.0","method":"hooks/observe","params":{"protocolVersion":"0.1","event":{}}}`, "unsupported protocol version"},
		{"no params", `{"jsonrpc":"2.0","method":"hooks/observe"}`, "params must be an object"},
		{"no event", `{"jsonrpc":"2.0","method":"hooks/observe","params":{"protocolVersion":"draft"}}`, "params.event must be an object"},
		{"wrong jsonrpc", `{"jsonrpc":"1.0","method":"hooks/observe"}`, `jsonrpc must be "2.0"`},
		{"empty object", `{}`, `jsonrpc must be "2.0"`},
		{"intercept without id", `{"jsonrpc":"2.0","method":"hooks/intercept","params":{}}`, "unknown notification method"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs := &recordingObserver{}
			fi := &fakeInterceptor{}
			srv := &Server{Interceptor: fi, Observer: obs}
			if resp := srv.Handle(context.Background(), []byte(tt.in)); resp != nil {
				t.Fatalf("notification answered (B-RPC-4): %s", encode(t, resp))
			}
			if len(fi.seen) != 0 {
				t.Error("a notification reached the interceptor")
			}
			if len(obs.got) != 1 {
				t.Fatalf("observer called %d times, want 1", len(obs.got))
			}
			if obs.got[0].Problem != tt.problem {
				t.Errorf("problem = %q, want %q", obs.got[0].Problem, tt.problem)
			}
		})
	}
}

func TestObserverPanicIsContained(t *testing.T) {
	srv := &Server{Interceptor: &fakeInterceptor{}, Observer: panicObserver{}}
	in := `{"jsonrpc":"2.0","method":"hooks/observe","params":{"protocolVersion":"draft","event":{}}}`
	if resp := srv.Handle(context.Background(), []byte(in)); resp != nil {
		t.Fatalf("notification answered: %v", resp)
	}
}

type panicObserver struct{}

func (panicObserver) Observe(context.Context, *Observation) error { panic("observer bug") }

func encode(t *testing.T, resp *Response) string {
	t.Helper()
	b, err := json.Marshal(resp)
	if err != nil {
		t.Fatalf("encoding response: %v", err)
	}
	if strings.ContainsAny(string(b), "\n\r") {
		t.Fatalf("encoded response holds a line break (B-STDIO-1): %q", b)
	}
	return string(b)
}

// TestEvaluableNumberMatchesOPA: the transport's bound on numbers is the
// one the policy engine applies, so what passes validation converts.
func TestEvaluableNumberMatchesOPA(t *testing.T) {
	for _, s := range []string{
		"0", "-1", "1.5", "9007199254740993", "1e400", "1e25000", "1e30102", "1e30103", "1e40000",
		"1E-40000", "-2.5e-999999", "1e999999", "0e999999", "0.0000001e30110", "123456789e30100",
	} {
		_, err := ast.NumberChecked(s)
		if got, want := evaluableNumber(s), err == nil; got != want {
			t.Errorf("evaluableNumber(%s) = %v, OPA accepts: %v", s, got, want)
		}
	}
}
