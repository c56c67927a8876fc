package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ahp-opa/ahp-opa/internal/adapters"
	"github.com/ahp-opa/ahp-opa/internal/config"
	"github.com/ahp-opa/ahp-opa/internal/nativehook"
	"github.com/ahp-opa/ahp-opa/internal/service"
	"github.com/ahp-opa/ahp-opa/transport"
)

var benchIDs atomic.Int64

// BenchmarkHTTPEndpoints answers the same tool call, a new event each
// time, through the served handler with the built-in library: as an AHP
// request on /ahp and as a Claude Code payload on /hooks/claude-code. One
// op is one request to each; hook/ahp-throughput is the ratio of their
// median latencies, /ahp's over the hook's.
func BenchmarkHTTPEndpoints(b *testing.B) {
	b.Setenv("HOME", "/home/dev")
	log, _ := testLogger()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// As bench/hook-http-vs-ahp.sh does: a busy machine must not turn a
	// slow evaluation into an error answer, which is not what is measured.
	cfg := config.Default()
	cfg.EvalTimeout = 30 * time.Second
	svc, err := service.New(ctx, cfg, service.Options{Logger: log, Metrics: true})
	if err != nil {
		b.Fatal(err)
	}
	defer svc.Close()
	h := &transport.HTTP{
		Server:   svc.Server,
		Recorder: svc.Metrics,
		Mounts:   map[string]transport.Mount{nativehook.PathPrefix: &nativehook.Handler{Options: adapters.Options{Inline: true}}},
	}
	const command = "cd /repo && go test ./... 2>&1 | tail -20 && git status --short"
	bodies := map[string]func(id string) string{
		"/ahp": func(id string) string { return interceptBody(id, command) },
		"/hooks/claude-code": func(id string) string {
			return `{"session_id":"s1","cwd":"/repo","hook_event_name":"PreToolUse","tool_name":"Bash",` +
				`"tool_input":{"command":"` + command + `"},"tool_use_id":"` + id + `"}`
		},
	}
	// The two endpoints take turns, request by request, so that a busy
	// moment of the shared machine hurts both alike; the medians of their
	// own latencies are reported.
	paths := []string{"/ahp", "/hooks/claude-code"}
	lat := make([][]time.Duration, len(paths))
	for b.Loop() {
		for i, path := range paths {
			// Ids never repeat, not even across -count runs: the audit
			// layer replays the answer to a retried event.
			id := "b" + strconv.FormatInt(benchIDs.Add(1), 10)
			req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(bodies[path](id)))
			req.Header.Set("Content-Type", "application/json")
			w := httptest.NewRecorder()
			start := time.Now()
			h.ServeHTTP(w, req)
			lat[i] = append(lat[i], time.Since(start))
			if w.Code != 200 || strings.Contains(w.Body.String(), "deny") {
				b.Fatalf("%s: %d %s", path, w.Code, w.Body)
			}
		}
	}
	for i, path := range paths {
		slices.Sort(lat[i])
		b.ReportMetric(float64(lat[i][len(lat[i])/2].Microseconds()), strings.TrimPrefix(strings.TrimPrefix(path, "/hooks"), "/")+"-p50-µs")
	}
	b.ReportMetric(float64(lat[0][len(lat[0])/2])/float64(lat[1][len(lat[1])/2]), "hook/ahp-throughput")
}
