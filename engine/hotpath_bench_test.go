package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/util"

	"github.com/ahp-opa/ahp-opa/transport"
)

// hotPathEvents is how many distinct requests the hot-path benchmarks
// cycle through: every iteration sees a command it has not seen for a
// while, so nothing is answered from a cache of identical inputs.
const hotPathEvents = 1024

// hotPathLine returns request i: a ~0.7 KB shell tool.before event whose
// command differs with i.
func hotPathLine(i int) []byte {
	n := strconv.Itoa(i)
	return []byte(`{"jsonrpc":"2.0","id":"evt_` + n + `","method":"hooks/intercept","params":{"protocolVersion":"draft","event":{"id":"evt_` + n +
		`","source":"urn:uuid:5b7de29e-a9e0-41a8-bf26-d94b05f0656d","type":"tool.before","time":"2026-08-24T08:51:14Z",` +
		`"session":{"id":"sess_123","cwd":"/repo","workspaceRoots":["/repo"]},"tool":{"name":"Bash","kind":"shell",` +
		`"input":{"command":"cd /repo && go test ./pkg/` + n + `/... -run TestThing -count=1 2>&1 | tail -20 && git status --short","description":"Run the tests of package ` + n + ` and show what changed"},"origin":"native"},` +
		`"call":{"id":"call_` + n + `"},"path":"native","agent":{"name":"claude-code","version":"2.0.1"}},"capabilities":{"effects":["deny"]}}}`)
}

// hotPathPolicies are the reference policies the side-by-side benchmarks
// against OPA's server run: bench/reference (28 rules calling helper
// functions) and bench/plain (25 regular expressions in a table and one
// object.get), by the package of their deny rules.
var hotPathPolicies = []struct{ name, file, pkg string }{
	{"reference", "../bench/reference/policy.rego", "ahp.tool.before.reference"},
	{"plain", "../bench/plain/policy.rego", "ahp.tool.before.plain"},
}

// BenchmarkHotPath compares one whole in-process decision of a distinct
// event (decode the line, validate, build the input, evaluate, map the
// effects, encode the reply) with a bare prepared OPA evaluation of the
// same policy on the same event. "bare-parsed" hands OPA the event already
// as an AST value (the least OPA can do); "bare-json" starts from the
// event's bytes, as OPA's REST server does.
func BenchmarkHotPath(b *testing.B) {
	for _, p := range hotPathPolicies {
		b.Run(p.name, func(b *testing.B) {
			h := newHotPath(b, p.file, p.pkg)
			ctx := context.Background()
			b.Run("ahp-opa", func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					h.decide(b, i)
					i++
				}
			})
			b.Run("bare-parsed", func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if _, err := h.bare.Eval(ctx, rego.EvalParsedInput(h.parsed[i%hotPathEvents])); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
			b.Run("bare-json", func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					var in any
					if err := util.UnmarshalJSON(h.events[i%hotPathEvents], &in); err != nil {
						b.Fatal(err)
					}
					if _, err := h.bare.Eval(ctx, rego.EvalInput(in)); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		})
	}
}

// BenchmarkHotPathRatio runs the whole decision and the bare evaluation
// of the same event back to back in every iteration and reports the ratio
// of their times: on a shared machine, load that comes and goes weighs on
// both alike.
func BenchmarkHotPathRatio(b *testing.B) {
	for _, p := range hotPathPolicies {
		b.Run(p.name, func(b *testing.B) {
			h := newHotPath(b, p.file, p.pkg)
			ctx := context.Background()
			var ours, bare time.Duration
			i := 0
			for b.Loop() {
				t0 := time.Now()
				h.decide(b, i)
				t1 := time.Now()
				if _, err := h.bare.Eval(ctx, rego.EvalParsedInput(h.parsed[i%hotPathEvents])); err != nil {
					b.Fatal(err)
				}
				ours, bare = ours+t1.Sub(t0), bare+time.Since(t1)
				i++
			}
			b.ReportMetric(float64(ours)/float64(bare), "x-bare")
		})
	}
}

// hotPath holds the distinct requests, the engine serving a reference
// policy and the bare prepared query.
type hotPath struct {
	srv    *transport.Server
	bare   rego.PreparedEvalQuery
	lines  [][]byte    // whole hooks/intercept messages
	events [][]byte    // their events
	parsed []ast.Value // their events, parsed
}

func newHotPath(b *testing.B, file, pkg string) *hotPath {
	b.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	src := string(raw)
	ctx := context.Background()
	// A deadline far away: a stall on a loaded machine must not fail the
	// benchmark.
	e := New(Options{EvalTimeout: time.Minute})
	if err := e.Load(ctx, policy(b, map[string]string{"policy.rego": src})); err != nil {
		b.Fatal(err)
	}
	bare, err := rego.New(
		rego.Query("data."+pkg+".deny"),
		rego.Module("policy.rego", src),
	).PrepareForEval(ctx)
	if err != nil {
		b.Fatal(err)
	}
	h := &hotPath{srv: &transport.Server{Interceptor: e}, bare: bare}
	lines := make([][]byte, hotPathEvents)
	events := make([][]byte, hotPathEvents)
	parsed := make([]ast.Value, hotPathEvents)
	for i := range lines {
		lines[i] = hotPathLine(i)
		var msg struct {
			Params struct {
				Event json.RawMessage `json:"event"`
			} `json:"params"`
		}
		if err := json.Unmarshal(lines[i], &msg); err != nil {
			b.Fatal(err)
		}
		events[i] = msg.Params.Event
		v, err := ast.ValueFromReader(bytes.NewReader(events[i]))
		if err != nil {
			b.Fatal(err)
		}
		parsed[i] = v
	}
	h.lines, h.events, h.parsed = lines, events, parsed
	return h
}

// decide answers request i as the stdio and HTTP bindings do: handle
// the line, encode the reply.
func (h *hotPath) decide(b *testing.B, i int) {
	resp := h.srv.Handle(context.Background(), h.lines[i%hotPathEvents])
	if resp == nil || resp.Error != nil {
		b.Fatalf("unexpected response %+v", resp)
	}
	if _, err := resp.MarshalJSON(); err != nil {
		b.Fatal(err)
	}
}
