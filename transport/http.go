package transport

import (
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// HTTP binding defaults.
const (
	// DefaultHTTPPath is the one endpoint that takes both methods.
	DefaultHTTPPath = "/ahp"
	// DefaultMaxBodyBytes bounds one request body (PROTOCOL.md §8, B-HTTP-8):
	// the framing limit shared with stdio.
	DefaultMaxBodyBytes = DefaultMaxMessageBytes
	// DefaultQueueWait is how long a request waits for an evaluation slot
	// before it is refused as overloaded: enough to ride out a burst or a
	// descheduled moment on a busy machine, and with the default evaluation
	// deadline still half the default harness timeout (1 s).
	DefaultQueueWait = 250 * time.Millisecond
	// DefaultShutdownTimeout bounds how long a shutdown waits for requests
	// in flight.
	DefaultShutdownTimeout = 10 * time.Second

	DefaultReadTimeout  = 10 * time.Second
	DefaultWriteTimeout = 10 * time.Second
	DefaultIdleTimeout  = 2 * time.Minute
	// maxHeaderTimeout caps the time to read request headers, whatever
	// the read timeout: a slow client must not hold a connection long.
	maxHeaderTimeout = 5 * time.Second
	maxHeaderBytes   = 64 << 10
)

// ErrShutdownTimeout is returned by [HTTP.Serve] when requests were still in
// flight once the shutdown bound expired; they were cut off.
var ErrShutdownTimeout = errors.New("requests still in flight when the shutdown timeout expired")

// HTTPRecorder is told how the AHP endpoint answers; metrics implement it.
// Calls come from many goroutines at once and must not block.
type HTTPRecorder interface {
	// Answered reports the status of one POST and, when its body is a
	// JSON-RPC error, the error code (0 otherwise).
	Answered(status, code int)
	// Overloaded reports a request refused because no evaluation slot
	// freed up in time.
	Overloaded()
}

// HTTP serves the HTTP binding (PROTOCOL.md §8): POST /ahp for both methods,
// plus GET /healthz, /readyz and /metrics for operations, and optionally
// endpoints of other formats mounted beside them (Mounts). Set the fields,
// then call Serve, or use the value as an http.Handler. Fields must not
// change once serving started.
type HTTP struct {
	Server *Server
	// Path is the AHP endpoint; empty means DefaultHTTPPath.
	Path string
	// Token, when non-empty, is the bearer token every POST and /metrics
	// request must carry (B-HTTP-7). It is never logged or echoed.
	Token string
	// MaxBodyBytes bounds a request body; zero means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Concurrency bounds evaluations at once; zero means twice GOMAXPROCS.
	// Only hooks/intercept requests take a slot: notifications and
	// malformed messages never wait.
	Concurrency int
	// QueueWait is how long a request may wait for a slot before it is
	// answered -32003; zero means DefaultQueueWait, negative means not at
	// all.
	QueueWait time.Duration
	// Ready reports whether requests can be decided (a policy is active);
	// nil means always. It drives /readyz.
	Ready func() bool
	// Health, when set, names a problem that leaves decisions working
	// (a failing audit sink) for /healthz and /readyz to show; fatal
	// (audit.required) makes /readyz fail as well. "" means none.
	Health func() (problem string, fatal bool)
	// Metrics serves /metrics; nil answers 404 there.
	Metrics http.Handler
	// Recorder, if set, is told how each POST was answered.
	Recorder HTTPRecorder
	// Mounts serves more endpoints, each under its path prefix (the agents'
	// native hooks under /hooks/): see Mount.
	Mounts map[string]Mount
	// TLSConfig, if set, makes Serve speak HTTPS (B-HTTP-6).
	TLSConfig *tls.Config
	// Timeouts of the underlying http.Server; zero means the defaults.
	ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// ShutdownTimeout bounds the wait for requests in flight once Serve's
	// context is cancelled; zero means DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	// DrainDelay is how long Serve goes on accepting and answering once
	// its context is cancelled, with /readyz already failing, before it
	// stops accepting: a load balancer that polls /readyz takes the
	// server out first, so no new connection is refused. Zero stops at
	// once.
	DrainDelay time.Duration
	Logger     *slog.Logger

	// Resolved once from the fields above, which are left as set.
	once      sync.Once
	path      string
	maxBody   int64
	log       *slog.Logger
	srv       *Server   // Server with the evaluation limit in front of its Interceptor
	tokenHash *[32]byte // nil: no authentication
	draining  atomic.Bool
	authWarn  rateLimited
}

func (h *HTTP) init() {
	h.once.Do(func() {
		h.path = cmp.Or(h.Path, DefaultHTTPPath)
		h.maxBody = h.MaxBodyBytes
		if h.maxBody <= 0 {
			h.maxBody = DefaultMaxBodyBytes
		}
		slots := h.Concurrency
		if slots <= 0 {
			slots = 2 * runtime.GOMAXPROCS(0)
		}
		h.log = h.Logger
		if h.log == nil {
			h.log = slog.New(slog.DiscardHandler)
		}
		if h.Token != "" {
			// Both sides are hashed before the comparison so that it takes
			// the same time whatever the length of the guess.
			sum := sha256.Sum256([]byte(h.Token))
			h.tokenHash = &sum
		}
		srv := *h.Server
		srv.Interceptor = &limiter{
			next:  h.Server.Interceptor,
			slots: make(chan struct{}, slots),
			wait:  cmp.Or(h.QueueWait, DefaultQueueWait),
			rec:   h.Recorder,
		}
		h.srv = &srv
	})
}

// Serve accepts connections on ln until ctx is cancelled, then shuts down
// gracefully: it stops accepting, lets requests in flight finish within
// ShutdownTimeout and closes what is left. It returns nil after a clean
// shutdown, ErrShutdownTimeout (wrapped) when requests had to be cut off,
// and the error otherwise, e.g. when ln fails.
func (h *HTTP) Serve(ctx context.Context, ln net.Listener) error {
	h.init()
	header := maxHeaderTimeout
	read := orDefault(h.ReadTimeout, DefaultReadTimeout)
	if read < header {
		header = read
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: header,
		ReadTimeout:       read,
		WriteTimeout:      orDefault(h.WriteTimeout, DefaultWriteTimeout),
		IdleTimeout:       orDefault(h.IdleTimeout, DefaultIdleTimeout),
		MaxHeaderBytes:    maxHeaderBytes,
		TLSConfig:         h.TLSConfig,
		// Connection-level noise (TLS handshake failures, resets) is only
		// worth seeing when debugging.
		ErrorLog: slog.NewLogLogger(h.log.Handler(), slog.LevelDebug),
	}
	errc := make(chan error, 1)
	go func() {
		if h.TLSConfig != nil {
			errc <- srv.ServeTLS(ln, "", "")
		} else {
			errc <- srv.Serve(ln)
		}
	}()
	select {
	case err := <-errc:
		return fmt.Errorf("http: serving %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	h.draining.Store(true)
	if h.DrainDelay > 0 {
		h.log.Info("http: not ready; still answering before the shutdown", "addr", ln.Addr().String(), "drain_delay", h.DrainDelay.String())
		select {
		case <-time.After(h.DrainDelay):
		case err := <-errc:
			return fmt.Errorf("http: serving %s: %w", ln.Addr(), err)
		}
	}
	timeout := orDefault(h.ShutdownTimeout, DefaultShutdownTimeout)
	h.log.Info("http: shutting down", "addr", ln.Addr().String(), "timeout", timeout.String())
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	err := srv.Shutdown(sctx)
	if err != nil {
		srv.Close()
		err = fmt.Errorf("http: %w", ErrShutdownTimeout)
		h.log.Warn("http: shutdown timeout expired; requests in flight were cut off", "timeout", timeout.String())
	}
	<-errc // http.ErrServerClosed
	return err
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// ServeHTTP routes a request. Routing is exact: no path cleaning and no
// redirect, which a harness would take as a failure anyway (B-HTTP-5).
func (h *HTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.init()
	for prefix, m := range h.Mounts {
		if strings.HasPrefix(r.URL.Path, prefix) {
			h.serveMount(w, r, m)
			return
		}
	}
	switch r.URL.Path {
	case h.path:
		h.serveAHP(w, r)
	case "/healthz":
		h.serveProbe(w, r, true, h.withHealth("ok"))
	case "/readyz":
		problem, fatal := h.health()
		switch {
		case h.draining.Load():
			h.serveProbe(w, r, false, "shutting down")
		case h.Ready != nil && !h.Ready():
			h.serveProbe(w, r, false, "no policy is active")
		case fatal:
			h.serveProbe(w, r, false, problem)
		default:
			h.serveProbe(w, r, true, h.withHealth("ready"))
		}
	case "/metrics":
		if !h.authorized(r) {
			h.unauthorized(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			methodNotAllowed(w, "GET, HEAD")
			return
		}
		if h.Metrics == nil {
			http.NotFound(w, r)
			return
		}
		h.Metrics.ServeHTTP(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (h *HTTP) health() (string, bool) {
	if h.Health == nil {
		return "", false
	}
	return h.Health()
}

// withHealth adds a problem, if any, to a probe's message.
func (h *HTTP) withHealth(msg string) string {
	if problem, _ := h.health(); problem != "" {
		return msg + "; degraded: " + problem
	}
	return msg
}

func (h *HTTP) serveProbe(w http.ResponseWriter, r *http.Request, ok bool, msg string) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		methodNotAllowed(w, "GET, HEAD")
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if ok {
		w.WriteHeader(http.StatusOK)
	} else {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	io.WriteString(w, msg+"\n")
}

// serveAHP answers one POST. Checks run cheapest and least trusting first:
// the token before anything else, and every header check before a byte of
// the body is read (B-HTTP-7).
func (h *HTTP) serveAHP(w http.ResponseWriter, r *http.Request) {
	ex := &exchange{h: h, w: w, r: r}
	var body *[]byte
	defer func() {
		if body != nil {
			putBuffer(body) // after ex.recover: Handle keeps nothing of the bytes
		}
	}()
	defer ex.recover()
	if !h.authorized(r) {
		h.unauthorized(w, r)
		ex.written = true
		ex.record(http.StatusUnauthorized, 0)
		return
	}
	if r.Method != http.MethodPost {
		methodNotAllowed(w, "POST")
		ex.written = true
		ex.record(http.StatusMethodNotAllowed, 0)
		return
	}
	if !IsJSON(r.Header.Get("Content-Type")) {
		ex.reject(http.StatusUnsupportedMediaType, "send the JSON-RPC message with Content-Type: application/json")
		return
	}
	if r.ContentLength > h.maxBody {
		ex.reject(http.StatusRequestEntityTooLarge, h.tooLarge())
		return
	}
	body = getBuffer()
	data, err := readBody(w, r, h.maxBody, (*body)[:0])
	*body = data
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			ex.reject(http.StatusRequestEntityTooLarge, h.tooLarge())
		} else {
			h.log.Debug("http: reading request body failed", "remote", r.RemoteAddr, "err", err)
			ex.reject(http.StatusBadRequest, "the request body could not be read")
		}
		return
	}
	ex.data = data
	resp, err := h.srv.HandleAck(r.Context(), data)
	if err != nil {
		ex.refuseNotification(err)
		return
	}
	ex.respond(resp)
}

// readBody reads the whole body, at most limit bytes, into buf (grown
// once when the client announced its length).
func readBody(w http.ResponseWriter, r *http.Request, limit int64, buf []byte) ([]byte, error) {
	body := http.MaxBytesReader(w, r.Body, limit)
	if n := r.ContentLength; n >= 0 {
		buf = slices.Grow(buf[:0], int(n))[:n]
		if _, err := io.ReadFull(body, buf); err != nil {
			return buf[:0], err
		}
		// A body longer than announced is a broken client; the server
		// would cut it off anyway.
		return buf, nil
	}
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, 4<<10)
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// exchange tracks one POST so that a panic anywhere still gets a JSON-RPC
// answer (B-ERR-1) instead of a dropped connection.
type exchange struct {
	h       *HTTP
	w       http.ResponseWriter
	r       *http.Request
	data    []byte // the body, once read
	written bool
}

// send writes the status and body; the answer counts as sent from here on.
func (ex *exchange) send(status, code int, body []byte) {
	ex.written = true
	if body == nil {
		ex.w.Header().Set("Content-Length", "0")
	}
	ex.w.WriteHeader(status)
	if body != nil {
		ex.w.Write(body)
	}
	ex.record(status, code)
}

func (ex *exchange) record(status, code int) {
	if ex.h.Recorder != nil {
		ex.h.Recorder.Answered(status, code)
	}
}

// reject answers with a status and one line of plain text saying what
// to change: an empty 415 or 413 leaves the caller guessing.
func (ex *exchange) reject(status int, why string) {
	ex.h.log.Debug("http: request refused", "remote", ex.r.RemoteAddr, "status", status)
	ex.w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	ex.send(status, 0, []byte(why+"\n"))
}

// tooLarge says what a 413 means here.
func (h *HTTP) tooLarge() string {
	return fmt.Sprintf("the request body is larger than %d bytes (max_body_bytes)", h.maxBody)
}

// respond sends the answer to a message: 202 with no body for a
// notification (B-HTTP-4), 400 for a body that is not one JSON-RPC object,
// 200 for everything else (B-HTTP-3).
func (ex *exchange) respond(resp *Response) {
	if resp == nil {
		ex.send(http.StatusAccepted, 0, nil)
		return
	}
	status, code := http.StatusOK, 0
	if resp.Error != nil {
		code = resp.Error.Code
		if resp.ID.IsNull() && (code == ahp.CodeParseError || code == ahp.CodeInvalidRequest) {
			status = http.StatusBadRequest
		}
	}
	buf := getBuffer()
	defer putBuffer(buf) // the body is copied out by Write
	b, err := resp.AppendJSON((*buf)[:0])
	if err != nil {
		// Only a handler bug gets here; the harness still needs an answer.
		ex.h.log.Error("http: encoding response failed", "id", resp.ID.String(), "err", err)
		code = ahp.CodeBackendInternalError
		b, _ = (&Response{ID: resp.ID, Error: InternalError("")}).AppendJSON((*buf)[:0])
	}
	*buf = b
	hdr := ex.w.Header()
	hdr.Set("Content-Type", "application/json")
	hdr.Set("Content-Length", strconv.Itoa(len(b)))
	hdr.Set("Cache-Control", "no-store")
	ex.send(status, code, b)
}

// refuseNotification answers 503 to a notification the Observer could not
// make safe (its record unwritten under audit.required), so that the
// sender or a load balancer may send it again. A notification has no id
// to answer with, so the body is not JSON-RPC:
// {"error": "what", "reason": "why"}, the reason only for an *Error.
func (ex *exchange) refuseNotification(err error) {
	body := notificationRefusal{Error: "the notification could not be handled"}
	if rpcErr, ok := errors.AsType[*Error](err); ok {
		body.Error = rpcErr.Message
		if r, ok := rpcErr.Data.(ReasonData); ok {
			body.Reason = r.Reason
		}
	} else {
		ex.h.log.Error("http: notification refused", "err", err)
	}
	b, _ := json.Marshal(body)
	hdr := ex.w.Header()
	hdr.Set("Content-Type", "application/json")
	hdr.Set("Content-Length", strconv.Itoa(len(b)))
	hdr.Set("Cache-Control", "no-store")
	ex.send(http.StatusServiceUnavailable, 0, b)
}

// notificationRefusal is the body of a refused notification.
type notificationRefusal struct {
	Error  string `json:"error"`
	Reason string `json:"reason,omitempty"`
}

// recover turns a panic into a -32004 answer when nothing was sent yet.
// After the answer went out a panic is only logged: the harness has what
// it needs.
func (ex *exchange) recover() {
	p := recover()
	if p == nil {
		return
	}
	if p == http.ErrAbortHandler {
		panic(p)
	}
	ex.h.log.Error("http: panic while answering", "panic", p, "stack", string(debug.Stack()))
	if !ex.written {
		ex.respond(panicResponse(ex.data))
	}
}

// panicResponse is the answer to a message whose handling panicked:
// -32004 with the request id when it can be read, nothing for a
// notification (B-RPC-4).
func panicResponse(data []byte) *Response {
	msg, perr := decodeObject(data)
	if perr != nil {
		return &Response{Error: InternalError("")}
	}
	v := get(msg, "id")
	if v == nil {
		return nil
	}
	id, _ := parseID(v)
	return &Response{ID: id, Error: InternalError("")}
}

// authorized checks the bearer token in constant time. The request must
// carry exactly one Authorization header (B-HTTP-7).
func (h *HTTP) authorized(r *http.Request) bool {
	if h.tokenHash == nil {
		return true
	}
	values := r.Header.Values("Authorization")
	if len(values) != 1 {
		return false
	}
	const scheme = "Bearer "
	v := values[0]
	if len(v) <= len(scheme) || !strings.EqualFold(v[:len(scheme)], scheme) {
		return false
	}
	got := sha256.Sum256([]byte(v[len(scheme):]))
	return subtle.ConstantTimeCompare(got[:], h.tokenHash[:]) == 1
}

func (h *HTTP) unauthorized(w http.ResponseWriter, r *http.Request) {
	// Neither the header nor the token is logged: only who knocked.
	if n := h.authWarn.allow(time.Now()); n >= 0 {
		h.log.Warn("http: request without a valid bearer token refused", "remote", r.RemoteAddr,
			"path", r.URL.Path, "suppressed", n)
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="ahp-opa"`)
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusUnauthorized)
}

func methodNotAllowed(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusMethodNotAllowed)
	io.WriteString(w, "method not allowed here: use "+allow+"\n")
}

// IsJSON reports whether a Content-Type is application/json with no
// charset or charset=utf-8 (B-HTTP-2); JSON has no other encoding on the
// wire. Every route that takes JSON, mounted ones included, uses it.
func IsJSON(contentType string) bool {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "application/json" {
		return false
	}
	for k, v := range params {
		if k != "charset" || !strings.EqualFold(v, "utf-8") {
			return false
		}
	}
	return true
}

// limiter caps evaluations at once. A request waits at most wait for a
// slot, then gets -32003, which tells the harness to apply its failure
// policy now rather than after its own timeout.
type limiter struct {
	next  Interceptor
	slots chan struct{}
	wait  time.Duration
	rec   HTTPRecorder
}

func (l *limiter) Intercept(ctx context.Context, req *InterceptRequest) (*InterceptResult, error) {
	select {
	case l.slots <- struct{}{}:
	default:
		if err := l.queue(ctx); err != nil {
			return nil, err
		}
	}
	defer func() { <-l.slots }()
	return l.next.Intercept(ctx, req)
}

func (l *limiter) queue(ctx context.Context) error {
	if l.wait > 0 {
		t := time.NewTimer(l.wait)
		defer t.Stop()
		select {
		case l.slots <- struct{}{}:
			return nil
		case <-ctx.Done():
			return Unavailable("request cancelled while waiting for an evaluation slot")
		case <-t.C:
		}
	}
	if l.rec != nil {
		l.rec.Overloaded()
	}
	return Unavailable("backend is overloaded: every evaluation slot is busy")
}

// rateLimited lets one event through per second and counts the others, so
// that a flood of bad requests cannot flood the log.
type rateLimited struct {
	last       atomic.Int64 // unix nanoseconds of the last event let through
	suppressed atomic.Int64
}

// allow returns how many events were suppressed since the last one let
// through, or -1 when this one is suppressed too.
func (r *rateLimited) allow(now time.Time) int64 {
	last := r.last.Load()
	if now.UnixNano()-last < int64(time.Second) || !r.last.CompareAndSwap(last, now.UnixNano()) {
		r.suppressed.Add(1)
		return -1
	}
	return r.suppressed.Swap(0)
}
