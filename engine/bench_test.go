package engine

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/ahp-opa/ahp-opa/bundles"
	"github.com/ahp-opa/ahp-opa/transport"
)

// benchRequests are whole hooks/intercept lines, as a harness sends them.
var benchRequests = map[string]string{
	"shell-allow": `{"jsonrpc":"2.0","id":"evt_1","method":"hooks/intercept","params":{"protocolVersion":"draft","event":{"id":"evt_1","source":"urn:uuid:5b7de29e-a9e0-41a8-bf26-d94b05f0656d","type":"tool.before","time":"2026-08-24T08:51:14Z","session":{"id":"sess_123","cwd":"/repo","workspaceRoots":["/repo"]},"tool":{"name":"Bash","kind":"shell","input":{"command":"go test ./... && git status"},"origin":"native"},"call":{"id":"call_456"},"path":"native"},"capabilities":{"effects":["deny"]}}}`,
	"shell-deny":  `{"jsonrpc":"2.0","id":"evt_1","method":"hooks/intercept","params":{"protocolVersion":"draft","event":{"id":"evt_1","source":"urn:uuid:5b7de29e-a9e0-41a8-bf26-d94b05f0656d","type":"tool.before","time":"2026-08-24T08:51:14Z","session":{"id":"sess_123","cwd":"/repo","workspaceRoots":["/repo"]},"tool":{"name":"Bash","kind":"shell","input":{"command":"git push --force origin main"},"origin":"native"},"call":{"id":"call_456"},"path":"native"},"capabilities":{"effects":["deny"]}}}`,
	"file-read":   `{"jsonrpc":"2.0","id":"evt_1","method":"hooks/intercept","params":{"protocolVersion":"draft","event":{"id":"evt_1","source":"urn:uuid:5b7de29e-a9e0-41a8-bf26-d94b05f0656d","type":"tool.before","time":"2026-08-24T08:51:14Z","session":{"id":"sess_123","cwd":"/repo","workspaceRoots":["/repo"]},"tool":{"name":"Read","kind":"file_read","input":{"file_path":"/repo/README.md"},"origin":"native"},"call":{"id":"call_456"},"path":"native"},"capabilities":{"effects":["deny"]}}}`,
}

// BenchmarkIntercept measures one full in-process decision on the built-in
// library: decode the line, validate, build input, evaluate, map, encode.
func BenchmarkIntercept(b *testing.B) {
	p, err := bundles.Builtin()
	if err != nil {
		b.Fatal(err)
	}
	e := New(Options{})
	if err := e.Load(context.Background(), p); err != nil {
		b.Fatal(err)
	}
	srv := &transport.Server{Interceptor: e}
	for name, line := range benchRequests {
		b.Run(name, func(b *testing.B) {
			data := []byte(line)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				resp := srv.Handle(ctx, data)
				if resp == nil || resp.Error != nil {
					b.Fatalf("unexpected response %+v", resp)
				}
				if _, err := json.Marshal(resp); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkInterceptMinimal isolates the fixed cost around evaluation:
// decoding, validation, input conversion, the query and encoding, with a
// one-rule policy.
func BenchmarkInterceptMinimal(b *testing.B) {
	e := New(Options{})
	if err := e.Load(context.Background(), policy(b, map[string]string{"p.rego": `package ahp.tool.before.p
deny contains "no" if input.tool.name == "Danger"`})); err != nil {
		b.Fatal(err)
	}
	srv := &transport.Server{Interceptor: e}
	data := []byte(benchRequests["shell-allow"])
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		resp := srv.Handle(ctx, data)
		if _, err := json.Marshal(resp); err != nil {
			b.Fatal(err)
		}
	}
}
