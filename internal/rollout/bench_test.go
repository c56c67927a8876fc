package rollout

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ahp-opa/ahp-opa/internal/audit"
	"github.com/ahp-opa/ahp-opa/transport"
)

// BenchmarkReplay replays a generated audit log of AHP_REPLAY_EVENTS
// decisions (default 1,000,000; generated into a temporary directory,
// never committed) and reports events/s, the peak live heap and the
// process's max RSS.
func BenchmarkReplay(b *testing.B) {
	n := 1_000_000
	if s := os.Getenv("AHP_REPLAY_EVENTS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	path := filepath.Join(b.TempDir(), "audit.jsonl")
	size := generateLog(b, path, n)
	facts := audit.NewReplayFacts(24 * time.Hour)
	judge := loadEngine(b, candidate, facts)
	b.ResetTimer()
	for range b.N {
		var peak atomic.Uint64
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() { // sample the live heap while replaying
			defer close(done)
			var ms runtime.MemStats
			t := time.NewTicker(50 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					runtime.ReadMemStats(&ms)
					if ms.HeapAlloc > peak.Load() {
						peak.Store(ms.HeapAlloc)
					}
				}
			}
		}()
		start := time.Now()
		rep, err := replayFile(b, path, judge, ReplayOptions{Facts: facts})
		elapsed := time.Since(start)
		close(stop)
		<-done
		if err != nil || rep.Events != n {
			b.Fatalf("replayed %d of %d: %v", rep.Events, n, err)
		}
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		b.ReportMetric(float64(n)/elapsed.Seconds(), "events/s")
		b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
		b.ReportMetric(float64(ru.Maxrss)/1024, "maxrss-MiB")
		b.ReportMetric(float64(size)/(1<<20), "log-MiB")
	}
}

// generateLog writes n decision records (with inputs, in 1,000 sessions,
// one in ten denied) and a tool.after for every fourth, and returns the
// file size.
func generateLog(b *testing.B, path string, n int) int64 {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	enc := json.NewEncoder(w)
	commands := []string{"ls -la", "git status", "rm x", "git push origin main", "npm test", "go build ./...", "cat README.md", "make", "git diff", "curl https://example.com"}
	for i := range n {
		c := call{
			id: fmt.Sprintf("evt_%d", i), session: fmt.Sprintf("s%d", i%1000), command: commands[i%len(commands)],
			decision: "allow", at: time.Duration(i) * time.Millisecond,
		}
		if c.command == "rm x" {
			c.decision, c.reason, c.codes = "deny", "no rm", []string{"com.example.rm"}
		}
		if err := enc.Encode(decisionRecord(c)); err != nil {
			b.Fatal(err)
		}
		if i%4 == 0 {
			if err := enc.Encode(observation(audit.KindObservation, "tool.after", c.session, "call_"+c.id, "executed", c.at)); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	st, _ := f.Stat()
	f.Close()
	return st.Size()
}

// BenchmarkAnswer measures the answer a harness waits for, through the
// audit layer, with and without a canary evaluating the same policy.
func BenchmarkAnswer(b *testing.B) {
	for _, withCanary := range []bool{false, true} {
		name := "live"
		if withCanary {
			name = "live+canary"
		}
		b.Run(name, func(b *testing.B) {
			live := loadEngine(b, candidate, nil)
			aud, err := audit.New(audit.Config{}, nil, nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer aud.Close()
			var judge Judge = live
			var c *Canary
			if withCanary {
				c = NewCanary(EngineCandidate(loadEngine(b, candidate, nil), 0), aud, CanaryOptions{})
				judge = c.Wrap(live)
			}
			srv := aud.Interceptor(judge)
			reqs := make([]*transport.InterceptRequest, 1024)
			for i := range reqs {
				reqs[i] = requestOf(decisionRecord(call{id: fmt.Sprintf("e%d", i), command: "git push origin main"}))
			}
			b.ResetTimer()
			for i := range b.N {
				if _, err := srv.Intercept(context.Background(), reqs[i%len(reqs)]); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if c != nil {
				c.Close()
				st := c.Stats()
				b.ReportMetric(float64(st.Dropped)/float64(st.Dropped+st.Evaluated), "canary-dropped-fraction")
			}
		})
	}
}
