package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ahp-opa/ahp-opa/internal/testkit"
	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// Tests of the HTTP binding. Rule ids refer to ../shared/ahp/PROTOCOL.md.

const testToken = "s3cr3t-t0ken-for-tests-0123456789"

// statelessInterceptor is fakeInterceptor without its request log, so
// that concurrent requests do not race: it denies "Danger", fails on
// "Boom", panics on "Panic", is unavailable on "Busy", has no objection
// otherwise.
type statelessInterceptor struct{}

func (statelessInterceptor) Intercept(_ context.Context, req *InterceptRequest) (*InterceptResult, error) {
	return fakeDecision(req)
}

// countingObserver counts notifications without keeping them.
type countingObserver struct{ n atomic.Int64 }

func (c *countingObserver) Observe(context.Context, *Observation) error { c.n.Add(1); return nil }

// recorder is a HTTPRecorder that remembers what it was told.
type recorder struct {
	mu         sync.Mutex
	statuses   map[int]int
	codes      map[int]int
	overloaded int
	panicOnce  atomic.Bool
}

func newRecorder() *recorder { return &recorder{statuses: map[int]int{}, codes: map[int]int{}} }

func (r *recorder) Answered(status, code int) {
	if r.panicOnce.CompareAndSwap(true, false) {
		panic("recorder bug")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.statuses[status]++
	if code != 0 {
		r.codes[code]++
	}
}

func (r *recorder) Overloaded() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.overloaded++
}

func (r *recorder) get(status, code int) (int, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.statuses[status], r.codes[code]
}

func newHTTP(interceptor Interceptor) *HTTP {
	return &HTTP{Server: &Server{Interceptor: interceptor, Observer: &countingObserver{}}}
}

// startHTTPTest serves h through httptest and returns its base URL and a
// client that never follows redirects (B-HTTP-5).
func startHTTPTest(t *testing.T, h *HTTP) (string, *http.Client) {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	c := ts.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return ts.URL, c
}

// postAsync posts body to /ahp and sends the reply, or the client error
// as status -1, to out.
func postAsync(c *http.Client, url, body string, out chan<- httpReply) {
	resp, err := c.Post(url+"/ahp", "application/json", strings.NewReader(body))
	if err != nil {
		out <- httpReply{status: -1, body: []byte(err.Error())}
		return
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	out <- httpReply{status: resp.StatusCode, body: b}
}

type httpReply struct {
	status int
	header http.Header
	body   []byte
}

// rpc decodes the body as a JSON-RPC response: id (JSON text) and error
// code (0 for a result).
func (r httpReply) rpc(t *testing.T) (id string, code int, denied bool) {
	t.Helper()
	var v struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  *struct {
			ProtocolVersion string            `json:"protocolVersion"`
			Effects         []json.RawMessage `json:"effects"`
		} `json:"result"`
		Error *struct{ Code int } `json:"error"`
	}
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("body is not JSON (%v): %q", err, r.body)
	}
	if v.JSONRPC != "2.0" || (v.Result == nil) == (v.Error == nil) {
		t.Fatalf("body is not a JSON-RPC response with a result xor an error (B-RPC-3): %s", r.body)
	}
	if v.Error != nil {
		return string(v.ID), v.Error.Code, false
	}
	if v.Result.ProtocolVersion != ahp.Version || v.Result.Effects == nil {
		t.Fatalf("result lacks protocolVersion or effects (B-VER-3, B-EFF-1): %s", r.body)
	}
	return string(v.ID), 0, len(v.Result.Effects) > 0
}

func do(t *testing.T, c *http.Client, req *http.Request) httpReply {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading body: %v", err)
	}
	return httpReply{status: resp.StatusCode, header: resp.Header, body: body}
}

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
	return do(t, c, req)
}

func observeNote(event string) string {
	return `{"jsonrpc":"2.0","method":"hooks/observe","params":{"protocolVersion":"draft","event":` + event + `}}`
}

// TestHTTPStatuses covers every status of PROTOCOL.md §8.
func TestHTTPStatuses(t *testing.T) {
	deny := `{"effects":["deny"]}`
	req := request(`"e1"`, validEvent, deny)
	json := "application/json"
	tests := []struct {
		name        string
		method      string
		path        string // default /ahp
		contentType string // default application/json; "-" for none
		body        string
		chunked     bool
		status      int
		id          string // reply id (JSON text) when a JSON-RPC body is expected
		code        int    // JSON-RPC error code, 0 for a result
		denied      bool
		allow       string // expected Allow header
		says        string // a refusal's plain-text body holds this
	}{
		{name: "intercept no objection (B-HTTP-3)", body: req, status: 200, id: `"e1"`},
		{name: "intercept deny (B-HTTP-3)", body: request(`"e1"`, withTool("Danger"), deny), status: 200, id: `"e1"`, denied: true},
		{name: "integer id echoed (B-RPC-3)", body: request(`7`, validEvent, deny), status: 200, id: `7`},
		{name: "charset=utf-8 accepted (B-HTTP-2)", contentType: json + "; charset=utf-8", body: req, status: 200, id: `"e1"`},
		{name: "charset is case-insensitive (B-HTTP-2)", contentType: json + ";charset=UTF-8", body: req, status: 200, id: `"e1"`},
		{name: "chunked body", body: req, chunked: true, status: 200, id: `"e1"`},

		{name: "notification accepted (B-HTTP-4)", body: observeNote(validEvent), status: 202},
		{name: "observe of another type (B-OBS-3)", body: observeNote(`{"type":"session.end"}`), status: 202},
		{name: "invalid notification gets no error (B-OBS-1)", body: `{"jsonrpc":"2.0","method":"hooks/observe"}`, status: 202},
		{name: "intercept without id is a notification (B-RPC-4)", body: `{"jsonrpc":"2.0","method":"hooks/intercept","params":{}}`, status: 202},

		{name: "unparseable JSON", body: `{"jsonrpc":`, status: 400, id: "null", code: ahp.CodeParseError},
		{name: "empty body", body: ``, status: 400, id: "null", code: ahp.CodeParseError},
		{name: "not UTF-8", body: "{\"a\":\"\xff\"}", status: 400, id: "null", code: ahp.CodeParseError},
		{name: "two objects", body: req + req, status: 400, id: "null", code: ahp.CodeParseError},
		{name: "batch (B-RPC-1)", body: `[` + req + `]`, status: 400, id: "null", code: ahp.CodeInvalidRequest},
		{name: "null id", body: `{"jsonrpc":"2.0","id":null,"method":"hooks/intercept"}`, status: 400, id: "null", code: ahp.CodeInvalidRequest},

		{name: "unsupported version (B-VER-2)", body: strings.Replace(req, `"draft"`, `"0.1"`, 1), status: 200, id: `"e1"`, code: ahp.CodeUnsupportedProtocolVersion},
		{name: "unsupported event (B-INT-2)", body: request(`"e1"`, strings.Replace(validEvent, "tool.before", "tool.after", 1), deny), status: 200, id: `"e1"`, code: ahp.CodeUnsupportedEvent},
		{name: "invalid params (B-INT-5)", body: request(`"e1"`, validEvent, `{}`), status: 200, id: `"e1"`, code: ahp.CodeInvalidParams},
		{name: "unknown method (B-RPC-5)", body: `{"jsonrpc":"2.0","id":"x","method":"hooks/capabilities"}`, status: 200, id: `"x"`, code: ahp.CodeMethodNotFound},
		{name: "observe with id (B-OBS-7)", body: `{"jsonrpc":"2.0","id":"o1","method":"hooks/observe","params":{}}`, status: 200, id: `"o1"`, code: ahp.CodeInvalidRequest},
		{name: "backend unavailable", body: request(`"e1"`, withTool("Busy"), deny), status: 200, id: `"e1"`, code: ahp.CodeBackendUnavailable},
		{name: "evaluation failure", body: request(`"e1"`, withTool("Boom"), deny), status: 200, id: `"e1"`, code: ahp.CodeBackendInternalError},
		{name: "panic becomes -32004", body: request(`"e1"`, withTool("Panic"), deny), status: 200, id: `"e1"`, code: ahp.CodeBackendInternalError},

		{name: "no content type", contentType: "-", body: req, status: 415, says: "Content-Type: application/json"},
		{name: "text/plain", contentType: "text/plain", body: req, status: 415, says: "Content-Type: application/json"},
		{name: "other charset", contentType: json + "; charset=latin1", body: req, status: 415},
		{name: "other parameter", contentType: json + "; profile=x", body: req, status: 415},
		{name: "json-seq", contentType: "application/json-seq", body: req, status: 415},
		{name: "malformed content type", contentType: "application/json; charset", body: req, status: 415},

		{name: "GET on the endpoint", method: http.MethodGet, status: 405, allow: "POST", says: "use POST"},
		{name: "PUT on the endpoint", method: http.MethodPut, body: req, status: 405, allow: "POST", says: "use POST"},
		{name: "HEAD on the endpoint", method: http.MethodHead, status: 405, allow: "POST"},

		{name: "body over the limit", body: req + strings.Repeat(" ", DefaultMaxBodyBytes), status: 413, says: "larger than"},
		{name: "chunked body over the limit", body: req + strings.Repeat(" ", DefaultMaxBodyBytes), chunked: true, status: 413, says: "larger than"},

		{name: "trailing slash is not the endpoint (no redirect)", path: "/ahp/", body: req, status: 404},
		{name: "dot segments are not cleaned (no redirect)", path: "/x/../ahp", body: req, status: 404},
		{name: "unknown path", path: "/v1/data", body: req, status: 404},
		{name: "healthz", method: http.MethodGet, path: "/healthz", status: 200},
		{name: "healthz HEAD", method: http.MethodHead, path: "/healthz", status: 200},
		{name: "healthz POST", path: "/healthz", body: "{}", status: 405, allow: "GET, HEAD"},
		{name: "readyz", method: http.MethodGet, path: "/readyz", status: 200},
		{name: "metrics without a handler", method: http.MethodGet, path: "/metrics", status: 404},
	}
	h := newHTTP(statelessInterceptor{})
	base, c := startHTTPTest(t, h)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method := tt.method
			if method == "" {
				method = http.MethodPost
			}
			path := tt.path
			if path == "" {
				path = "/ahp"
			}
			var body io.Reader = strings.NewReader(tt.body)
			if tt.chunked {
				body = io.MultiReader(body) // hides the length: sent chunked
			}
			req, err := http.NewRequest(method, base+path, body)
			if err != nil {
				t.Fatal(err)
			}
			req.URL.Path = path // keep dot segments as written
			switch tt.contentType {
			case "":
				req.Header.Set("Content-Type", json)
			case "-":
			default:
				req.Header.Set("Content-Type", tt.contentType)
			}
			r := do(t, c, req)
			if r.status != tt.status {
				t.Fatalf("status = %d, want %d; body %q", r.status, tt.status, r.body)
			}
			if tt.allow != "" && r.header.Get("Allow") != tt.allow {
				t.Errorf("Allow = %q, want %q", r.header.Get("Allow"), tt.allow)
			}
			if tt.id == "" {
				// A refusal says in a line of text what to change;
				// an accepted notification has no body (B-HTTP-4).
				switch {
				case tt.says != "" && !bytes.Contains(r.body, []byte(tt.says)):
					t.Errorf("body = %q, want one saying %q", r.body, tt.says)
				case tt.status == http.StatusAccepted && len(r.body) != 0:
					t.Errorf("body = %q, want none", r.body)
				}
				return
			}
			if ct := r.header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q, want application/json (B-HTTP-2)", ct)
			}
			id, code, denied := r.rpc(t)
			if id != tt.id || code != tt.code || denied != tt.denied {
				t.Errorf("reply id %s code %d denied %v, want id %s code %d denied %v: %s",
					id, code, denied, tt.id, tt.code, tt.denied, r.body)
			}
			if bytes.Contains(r.body, []byte("internal detail")) {
				t.Errorf("internal detail leaked (B-ERR-2): %s", r.body)
			}
		})
	}
}

// TestHTTPAuth: the bearer token is checked first, in constant time, and
// never echoed or logged (B-HTTP-7).
func TestHTTPAuth(t *testing.T) {
	req := request(`"e1"`, validEvent, `{"effects":["deny"]}`)
	tests := []struct {
		name   string
		path   string
		method string
		auth   []string // Authorization header values
		status int
	}{
		{name: "missing", auth: nil, status: 401},
		{name: "wrong token", auth: []string{"Bearer nope"}, status: 401},
		{name: "prefix of the token", auth: []string{"Bearer " + testToken[:10]}, status: 401},
		{name: "token with a suffix", auth: []string{"Bearer " + testToken + "x"}, status: 401},
		{name: "empty token", auth: []string{"Bearer "}, status: 401},
		{name: "other scheme", auth: []string{"Basic " + testToken}, status: 401},
		{name: "no scheme", auth: []string{testToken}, status: 401},
		{name: "two headers", auth: []string{"Bearer " + testToken, "Bearer " + testToken}, status: 401},
		{name: "right token", auth: []string{"Bearer " + testToken}, status: 200},
		{name: "scheme is case-insensitive", auth: []string{"bearer " + testToken}, status: 200},
		{name: "wrong method still needs the token first", method: http.MethodGet, auth: nil, status: 401},
		{name: "metrics need the token", path: "/metrics", method: http.MethodGet, auth: nil, status: 401},
		{name: "metrics with the token", path: "/metrics", method: http.MethodGet, auth: []string{"Bearer " + testToken}, status: 200},
		{name: "healthz is open", path: "/healthz", method: http.MethodGet, status: 200},
		{name: "readyz is open", path: "/readyz", method: http.MethodGet, status: 200},
	}
	var logs testkit.Buffer
	h := newHTTP(statelessInterceptor{})
	h.Token = testToken
	h.Metrics = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "m 1\n") })
	h.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method, path := tt.method, tt.path
			if method == "" {
				method = http.MethodPost
			}
			if path == "" {
				path = "/ahp"
			}
			body := &watchedBody{r: strings.NewReader(req)}
			r := httptest.NewRequest(method, path, body)
			r.Header.Set("Content-Type", "application/json")
			for _, a := range tt.auth {
				r.Header.Add("Authorization", a)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tt.status {
				t.Fatalf("status = %d, want %d", w.Code, tt.status)
			}
			if tt.status != http.StatusUnauthorized {
				return
			}
			if got := w.Header().Get("WWW-Authenticate"); !strings.HasPrefix(got, "Bearer") {
				t.Errorf("WWW-Authenticate = %q, want a Bearer challenge", got)
			}
			if w.Body.Len() != 0 {
				t.Errorf("401 body = %q, want none", w.Body.String())
			}
			if body.read.Load() {
				t.Error("the body was read before the token was checked (B-HTTP-7)")
			}
		})
	}
	if strings.Contains(logs.String(), testToken[:10]) || strings.Contains(logs.String(), "nope") {
		t.Errorf("a token reached the log (B-HTTP-7):\n%s", logs.String())
	}
}

type watchedBody struct {
	r    io.Reader
	read atomic.Bool
}

func (b *watchedBody) Read(p []byte) (int, error) {
	b.read.Store(true)
	return b.r.Read(p)
}

// TestHTTPAuthConstantTime pins how the token is compared: through
// crypto/subtle on fixed-length digests, never with == on the token
// (B-HTTP-7). Timing cannot be measured reliably in a test; the code can.
func TestHTTPAuthConstantTime(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "http.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var fn *ast.FuncDecl
	for _, d := range f.Decls {
		if d, ok := d.(*ast.FuncDecl); ok && d.Name.Name == "authorized" {
			fn = d
		}
	}
	if fn == nil {
		t.Fatal("func (h *HTTP) authorized not found in http.go")
	}
	var constantTime, usesToken bool
	ast.Inspect(fn, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if id, ok := n.X.(*ast.Ident); ok && id.Name == "subtle" && n.Sel.Name == "ConstantTimeCompare" {
				constantTime = true
			}
			if n.Sel.Name == "Token" {
				usesToken = true
			}
		}
		return true
	})
	if !constantTime {
		t.Error("authorized does not call subtle.ConstantTimeCompare")
	}
	if usesToken {
		t.Error("authorized reads the plain token; it must compare digests only")
	}
}

// TestHTTPBodyLimit: a body at the limit is read, one byte more is 413
// (B-HTTP-8).
func TestHTTPBodyLimit(t *testing.T) {
	const limit = 4096
	base := request(`"e1"`, validEvent, `{"effects":["deny"]}`)
	pad := func(n int) string {
		// An unknown member is ignored (B-RPC-6): pad with it.
		return strings.Replace(base, `{"jsonrpc"`, `{"pad":"`+strings.Repeat("x", n)+`","jsonrpc"`, 1)
	}
	atLimit := pad(limit - len(pad(0)))
	if len(atLimit) != limit {
		t.Fatalf("padding built %d bytes", len(atLimit))
	}
	h := newHTTP(statelessInterceptor{})
	h.MaxBodyBytes = limit
	url, c := startHTTPTest(t, h)
	tests := []struct {
		name    string
		body    string
		chunked bool
		status  int
	}{
		{"at the limit", atLimit, false, 200},
		{"at the limit, chunked", atLimit, true, 200},
		{"one byte over", atLimit + " ", false, 413},
		{"one byte over, chunked", atLimit + " ", true, 413},
		{"far over", strings.Repeat(atLimit, 100), false, 413},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body io.Reader = strings.NewReader(tt.body)
			if tt.chunked {
				body = io.MultiReader(body)
			}
			req, _ := http.NewRequest(http.MethodPost, url+"/ahp", body)
			req.Header.Set("Content-Type", "application/json")
			if r := do(t, c, req); r.status != tt.status {
				t.Errorf("status = %d, want %d: %s", r.status, tt.status, r.body)
			}
		})
	}
}

// gate blocks every evaluation until released, and says when one starts.
type gate struct {
	started chan string
	release chan struct{}
}

func newGate() *gate { return &gate{started: make(chan string, 64), release: make(chan struct{})} }

func (g *gate) Intercept(ctx context.Context, req *InterceptRequest) (*InterceptResult, error) {
	g.started <- req.Event.ID
	<-g.release
	return NewResult(), nil
}

func eventRequest(id string) string {
	ev := strings.Replace(validEvent, `"id":"e1"`, `"id":"`+id+`"`, 1)
	return request(`"`+id+`"`, ev, `{"effects":["deny"]}`)
}

// TestHTTPOverload: with every evaluation slot busy a request is refused
// at once with -32003 and its id, while notifications still go through.
func TestHTTPOverload(t *testing.T) {
	g := newGate()
	rec := newRecorder()
	obs := &countingObserver{}
	h := &HTTP{Server: &Server{Interceptor: g, Observer: obs}, Concurrency: 2, QueueWait: -1, Recorder: rec}
	url, c := startHTTPTest(t, h)

	first := make(chan httpReply, 2)
	for _, id := range []string{"a", "b"} {
		go postAsync(c, url, eventRequest(id), first)
	}
	<-g.started
	<-g.started // both slots taken

	r := post(t, c, url+"/ahp", eventRequest("c"))
	id, code, _ := r.rpc(t)
	if r.status != 200 || id != `"c"` || code != ahp.CodeBackendUnavailable || !bytes.Contains(r.body, []byte("overloaded")) {
		t.Errorf("overloaded reply = %d %s, want 200 with -32003 for id c", r.status, r.body)
	}
	if r := post(t, c, url+"/ahp", observeNote(validEvent)); r.status != 202 {
		t.Errorf("notification while overloaded: status %d, want 202 (B-OBS-2)", r.status)
	}
	if r := post(t, c, url+"/ahp", `{`); r.status != 400 {
		t.Errorf("parse error while overloaded: status %d, want 400", r.status)
	}
	close(g.release)
	for range 2 {
		if r := <-first; r.status != 200 {
			t.Errorf("request in flight: status %d, body %s", r.status, r.body)
		}
	}
	if r := post(t, c, url+"/ahp", eventRequest("d")); r.status != 200 {
		t.Errorf("after the overload: status %d", r.status)
	} else if _, code, _ := r.rpc(t); code != 0 {
		t.Errorf("after the overload: error %d", code)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.overloaded != 1 || rec.codes[ahp.CodeBackendUnavailable] != 1 {
		t.Errorf("recorder: overloaded %d, -32003 answers %d; want 1 and 1", rec.overloaded, rec.codes[ahp.CodeBackendUnavailable])
	}
	if obs.n.Load() != 1 {
		t.Errorf("observer saw %d notifications, want 1", obs.n.Load())
	}
}

// TestHTTPQueueWait: a request waits for a slot instead of failing when
// one frees up within QueueWait.
func TestHTTPQueueWait(t *testing.T) {
	g := newGate()
	h := &HTTP{Server: &Server{Interceptor: g}, Concurrency: 1, QueueWait: time.Minute}
	url, c := startHTTPTest(t, h)
	replies := make(chan httpReply, 2)
	for _, id := range []string{"a", "b"} {
		go postAsync(c, url, eventRequest(id), replies)
	}
	<-g.started
	close(g.release) // the first finishes; the queued one gets the slot
	for range 2 {
		r := <-replies
		if r.status != 200 || bytes.Contains(r.body, []byte("error")) {
			t.Errorf("reply %d %s, want a result", r.status, r.body)
		}
	}
}

// TestHTTPReadiness: /readyz follows Ready and reports a shutdown.
func TestHTTPReadiness(t *testing.T) {
	var ready atomic.Bool
	h := newHTTP(statelessInterceptor{})
	h.Ready = ready.Load
	url, c := startHTTPTest(t, h)
	get := func(path string) int {
		resp, err := c.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := get("/readyz"); s != 503 {
		t.Errorf("readyz before a policy = %d, want 503", s)
	}
	if s := get("/healthz"); s != 200 {
		t.Errorf("healthz before a policy = %d, want 200", s)
	}
	ready.Store(true)
	if s := get("/readyz"); s != 200 {
		t.Errorf("readyz with a policy = %d, want 200", s)
	}
	h.draining.Store(true)
	if s := get("/readyz"); s != 503 {
		t.Errorf("readyz while shutting down = %d, want 503", s)
	}
}

// TestHTTPHealthDetail: a problem that leaves decisions working (a failing
// audit sink) shows on both probes; a fatal one (audit.required) also
// makes /readyz fail.
func TestHTTPHealthDetail(t *testing.T) {
	cases := []struct {
		name                string
		problem             string
		fatal               bool
		healthz, readyz     string
		healthzSt, readyzSt int
	}{
		{"healthy", "", false, "ok\n", "ready\n", 200, 200},
		{"audit failing", "audit log failing since T: broken pipe", false,
			"ok; degraded: audit log failing since T: broken pipe\n", "ready; degraded: audit log failing since T: broken pipe\n", 200, 200},
		{"audit failing and required", "audit log failing since T: broken pipe", true,
			"ok; degraded: audit log failing since T: broken pipe\n", "audit log failing since T: broken pipe\n", 200, 503},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHTTP(statelessInterceptor{})
			h.Health = func() (string, bool) { return tc.problem, tc.fatal }
			url, c := startHTTPTest(t, h)
			get := func(path string) (int, string) {
				resp, err := c.Get(url + path)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(b)
			}
			if st, body := get("/healthz"); st != tc.healthzSt || body != tc.healthz {
				t.Errorf("/healthz = %d %q, want %d %q", st, body, tc.healthzSt, tc.healthz)
			}
			if st, body := get("/readyz"); st != tc.readyzSt || body != tc.readyz {
				t.Errorf("/readyz = %d %q, want %d %q", st, body, tc.readyzSt, tc.readyz)
			}
		})
	}
}

// TestHTTPRecorder: every answer is reported with its status and code; a
// recorder that panics does not cost the harness its answer.
func TestHTTPRecorder(t *testing.T) {
	rec := newRecorder()
	h := newHTTP(statelessInterceptor{})
	h.Recorder = rec
	h.Token = testToken
	url, c := startHTTPTest(t, h)
	auth := []string{"Authorization", "Bearer " + testToken}
	post(t, c, url+"/ahp", eventRequest("a"), auth...)
	post(t, c, url+"/ahp", `{`, auth...)
	post(t, c, url+"/ahp", observeNote(validEvent), auth...)
	post(t, c, url+"/ahp", eventRequest("b"))
	for _, w := range []struct{ status, n, code, nCode int }{
		{200, 1, 0, 0}, {400, 1, ahp.CodeParseError, 1}, {202, 1, 0, 0}, {401, 1, 0, 0},
	} {
		n, nCode := rec.get(w.status, w.code)
		if n != w.n || (w.code != 0 && nCode != w.nCode) {
			t.Errorf("status %d recorded %d times (code %d: %d), want %d (%d)", w.status, n, w.code, nCode, w.n, w.nCode)
		}
	}
	rec.panicOnce.Store(true)
	r := post(t, c, url+"/ahp", eventRequest("p"), auth...)
	if id, code, _ := r.rpc(t); r.status != 200 || id != `"p"` || code != 0 {
		t.Errorf("answer with a panicking recorder = %d %s", r.status, r.body)
	}
}

func TestPanicResponse(t *testing.T) {
	tests := []struct {
		name string
		data string
		want string // "" for no answer
	}{
		{"request", eventRequest("x"), `"x"`},
		{"integer id", `{"id":5}`, `5`},
		{"notification", observeNote(`{}`), ""},
		{"garbage", `{`, "null"},
		{"body not read", ``, "null"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := panicResponse([]byte(tt.data))
			if tt.want == "" {
				if resp != nil {
					t.Fatalf("answered a notification: %+v", resp)
				}
				return
			}
			if resp == nil || resp.Error == nil || resp.Error.Code != ahp.CodeBackendInternalError || resp.ID.String() != tt.want {
				t.Fatalf("got %+v, want -32004 for id %s", resp, tt.want)
			}
		})
	}
}

// TestHTTPKeepAlive: one connection carries many requests.
func TestHTTPKeepAlive(t *testing.T) {
	url, c := startHTTPTest(t, newHTTP(statelessInterceptor{}))
	reused := 0
	for i := range 5 {
		req, _ := http.NewRequest(http.MethodPost, url+"/ahp", strings.NewReader(eventRequest(fmt.Sprint("k", i))))
		req.Header.Set("Content-Type", "application/json")
		trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
			if info.Reused {
				reused++
			}
		}}
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
		if r := do(t, c, req); r.status != 200 {
			t.Fatalf("status %d", r.status)
		}
	}
	if reused != 4 {
		t.Errorf("%d of 4 follow-up requests reused the connection", reused)
	}
}

// serveHTTP runs h.Serve on a loopback listener and returns the base URL,
// the listener (to see it closed) and Serve's result.
func serveHTTP(t *testing.T, ctx context.Context, h *HTTP) (string, *closeNotifyListener, <-chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := &closeNotifyListener{Listener: ln, closed: make(chan struct{})}
	done := make(chan error, 1)
	go func() { done <- h.Serve(ctx, cl) }()
	scheme := "http"
	if h.TLSConfig != nil {
		scheme = "https"
	}
	return scheme + "://" + ln.Addr().String(), cl, done
}

type closeNotifyListener struct {
	net.Listener
	once   sync.Once
	closed chan struct{}
}

func (l *closeNotifyListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// TestHTTPGracefulShutdown: on cancel the listener closes at once, requests
// in flight are still answered, and Serve returns nil.
func TestHTTPGracefulShutdown(t *testing.T) {
	g := newGate()
	h := &HTTP{Server: &Server{Interceptor: g}, Concurrency: 8, ShutdownTimeout: time.Minute}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, ln, done := serveHTTP(t, ctx, h)

	const inFlight = 3
	replies := make(chan httpReply, inFlight)
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	for i := range inFlight {
		go func() {
			resp, err := client.Post(url+"/ahp", "application/json", strings.NewReader(eventRequest(fmt.Sprint("f", i))))
			if err != nil {
				replies <- httpReply{status: -1, body: []byte(err.Error())}
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			replies <- httpReply{status: resp.StatusCode, body: b}
		}()
	}
	for range inFlight {
		<-g.started
	}
	cancel()
	<-ln.closed
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	if resp, err := fresh.Get(url + "/healthz"); err == nil {
		resp.Body.Close()
		t.Errorf("a new connection was accepted after shutdown began (status %d)", resp.StatusCode)
	}
	select {
	case err := <-done:
		t.Fatalf("Serve returned (%v) before requests in flight were answered", err)
	default:
	}
	close(g.release)
	for range inFlight {
		r := <-replies
		if r.status != 200 {
			t.Errorf("request in flight: status %d %s", r.status, r.body)
		} else if _, code, _ := r.rpc(t); code != 0 {
			t.Errorf("request in flight: error %d", code)
		}
	}
	if err := <-done; err != nil {
		t.Errorf("Serve = %v, want nil after a clean shutdown", err)
	}
}

// TestHTTPDrainDelay: with DrainDelay, a cancelled Serve first fails
// /readyz while it goes on accepting and answering, so a load balancer
// takes it out before any connection is refused; then it shuts down.
func TestHTTPDrainDelay(t *testing.T) {
	h := newHTTP(statelessInterceptor{})
	h.DrainDelay = 3 * time.Second // far above what the checks below take
	ctx, cancel := context.WithCancel(context.Background())
	url, ln, done := serveHTTP(t, ctx, h)
	if s := getStatus(t, url+"/readyz"); s != http.StatusOK {
		t.Fatalf("readyz before the signal = %d", s)
	}
	cancel()
	for getStatus(t, url+"/readyz") != http.StatusServiceUnavailable {
		select {
		case err := <-done:
			t.Fatalf("Serve returned %v before /readyz failed", err)
		case <-ln.closed:
			t.Fatal("the listener closed before /readyz failed")
		default:
		}
	}
	// A new connection, after /readyz failed, is still answered.
	client := &http.Client{Transport: &http.Transport{}}
	resp, err := client.Post(url+"/ahp", "application/json", strings.NewReader(eventRequest("late")))
	if err != nil {
		t.Fatalf("a request while draining: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("a request while draining = %d, want 200", resp.StatusCode)
	}
	if err := <-done; err != nil {
		t.Errorf("Serve = %v, want a clean shutdown", err)
	}
	<-ln.closed
}

// TestHTTPShutdownTimeout: requests that outlive the bound are cut off and
// Serve says so.
func TestHTTPShutdownTimeout(t *testing.T) {
	g := newGate()
	defer close(g.release)
	h := &HTTP{Server: &Server{Interceptor: g}, ShutdownTimeout: 50 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	url, _, done := serveHTTP(t, ctx, h)
	failed := make(chan error, 1)
	go func() {
		client := &http.Client{Transport: &http.Transport{}}
		resp, err := client.Post(url+"/ahp", "application/json", strings.NewReader(eventRequest("slow")))
		if err == nil {
			resp.Body.Close()
		}
		failed <- err
	}()
	<-g.started
	cancel()
	if err := <-done; !errors.Is(err, ErrShutdownTimeout) {
		t.Errorf("Serve = %v, want ErrShutdownTimeout", err)
	}
	if err := <-failed; err == nil {
		t.Error("the cut-off request got an answer")
	}
}

// TestHTTPServeListenerFailure: Serve reports a listener that fails.
func TestHTTPServeListenerFailure(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	h := newHTTP(statelessInterceptor{})
	if err := h.Serve(context.Background(), ln); err == nil {
		t.Fatal("Serve on a closed listener returned nil")
	}
}

// TestHTTPHeaderTimeout: a client that never finishes its headers is
// disconnected after the header timeout.
func TestHTTPHeaderTimeout(t *testing.T) {
	h := newHTTP(statelessInterceptor{})
	h.ReadTimeout = 100 * time.Millisecond // the header timeout follows it down
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, _, _ := serveHTTP(t, ctx, h)
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "POST /ahp HTTP/1.1\r\nHost: x\r\n") // headers never end
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	start := time.Now()
	_, err = io.ReadAll(conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the server kept the connection open for %v", time.Since(start))
	}
}

// TestHTTPConcurrentLoad drives the binding from several connections at
// once and checks that every answer belongs to its request.
func TestHTTPConcurrentLoad(t *testing.T) {
	const workers, perWorker = 8, 160 // a multiple of 4: each kind equally often
	obs := &countingObserver{}
	h := &HTTP{Server: &Server{Interceptor: statelessInterceptor{}, Observer: obs}, Token: testToken, Concurrency: 4, QueueWait: time.Minute}
	ctx, cancel := context.WithCancel(context.Background())
	url, _, done := serveHTTP(t, ctx, h)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
			defer client.CloseIdleConnections()
			for i := range perWorker {
				id := fmt.Sprintf("w%d-%d", w, i)
				if err := loadStep(client, url, id, i); err != nil {
					errs <- fmt.Errorf("%s: %w", id, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if want := int64(workers * perWorker / 4); obs.n.Load() != want {
		t.Errorf("observer saw %d notifications, want %d", obs.n.Load(), want)
	}
}

// loadStep sends request i of a worker: in turn an allowed call, a denied
// call, a notification and an invalid request.
func loadStep(c *http.Client, url, id string, i int) error {
	ev := strings.Replace(validEvent, `"id":"e1"`, `"id":"`+id+`"`, 1)
	var body string
	switch i % 4 {
	case 0:
		body = request(`"`+id+`"`, ev, `{"effects":["deny"]}`)
	case 1:
		body = request(`"`+id+`"`, strings.Replace(ev, `"Bash"`, `"Danger"`, 1), `{"effects":["deny"]}`)
	case 2:
		body = observeNote(ev)
	case 3:
		body = request(`"`+id+`"`, ev, `{}`)
	}
	req, _ := http.NewRequest(http.MethodPost, url+"/ahp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if i%4 == 2 {
		if resp.StatusCode != 202 || len(b) != 0 {
			return fmt.Errorf("notification: %d %q", resp.StatusCode, b)
		}
		return nil
	}
	var v struct {
		ID     string
		Result *struct{ Effects []Effect }
		Error  *struct{ Code int }
	}
	if resp.StatusCode != 200 || json.Unmarshal(b, &v) != nil {
		return fmt.Errorf("status %d body %q", resp.StatusCode, b)
	}
	if v.ID != id {
		return fmt.Errorf("answer carries id %q", v.ID)
	}
	switch i % 4 {
	case 0:
		if v.Result == nil || len(v.Result.Effects) != 0 {
			return fmt.Errorf("want no objection: %s", b)
		}
	case 1:
		if v.Result == nil || len(v.Result.Effects) != 1 || v.Result.Effects[0].Type != ahp.EffectDeny {
			return fmt.Errorf("want one deny: %s", b)
		}
	case 3:
		if v.Error == nil || v.Error.Code != ahp.CodeInvalidParams {
			return fmt.Errorf("want -32602: %s", b)
		}
	}
	return nil
}

// refusingObserver refuses every notification with err and remembers
// whether it was acknowledged.
type refusingObserver struct {
	err error
	ack atomic.Bool
}

func (o *refusingObserver) Observe(_ context.Context, ob *Observation) error {
	o.ack.Store(ob.Ack)
	return o.err
}

// TestHTTPRefusedNotification: an Observer that cannot make a notification
// safe turns HTTP's 202 into 503 with a body that is not JSON-RPC (a
// notification has no id to answer with, B-RPC-4), so the sender may
// retry; the reason leaves only when it is a protocol error of ours.
func TestHTTPRefusedNotification(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		wantStatus int
		wantBody   string
	}{
		{"accepted", nil, http.StatusAccepted, ""},
		{"refused", Unavailable("the record could not be written"), http.StatusServiceUnavailable,
			`{"error":"Backend unavailable","reason":"the record could not be written"}`},
		{"internal error stays inside", errors.New("open /var/secret: denied"), http.StatusServiceUnavailable,
			`{"error":"the notification could not be handled"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs := &refusingObserver{err: tt.err}
			rec := newRecorder()
			url, c := startHTTPTest(t, &HTTP{Server: &Server{Interceptor: statelessInterceptor{}, Observer: obs}, Recorder: rec})
			r := post(t, c, url+"/ahp", observeNote(`{"id":"o1","source":"urn:h","type":"tool.after"}`))
			if r.status != tt.wantStatus || string(r.body) != tt.wantBody {
				t.Fatalf("got %d %q, want %d %q", r.status, r.body, tt.wantStatus, tt.wantBody)
			}
			if tt.wantBody != "" && r.header.Get("Content-Type") != "application/json" {
				t.Errorf("Content-Type = %q", r.header.Get("Content-Type"))
			}
			if !obs.ack.Load() {
				t.Error("HTTP did not mark the notification as acknowledged")
			}
			if n, _ := rec.get(tt.wantStatus, 0); n != 1 {
				t.Errorf("recorder saw %d answers with status %d, want 1", n, tt.wantStatus)
			}
			// Without an acknowledgement (stdio) nothing is answered and
			// the Observer is told not to wait.
			srv := &Server{Interceptor: statelessInterceptor{}, Observer: obs}
			if resp := srv.Handle(context.Background(), []byte(observeNote(`{"id":"o2"}`))); resp != nil || obs.ack.Load() {
				t.Errorf("Handle: %v, ack=%v; want no answer and no ack", resp, obs.ack.Load())
			}
		})
	}
}

// getStatus returns the status of a GET of url on a fresh connection.
func getStatus(t *testing.T, url string) int {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
