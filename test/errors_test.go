package test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ahp-opa/ahp-opa/internal/testkit"
)

// errCase is one request line and the error it must get.
type errCase struct {
	name  string // cites the rule
	line  string
	id    any     // expected reply id; nil is null
	codes []int64 // accepted codes, the first one preferred
	check func(t *testing.T, r *reply)
}

func supported(want ...string) func(t *testing.T, r *reply) {
	return func(t *testing.T, r *reply) { t.Helper(); wantSupported(t, r, want...) }
}

// errorCases covers every error code of PROTOCOL.md §5 along the
// validation order of §6. Each case builds a fresh message.
func errorCases() []errCase {
	req := func(id string) map[string]any { return denyRequest(id, "git status") }
	pv := func(id string, v any) string { return encode(with(req(id), "params.protocolVersion", v)) }
	evt := func(id, path string, v any) string { return encode(with(req(id), "params.event."+path, v)) }
	drop := func(id, path string) string { return encode(without(req(id), path)) }
	invalidUTF8 := `{"jsonrpc":"2.0","id":"evt-utf8","method":"hooks/intercept","params":{"protocolVersion":"draft","x":"` +
		"\xff\xfe" + `"}}`
	bad := []int64{-32700}
	invalid := []int64{-32600}
	params := []int64{-32602}
	return []errCase{
		// Step 1, -32700 with id null: not a single UTF-8 JSON object
		// (B-RPC-1, B-STDIO-5).
		{name: "B-STDIO-5 not JSON", line: `this is not json`, codes: bad},
		{name: "B-STDIO-5 truncated object", line: `{"jsonrpc":"2.0","id":"evt-x","method":"hooks/intercept"`, codes: bad},
		{name: "B-STDIO-5 lone open brace", line: `{`, codes: bad},
		{name: "B-STDIO-5 lone close brace", line: `}`, codes: bad},
		{name: "B-STDIO-5 fragment member line", line: `"jsonrpc": "2.0",`, codes: bad},
		{name: "B-STDIO-5 fragment string deny", line: `"deny"`, codes: bad},
		{name: "B-STDIO-5 fragment array line", line: `"effects": [`, codes: bad},
		{name: "B-STDIO-5 number", line: `42`, codes: bad},
		{name: "B-STDIO-5 null", line: `null`, codes: bad},
		{name: "B-STDIO-5 true", line: `true`, codes: bad},
		{name: "B-STDIO-5 two objects on one line", line: interceptLine("evt-a", "ls") + " " + interceptLine("evt-b", "ls"), codes: bad},
		{name: "B-STDIO-5 trailing garbage", line: interceptLine("evt-a", "ls") + "x", codes: bad},
		{name: "B-RPC-1 invalid UTF-8", line: invalidUTF8, codes: bad},

		// Step 2, -32600: batches (id null), envelope errors.
		{name: "B-RPC-1 batch of one request", line: "[" + interceptLine("evt-batch", "ls") + "]", codes: invalid},
		{name: "B-RPC-1 empty batch", line: `[]`, codes: invalid},
		{name: "B-RPC-1 batch of a notification", line: "[" + encode(observeMsg(sessionEndEvent("evt-o"))) + "]", codes: invalid},
		{name: "B-RPC-1 jsonrpc 1.0", line: encode(with(req("evt-v1"), "jsonrpc", "1.0")), id: "evt-v1", codes: invalid},
		{name: "B-RPC-1 jsonrpc number", line: encode(with(req("evt-v2"), "jsonrpc", 2.0)), id: "evt-v2", codes: invalid},
		{name: "B-RPC-1 jsonrpc missing", line: drop("evt-v3", "jsonrpc"), id: "evt-v3", codes: invalid},
		{name: "B-RPC-2 method missing", line: drop("evt-m1", "method"), id: "evt-m1", codes: invalid},
		{name: "B-RPC-2 method empty", line: encode(with(req("evt-m2"), "method", "")), id: "evt-m2", codes: invalid},
		{name: "B-RPC-2 method not a string", line: encode(with(req("evt-m3"), "method", 7)), id: "evt-m3", codes: invalid},
		{name: "B-RPC-3 id null", line: encode(with(req("evt-n"), "id", nil)), codes: invalid},
		{name: "B-RPC-3 id empty string", line: encode(with(req("evt-e"), "id", "")), codes: invalid},
		{name: "B-RPC-3 id fractional", line: encode(with(req("evt-f"), "id", json.Number("1.5"))), codes: invalid},
		{name: "B-RPC-3 id boolean", line: encode(with(req("evt-b"), "id", true)), codes: invalid},
		{name: "B-RPC-3 id object", line: encode(with(req("evt-o"), "id", map[string]any{"a": 1})), codes: invalid},
		{name: "B-RPC-3 id array", line: encode(with(req("evt-a"), "id", []any{"evt-a"})), codes: invalid},
		{name: "B-OBS-7 observe with string id", line: encode(with(observeMsg(sessionEndEvent("evt-obs-1")), "id", "evt-obs-1")), id: "evt-obs-1", codes: invalid},
		{name: "B-OBS-7 observe with integer id", line: encode(with(observeMsg(sessionEndEvent("evt-obs-2")), "id", 77)), id: json.Number("77"), codes: invalid},
		{name: "B-OBS-7 observe tool.before with id", line: encode(with(observeMsg(testkit.ShellEvent("evt-obs-3", "ls")), "id", "evt-obs-3")), id: "evt-obs-3", codes: invalid},

		// Step 4, -32601: unknown methods (B-RPC-5).
		{name: "B-RPC-5 unknown method", line: encode(with(req("evt-u1"), "method", "hooks/unknown")), id: "evt-u1", codes: []int64{-32601}},
		{name: "B-RPC-5 hooks/capabilities", line: encode(map[string]any{"jsonrpc": "2.0", "id": "cap-1", "method": "hooks/capabilities", "params": map[string]any{"protocolVersion": "draft"}}), id: "cap-1", codes: []int64{-32601}},
		{name: "B-RPC-5 initialize", line: `{"jsonrpc":"2.0","id":3,"method":"initialize","params":{}}`, id: json.Number("3"), codes: []int64{-32601}},
		{name: "B-RPC-5 method case differs", line: encode(with(req("evt-u2"), "method", "Hooks/Intercept")), id: "evt-u2", codes: []int64{-32601}},

		// Step 5, -32001 with data.supported ["draft"] (B-VER-1, B-VER-2).
		{name: "B-VER-2 protocolVersion missing", line: drop("evt-p1", "params.protocolVersion"), id: "evt-p1", codes: []int64{-32001}, check: supported("draft")},
		{name: "B-VER-2 protocolVersion 0.1", line: pv("evt-p2", "0.1"), id: "evt-p2", codes: []int64{-32001}, check: supported("draft")},
		{name: "B-VER-2 protocolVersion dated", line: pv("evt-p3", "2026-01-01"), id: "evt-p3", codes: []int64{-32001}, check: supported("draft")},
		{name: "B-VER-1 protocolVersion prefix", line: pv("evt-p4", "draft-1"), id: "evt-p4", codes: []int64{-32001}, check: supported("draft")},
		{name: "B-VER-1 protocolVersion case", line: pv("evt-p5", "Draft"), id: "evt-p5", codes: []int64{-32001}, check: supported("draft")},
		{name: "B-VER-1 protocolVersion padded", line: pv("evt-p6", " draft"), id: "evt-p6", codes: []int64{-32001}, check: supported("draft")},
		{name: "B-VER-2 protocolVersion number", line: pv("evt-p7", 1), id: "evt-p7", codes: []int64{-32001}, check: supported("draft")},
		{name: "B-VER-2 params missing", line: drop("evt-p8", "params"), id: "evt-p8", codes: []int64{-32001}, check: supported("draft")},
		{name: "B-VER-2 version checked before the event", line: encode(with(with(req("evt-p9"), "params.protocolVersion", "0.1"), "params.event", "garbage")), id: "evt-p9", codes: []int64{-32001}, check: supported("draft")},
		{name: "B-VER-2 integer id", line: encode(with(interceptMsg(9, testkit.ShellEvent("evt-p10", "ls"), "deny"), "params.protocolVersion", "0.1")), id: json.Number("9"), codes: []int64{-32001}, check: supported("draft")},

		// Step 6, -32002 with data.supported ["tool.before"] (B-INT-2).
		{name: "B-INT-2 tool.after", line: evt("evt-t1", "type", "tool.after"), id: "evt-t1", codes: []int64{-32002}, check: supported("tool.before")},
		{name: "B-INT-2 session.start", line: evt("evt-t2", "type", "session.start"), id: "evt-t2", codes: []int64{-32002}, check: supported("tool.before")},
		{name: "B-INT-2 turn.start", line: evt("evt-t3", "type", "turn.start"), id: "evt-t3", codes: []int64{-32002}, check: supported("tool.before")},
		{name: "B-INT-2 type case differs", line: evt("evt-t4", "type", "Tool.Before"), id: "evt-t4", codes: []int64{-32002}, check: supported("tool.before")},
		{name: "B-INT-2 checked before capabilities", line: encode(without(with(req("evt-t5"), "params.event.type", "tool.after"), "params.capabilities")), id: "evt-t5", codes: []int64{-32002}, check: supported("tool.before")},
		// A missing event or type is either "not tool.before" or a missing
		// required field: both codes are defensible (§6 steps 6/7).
		{name: "B-INT-5 event missing", line: drop("evt-t6", "params.event"), id: "evt-t6", codes: []int64{-32602, -32002}},
		{name: "B-INT-5 event.type missing", line: drop("evt-t7", "params.event.type"), id: "evt-t7", codes: []int64{-32602, -32002}},

		// Step 7, -32602 (B-INT-5).
		{name: "B-INT-5 capabilities missing", line: drop("evt-c1", "params.capabilities"), id: "evt-c1", codes: params},
		{name: "B-INT-5 capabilities.effects missing", line: drop("evt-c2", "params.capabilities.effects"), id: "evt-c2", codes: params},
		{name: "B-INT-5 capabilities.effects a string", line: encode(with(req("evt-c3"), "params.capabilities.effects", "deny")), id: "evt-c3", codes: params},
		{name: "B-INT-5 capabilities.effects holds a number", line: encode(with(req("evt-c6"), "params.capabilities.effects", []any{"deny", 1})), id: "evt-c6", codes: params},
		{name: "B-INT-5 capabilities.effects null", line: encode(with(req("evt-c4"), "params.capabilities.effects", nil)), id: "evt-c4", codes: params},
		{name: "B-INT-5 capabilities a string", line: encode(with(req("evt-c5"), "params.capabilities", `{"effects":["deny"]}`)), id: "evt-c5", codes: params},
		{name: "B-RPC-7 tool.input a JSON-encoded string", line: evt("evt-i1", "tool.input", `{"command":"git status"}`), id: "evt-i1", codes: params},
		{name: "B-RPC-7 tool.input an array", line: evt("evt-i2", "tool.input", []any{"git", "status"}), id: "evt-i2", codes: params},
		{name: "B-RPC-7 tool.input null", line: evt("evt-i3", "tool.input", nil), id: "evt-i3", codes: params},
		{name: "B-RPC-7 event a JSON-encoded string", line: encode(with(req("evt-i4"), "params.event", encode(testkit.ShellEvent("evt-i4", "ls")))), id: "evt-i4", codes: []int64{-32602, -32002}},
		{name: "B-INT-5 tool.input missing", line: drop("evt-r1", "params.event.tool.input"), id: "evt-r1", codes: params},
		{name: "B-INT-5 tool missing", line: drop("evt-r2", "params.event.tool"), id: "evt-r2", codes: params},
		{name: "B-INT-5 tool.name missing", line: drop("evt-r3", "params.event.tool.name"), id: "evt-r3", codes: params},
		{name: "B-INT-5 event.source missing", line: drop("evt-r4", "params.event.source"), id: "evt-r4", codes: params},
		{name: "B-INT-5 event.time missing", line: drop("evt-r5", "params.event.time"), id: "evt-r5", codes: params},
		{name: "B-INT-5 event.time not RFC 3339", line: evt("evt-r6", "time", "yesterday"), id: "evt-r6", codes: params},
		{name: "B-INT-5 call missing (no legacy callId)", line: drop("evt-r7", "params.event.call"), id: "evt-r7", codes: params},
		{name: "B-INT-5 call.id missing", line: drop("evt-r8", "params.event.call.id"), id: "evt-r8", codes: params},
		{name: "B-INT-5 event.id missing, integer request id", line: encode(without(interceptMsg(5, testkit.ShellEvent("x", "ls"), "deny"), "params.event.id")), id: json.Number("5"), codes: params},
		{name: "B-INT-5 tool.origin not an enum value", line: evt("evt-r9", "tool.origin", "plugin"), id: "evt-r9", codes: params},
		{name: "B-RPC-8 id differs from event.id", line: encode(interceptMsg("evt-outer", testkit.ShellEvent("evt-inner", "ls"), "deny")), id: "evt-outer", codes: params},
		{name: "tool.before outcome present", line: evt("evt-a1", "outcome", "ok"), id: "evt-a1", codes: params},
		{name: "tool.before execution present", line: evt("evt-a2", "execution", map[string]any{"status": "executed"}), id: "evt-a2", codes: params},
		{name: "tool.before durationMs present", line: evt("evt-a3", "durationMs", 12), id: "evt-a3", codes: params},
		{name: "tool.before fileChanges present", line: evt("evt-a4", "fileChanges", []any{}), id: "evt-a4", codes: params},

		// Step 8 outcome refused: the policy denies but deny is not
		// advertised (B-INT-6, B-EFF-2).
		{name: "B-INT-6 deny not advertised (empty list)", line: encode(interceptMsg("evt-d1", testkit.ShellEvent("evt-d1", "git push --force"))), id: "evt-d1", codes: []int64{-32602, -32004}},
		{name: "B-INT-6 deny not advertised (flow only)", line: encode(interceptMsg("evt-d2", testkit.ShellEvent("evt-d2", "rm -rf ~"), "flow")), id: "evt-d2", codes: []int64{-32602, -32004}},
	}
}

// TestErrorPaths sends every error case to one persistent process and
// checks the code, the id and the data hints. Every reply is also checked
// against the wire contract and the schemas.
func TestErrorPaths(t *testing.T) {
	t.Parallel()
	p := startSerial(t)
	for _, c := range errorCases() {
		t.Run(c.name, func(t *testing.T) {
			r := p.roundTrip(t, c.line)
			wantID(t, r, c.id)
			if !r.isError {
				t.Fatalf("want error %v, got a result: %s", c.codes, r.line)
			}
			ok := false
			for _, code := range c.codes {
				ok = ok || r.code == code
			}
			if !ok {
				t.Errorf("error code %d, want one of %v: %s", r.code, c.codes, r.line)
			}
			if c.check != nil {
				c.check(t, r)
			}
		})
	}
	// The backend kept serving through all of it (B-STDIO-5).
	p.probe(t)
	p.expectCleanExit(t)
}

// TestErrorPathsPerEvent sends the first case of each error code to a
// fresh process, the per_event lifecycle: one line, the same error, exit 0
// (B-STDIO-3/4).
func TestErrorPathsPerEvent(t *testing.T) {
	t.Parallel()
	seen := map[int64]bool{}
	for _, c := range errorCases() {
		if seen[c.codes[0]] {
			continue
		}
		seen[c.codes[0]] = true
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res := runOnce(t, c.line+"\n", "serve", "--stdio")
			if res.status != 0 {
				t.Errorf("exit status %d, want 0\nstderr:\n%s", res.status, res.stderr)
			}
			if len(res.lines) != 1 {
				t.Fatalf("%d stdout lines, want 1: %q", len(res.lines), res.lines)
			}
			r := mustReply(t, res.lines[0])
			wantID(t, r, c.id)
			if !r.isError || r.code != c.codes[0] && (len(c.codes) < 2 || r.code != c.codes[1]) {
				t.Errorf("want error %v, got %s", c.codes, r.line)
			}
		})
	}
}

// TestErrorsDoNotEchoInput: error data and deny reasons never carry values
// taken from the request (B-ERR-2, B-EFF-6), and info-level logs do not
// record tool input (B-SEC-2).
func TestErrorsDoNotEchoInput(t *testing.T) {
	t.Parallel()
	const secret = "SECRET-7f3a9c"
	req := func(id string) map[string]any { return denyRequest(id, "git status") }
	lines := []string{
		secret + " is not json",
		`{"jsonrpc":"2.0","id":"evt-s0","method":"hooks/intercept","params":` + secret + `}`,
		encode(with(req("evt-s1"), "params.event.tool.input", secret)),
		encode(with(req("evt-s2"), "params.protocolVersion", secret)),
		encode(with(req("evt-s3"), "params.event.type", secret)),
		encode(with(req("evt-s4"), "method", secret)),
		encode(with(req("evt-s5"), "jsonrpc", secret)),
		encode(with(req("evt-s6"), "params.capabilities.effects", secret)),
		encode(with(req("evt-s7"), "params.event.time", secret)),
		encode(with(req("evt-s8"), "params.event.tool.origin", secret)),
		encode(interceptMsg("evt-s9", testkit.ShellEvent(secret, "ls"), "deny")),
		encode(interceptMsg("evt-s10", testkit.ShellEvent("evt-s10", "git push --force https://u:"+secret+"@example.com/r.git"))),
		interceptLine("evt-s11", "git push --force https://u:"+secret+"@example.com/r.git"),
		interceptLine("evt-s12", "rm -rf ~/"+secret+"/.. ~"),
	}
	p := startServe(t)
	for _, l := range lines {
		r := p.roundTrip(t, l)
		if strings.Contains(r.line, secret) {
			t.Errorf("reply echoes a request value (B-ERR-2, B-EFF-6): %s", r.line)
		}
	}
	p.expectCleanExit(t)
	if strings.Contains(p.stderr.String(), secret) {
		t.Errorf("info-level log records request values (B-SEC-2):\n%s", p.stderr.String())
	}
}
