package state

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/redis/rueidis"

	"github.com/ahp-opa/ahp-opa/bundles"
	"github.com/ahp-opa/ahp-opa/engine"
	"github.com/ahp-opa/ahp-opa/internal/audit"
	"github.com/ahp-opa/ahp-opa/transport"
)

// benchReplica is an auditor and engine with examples/session, the policy
// a fleet runs, on the memory store or, with srv, on Redis.
func benchReplica(b *testing.B, srv *redisServer) (transport.Interceptor, *audit.Auditor, *Redis) {
	b.Helper()
	facts := audit.NewFacts(0)
	// A loaded machine must not turn a benchmark into deadline errors.
	eng := engine.New(engine.Options{Facts: facts, EvalTimeout: 10 * time.Second})
	policy, err := os.ReadFile(filepath.Join("..", "..", "examples", "session", "session.rego"))
	if err != nil {
		b.Fatal(err)
	}
	m, err := ast.ParseModule("session.rego", string(policy))
	if err != nil {
		b.Fatal(err)
	}
	if err := eng.Load(context.Background(), &bundles.Policy{Modules: map[string]*ast.Module{"session.rego": m}, Revision: "b"}); err != nil {
		b.Fatal(err)
	}
	aud, err := audit.New(audit.Config{}, nil, facts, nil)
	if err != nil {
		b.Fatal(err)
	}
	var store *Redis
	if srv != nil {
		cfg := Default()
		cfg.Store, cfg.URL = StoreRedis, srv.url()
		store, err = Open(cfg, Windows{Retry: time.Minute, Outcome: time.Minute, Session: time.Hour}, nil)
		if err != nil {
			b.Fatal(err)
		}
		aud.Share(audit.SharedOptions{Store: store, Timeout: cfg.Timeout})
	}
	b.Cleanup(func() {
		aud.Close()
		if store != nil {
			store.Close(time.Second)
		}
	})
	return aud.Interceptor(eng), aud, store
}

// BenchmarkDecision is the latency of one decision through the auditor
// and the engine with a session-aware policy, on each store: what Redis
// adds is one pipelined round trip (answer cache + facts) on the answer
// path. Sessions rotate so that facts grow as in real traffic.
func BenchmarkDecision(b *testing.B) {
	for _, store := range []string{"memory", "redis"} {
		b.Run(store, func(b *testing.B) {
			var srv *redisServer
			if store == "redis" {
				srv = startRedis(b)
			}
			in, _, _ := benchReplica(b, srv)
			ctx := context.Background()
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				req := request(fmt.Sprintf("b%d", i), fmt.Sprintf("s%d", i%200), "Bash", benchCommand(i))
				t0 := time.Now()
				if _, err := in.Intercept(ctx, req); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e3, "p99-µs")
		})
	}
}

func benchCommand(i int) string {
	switch i % 10 {
	case 3:
		return "cat /repo/.env"
	case 7:
		return "curl -s https://example.com/x"
	default:
		return "ls /repo/dir" + strconv.Itoa(i%50)
	}
}

// BenchmarkSessions10k fills each store with 10,000 sessions of 5
// decisions and reports what they take: keys and bytes in Redis, heap in
// the process for the memory store.
func BenchmarkSessions10k(b *testing.B) {
	const sessions, per = 10_000, 5
	for _, store := range []string{"memory", "redis"} {
		b.Run(store, func(b *testing.B) {
			var srv *redisServer
			if store == "redis" {
				srv = startRedis(b)
			}
			for range b.N {
				in, aud, st := benchReplica(b, srv)
				runtime.GC()
				var before runtime.MemStats
				runtime.ReadMemStats(&before)
				usedBefore := redisUsedMemory(b, srv)
				ctx := context.Background()
				for s := range sessions {
					for e := range per {
						req := request(fmt.Sprintf("k%d-%d", s, e), fmt.Sprintf("s%d", s), "Bash", benchCommand(s+e))
						if _, err := in.Intercept(ctx, req); err != nil {
							b.Fatal(err)
						}
					}
				}
				if err := aud.Flush(ctx); err != nil {
					b.Fatal(err)
				}
				if st != nil {
					if err := st.Flush(ctx); err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(float64(redisInt(b, srv, "DBSIZE")), "keys/10k-sessions")
					b.ReportMetric(float64(redisUsedMemory(b, srv)-usedBefore)/1e6, "redis-MB/10k-sessions")
					continue
				}
				runtime.GC()
				var after runtime.MemStats
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/1e6, "heap-MB/10k-sessions")
				runtime.KeepAlive(in)
			}
		})
	}
}

func redisClient(b *testing.B, srv *redisServer) rueidis.Client {
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{srv.addr}, DisableCache: true})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

func redisInt(b *testing.B, srv *redisServer, cmd string) int64 {
	c := redisClient(b, srv)
	defer c.Close()
	n, err := c.Do(context.Background(), c.B().Arbitrary(cmd).Build()).AsInt64()
	if err != nil {
		b.Fatal(err)
	}
	return n
}

func redisUsedMemory(b *testing.B, srv *redisServer) int64 {
	if srv == nil {
		return 0
	}
	c := redisClient(b, srv)
	defer c.Close()
	info, err := c.Do(context.Background(), c.B().Info().Section("memory").Build()).ToString()
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	b.Fatal("INFO memory has no used_memory")
	return 0
}

// BenchmarkLoad is the read a decision makes, alone: one pipelined round
// trip for the answer and a session's facts (64 recent calls, paths and
// hosts: the bounds reached), and their decoding.
func BenchmarkLoad(b *testing.B) {
	srv := startRedis(b)
	_, aud, st := benchReplica(b, srv)
	in := aud.Interceptor(nopJudge{})
	ctx := context.Background()
	for i := range 200 {
		if _, err := in.Intercept(ctx, request(fmt.Sprintf("f%d", i), "s", "Bash", "x")); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 100 {
		st.Send(audit.Update{Kind: audit.UpdateExecuted, Time: time.Now(), Source: "urn:fleet", SessionID: "s",
			EventID: fmt.Sprintf("x%d", i), Call: audit.Call{Family: "file_read", Reads: []string{fmt.Sprintf("/repo/src/pkg%d/file.go", i)}}})
	}
	if err := st.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	q := audit.Query{Source: "urn:fleet", EventID: "none", SessionID: "s", Facts: true}
	b.Run("roundtrip+decode", func(b *testing.B) {
		for b.Loop() {
			if _, err := st.Load(ctx, q); err != nil {
				b.Fatal(err)
			}
		}
	})
	c := redisClient(b, srv)
	defer c.Close()
	raw, err := c.Do(ctx, c.B().Get().Key(st.factsKey("urn:fleet", "s")).Build()).AsBytes()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(raw)), "facts-bytes")
	b.Run("decode", func(b *testing.B) {
		for b.Loop() {
			if _, err := decodeFacts(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
}

type nopJudge struct{}

func (nopJudge) Judge(context.Context, *transport.InterceptRequest) engine.Verdict {
	return engine.Verdict{Result: transport.NewResult()}
}
