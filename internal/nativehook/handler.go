package nativehook

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/ahp-opa/ahp-opa/internal/adapters"
	"github.com/ahp-opa/ahp-opa/transport"
)

// PathPrefix starts the path of the native hook endpoints: POST
// /hooks/AGENT, one per agent in adapters.HTTPAgents.
const PathPrefix = "/hooks/"

// Handler serves the agents' own HTTP hooks at POST /hooks/AGENT
// (adapters.HTTPAgents) as a transport.Mount: the native payload is
// answered in the agent's format by adapters.Run, decided through the
// binding's Server, with the binding's token, body limit, evaluation
// slots, metrics and audit. Mount it with Mounts[PathPrefix].
type Handler struct {
	// Options configure adapters.Run; a nil Logger means the binding's.
	Options adapters.Options
}

// ServeMount answers one native hook POST with the agent's own answer.
// The checks are those of the AHP endpoint, in the same order, except
// that a payload that cannot be decided gets the agent's fail-closed deny
// at 200: the agents read any other status as "go ahead".
func (hd *Handler) ServeMount(w http.ResponseWriter, r *http.Request, env transport.MountEnv) {
	agent := strings.TrimPrefix(r.URL.Path, PathPrefix)
	log := env.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if !adapters.HasHTTPHook(agent) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, "ahp-opa: no HTTP hook for %q; HTTP hooks are %s%s (the other agents use the command hook 'ahp-opa hook AGENT')\n",
			agent, PathPrefix, strings.Join(adapters.HTTPAgents, ", "+PathPrefix))
		return
	}
	if !transport.IsJSON(r.Header.Get("Content-Type")) {
		log.Debug("http: request refused", "remote", r.RemoteAddr, "status", http.StatusUnsupportedMediaType)
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(http.StatusUnsupportedMediaType)
		return
	}
	opts := hd.Options
	if opts.Logger == nil {
		opts.Logger = log
	}
	written := false
	send := func(ans adapters.Answer) {
		written = true
		sendAnswer(w, r, ans, log)
	}
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			log.Error("http: panic while answering a hook", "agent", agent, "panic", p)
			if !written {
				send(refuse(agent, "ahp-opa: internal error while answering the hook; please report it", opts))
			}
		}
	}()
	limit := env.MaxBodyBytes
	tooLarge := func() {
		log.Warn("http: hook payload over max_body_bytes", "agent", agent, "remote", r.RemoteAddr, "limit", limit)
		send(refuse(agent, fmt.Sprintf("ahp-opa: this hook payload is larger than the %d bytes the server reads, so it could not be checked (raise max_body_bytes)", limit), opts))
	}
	if r.ContentLength > limit {
		tooLarge()
		return
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var over *http.MaxBytesError
		if errors.As(err, &over) {
			tooLarge()
		} else {
			log.Debug("http: reading hook body failed", "remote", r.RemoteAddr, "err", err)
			w.Header().Set("Content-Length", "0")
			w.WriteHeader(http.StatusBadRequest)
		}
		return
	}
	dec := Decider{Interceptor: env.Server.Interceptor, Observer: env.Server.Observer}
	send(adapters.Run(r.Context(), dec, agent, data, opts))
}

// refuse is the agent's answer when no decision can be made: its deny,
// or with FailOpen its "no decision".
func refuse(agent, reason string, opts adapters.Options) adapters.Answer {
	f := adapters.Refuse
	if opts.FailOpen {
		f = adapters.Pass
	}
	ans, _ := f(agent, reason) // agent is one of adapters.HTTPAgents
	return ans
}

// sendAnswer writes a native answer as the 2xx body the agent reads; what
// a command hook would print on stderr goes to the log.
func sendAnswer(w http.ResponseWriter, r *http.Request, ans adapters.Answer, log *slog.Logger) {
	if ans.Stderr != "" {
		log.Warn("http: hook answered without a decision", "path", r.URL.Path, "reason", ans.Stderr)
	}
	status := http.StatusOK
	if ans.Exit != 0 || len(ans.Stdout) == 0 {
		// Only an agent adapters does not know gets here, and routing
		// keeps those out.
		status = http.StatusInternalServerError
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "application/json")
	hdr.Set("Content-Length", strconv.Itoa(len(ans.Stdout)))
	hdr.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(ans.Stdout)
}
