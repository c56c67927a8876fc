package audit

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/bundles"
	"github.com/ahp-opa/ahp-opa/engine"
	"github.com/ahp-opa/ahp-opa/transport"
)

const benchLine = `{"jsonrpc":"2.0","id":"evt_1","method":"hooks/intercept","params":{"protocolVersion":"draft","event":{"id":"evt_1","source":"urn:uuid:5b7de29e-a9e0-41a8-bf26-d94b05f0656d","type":"tool.before","time":"2026-08-24T08:51:14Z","session":{"id":"sess_123","cwd":"/repo","workspaceRoots":["/repo"]},"tool":{"name":"Bash","kind":"shell","input":{"command":"go test ./... && git status"},"origin":"native"},"call":{"id":"call_456"},"path":"native"},"capabilities":{"effects":["deny"]}}}`

// BenchmarkAuditOverhead compares one intercept through the engine alone
// with the same intercept through the auditor writing a real file. Each
// iteration uses a fresh event id, so the retry cache never answers.
func BenchmarkAuditOverhead(b *testing.B) {
	engine.InstallRegexPrefilter() // as the command runs; benchmarks start after every test
	p, err := bundles.Builtin()
	if err != nil {
		b.Fatal(err)
	}
	eng := engine.New(engine.Options{})
	if err := eng.Load(context.Background(), p); err != nil {
		b.Fatal(err)
	}
	file, err := OpenFile(FileConfig{Path: filepath.Join(b.TempDir(), "audit.jsonl")})
	if err != nil {
		b.Fatal(err)
	}
	defer file.Close()
	aud, err := New(Config{QueueSize: 1 << 16}, file, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer aud.Close()

	for _, c := range []struct {
		name string
		in   transport.Interceptor
	}{{"off", eng}, {"on", aud.Interceptor(eng)}} {
		b.Run(c.name, func(b *testing.B) {
			srv := &transport.Server{Interceptor: c.in}
			msg, perr := transport.Decode([]byte(benchLine))
			if perr != nil {
				b.Fatal(perr)
			}
			params := msg["params"].(map[string]any)
			ev := params["event"].(map[string]any)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				benchSeq++ // unique across runs: the retry cache must not answer
				id := "evt_" + itoa(benchSeq)
				ev["id"] = id
				req := &transport.InterceptRequest{ID: transport.StringID(id), Effects: []string{"deny"},
					Event: transport.Event{ID: id, Source: "urn:x", Type: "tool.before", Session: transport.Session{ID: "sess_123"},
						CallID: "call_" + id, Tool: transport.Tool{Name: "Bash", Kind: "shell"}, Object: ast.MustInterfaceToValue(ev).(ast.Object)}}
				if _, err := srv.Interceptor.Intercept(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			aud.Flush(ctx)
		})
	}
}

var benchSeq int

func itoa(i int) string {
	var buf [20]byte
	n := len(buf)
	for {
		n--
		buf[n] = byte('0' + i%10)
		if i < 10 {
			return string(buf[n:])
		}
		i /= 10
	}
}

// BenchmarkFactsCycle is the per-decision cost of session facts in a long
// session: count a call, then rebuild the facts object.
func BenchmarkFactsCycle(b *testing.B) {
	f := NewFacts(time.Hour)
	now := time.Now()
	i := 0
	for b.Loop() {
		i++
		f.observeDecision("urn:x", "s", "c"+itoa(i), DecisionAllow, Call{Family: "shell", Reads: []string{"/repo/a", "/repo/b"}}, now)
		f.Session(context.Background(), "urn:x", "s")
	}
}
