package transport

import (
	"log/slog"
	"net/http"
)

// Mount answers requests under a path prefix of the HTTP binding in a
// format of its own, the way the agents' native hooks are served, while
// the binding keeps what every request gets: the bearer token is checked
// first (B-HTTP-7), only POST reaches the Mount, and the status of every
// answer goes to the Recorder. What decides goes through MountEnv.Server,
// which holds the binding's evaluation slots.
type Mount interface {
	ServeMount(w http.ResponseWriter, r *http.Request, env MountEnv)
}

// MountEnv is what a Mount shares with the AHP endpoint.
type MountEnv struct {
	// Server decides, with the binding's evaluation limit in front of its
	// Interceptor.
	Server *Server
	// MaxBodyBytes is the body limit of the binding.
	MaxBodyBytes int64
	Logger       *slog.Logger
}

// serveMount checks what the binding owns, then hands the request over.
func (h *HTTP) serveMount(w http.ResponseWriter, r *http.Request, m Mount) {
	ex := &exchange{h: h, w: w, r: r}
	if !h.authorized(r) {
		h.unauthorized(w, r)
		ex.record(http.StatusUnauthorized, 0)
		return
	}
	if r.Method != http.MethodPost {
		methodNotAllowed(w, "POST")
		ex.record(http.StatusMethodNotAllowed, 0)
		return
	}
	sw := &statusWriter{ResponseWriter: w}
	defer func() {
		if sw.status != 0 {
			ex.record(sw.status, 0)
		}
	}()
	m.ServeMount(sw, r, MountEnv{Server: h.srv, MaxBodyBytes: h.maxBody, Logger: h.log})
	if sw.status == 0 {
		sw.WriteHeader(http.StatusOK) // as net/http would on return
	}
}

// statusWriter notes the status a handler answers with.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
