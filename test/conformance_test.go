package test

import (
	"bytes"
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ahp-opa/ahp-opa/internal/testkit"
)

// fixture is one entry of conformance/INDEX.json.
type fixture struct {
	File   string `json:"file"`
	Role   string `json:"role"` // request, notification, response, error, registration
	Valid  bool   `json:"valid"`
	Expect string `json:"expect"`

	raw []byte // file content
}

func (f fixture) name() string { return path.Base(f.File) }

func (f fixture) isJSONL() bool { return strings.HasSuffix(f.File, ".jsonl") }

// messages returns what goes on stdin, one element per line: a .jsonl file
// line by line exactly as written (blank lines included), a .json file
// compacted to one line.
func (f fixture) messages(tb testing.TB) []string {
	tb.Helper()
	if f.isJSONL() {
		return strings.Split(strings.TrimSuffix(string(f.raw), "\n"), "\n")
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, f.raw); err != nil {
		tb.Fatalf("%s: %v", f.File, err)
	}
	return []string{buf.String()}
}

// loadIndex reads INDEX.json and every file it names.
func loadIndex(tb testing.TB) []fixture {
	tb.Helper()
	dir := filepath.Join(requireShared(tb), "conformance")
	b, err := os.ReadFile(filepath.Join(dir, "INDEX.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var list []fixture
	if err := json.Unmarshal(b, &list); err != nil {
		tb.Fatalf("INDEX.json: %v", err)
	}
	if len(list) == 0 {
		tb.Fatal("INDEX.json lists no fixtures")
	}
	for i := range list {
		list[i].raw, err = os.ReadFile(filepath.Join(dir, filepath.FromSlash(list[i].File)))
		if err != nil {
			tb.Fatalf("INDEX.json names a missing fixture: %v", err)
		}
	}
	return list
}

// TestSchemaValidatorOnResponseFixtures checks the validator used on every
// reply against the response-role and error-role fixtures: the valid ones
// pass, the ones a backend must never emit fail.
func TestSchemaValidatorOnResponseFixtures(t *testing.T) {
	t.Parallel()
	fixtures := loadIndex(t)
	s, err := loadSchemas()
	if err != nil {
		t.Fatalf("loading schemas: %v", err)
	}
	// Invalid fixtures the seed-era schemas themselves must reject.
	mustFailSchema := map[string]bool{
		"atomic-unknown.invalid.json":             true, // B-EFF-3
		"no-effect-response-version.invalid.json": true, // B-VER-3
		"error-response-result.invalid.json":      true, // B-RPC-3
	}
	seen := map[string]bool{}
	for _, f := range fixtures {
		if f.Role != "response" && f.Role != "error" {
			continue
		}
		seen[f.name()] = true
		t.Run(f.name(), func(t *testing.T) {
			for _, line := range f.messages(t) {
				if strings.TrimSpace(line) == "" {
					continue
				}
				var schemaErrs []error
				if f.Role == "response" {
					schemaErrs = append(schemaErrs, validateJSON(s.response, line))
				} else {
					schemaErrs = append(schemaErrs, validateJSON(s.message, line), validateJSON(s.errorResp, line))
				}
				_, probs := replyProblems(line, []string{"deny"})
				switch {
				case f.Valid:
					for _, err := range schemaErrs {
						if err != nil {
							t.Errorf("valid fixture fails the schema: %s", schemaErrorText(err))
						}
					}
					for _, p := range probs {
						t.Errorf("valid fixture fails the reply checks: %s", p)
					}
				case mustFailSchema[f.name()]:
					failed := false
					for _, err := range schemaErrs {
						failed = failed || err != nil
					}
					if !failed {
						t.Errorf("invalid fixture passes the schema (%s)", f.Expect)
					}
					if len(probs) == 0 {
						t.Errorf("invalid fixture passes the reply checks (%s)", f.Expect)
					}
				default:
					// Invalid only at an older revision (e.g. two denies):
					// the schema may accept it, the reply checks must not.
					t.Logf("schema verdict %v; reply checks: %q", schemaErrs, probs)
					if len(probs) == 0 {
						t.Errorf("invalid fixture passes the reply checks (%s)", f.Expect)
					}
				}
			}
		})
	}
	for name := range mustFailSchema {
		if !seen[name] {
			t.Errorf("INDEX.json no longer lists %s", name)
		}
	}
}

// TestRequestBuildersMatchSchema makes sure the messages the other tests
// build are valid at the seed revision, so a rejection is the backend's.
func TestRequestBuildersMatchSchema(t *testing.T) {
	t.Parallel()
	requireShared(t)
	s, err := loadSchemas()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		interceptLine("evt-1", "git status"),
		interceptLine("evt-2", "git push --force"),
	} {
		if err := validateJSON(s.request, line); err != nil {
			t.Errorf("builder request fails intercept-request.schema.json: %s\n%s", schemaErrorText(err), line)
		}
		if err := validateJSON(s.message, line); err != nil {
			t.Errorf("builder request fails json-rpc-message.schema.json: %v", err)
		}
	}
	obs := encode(with(observeMsg(sessionEndEvent("evt-obs")), "params.subscriptionId", "observer"))
	if err := validateJSON(s.observe, obs); err != nil {
		t.Errorf("builder notification fails observe-notification.schema.json: %v\n%s", err, obs)
	}
}

// fixtureCheck asserts what INDEX.json's expect text says about the replies
// to one fixture sent over stdio.
type fixtureCheck func(t *testing.T, f fixture, replies []*reply)

// fixtureChecks holds the specific expectations; fixtures not listed get
// the generic checks for their role and validity (see genericCheck), so a
// new fixture in INDEX.json is replayed without touching this table.
var fixtureChecks = map[string]fixtureCheck{
	// B-INT-1, B-STDIO-1: one line, a deny, since the built-in library
	// denies `git push --force`.
	"intercept-request.valid.jsonl": func(t *testing.T, f fixture, replies []*reply) {
		if !wantCount(t, replies, 1) {
			return
		}
		wantID(t, replies[0], "evt_stdio_001")
		wantDeny(t, replies[0])
	},
	// B-STDIO-5: pretty-printed JSON is a framing error on every line: each
	// non-blank line gets -32700 with id null, never an effect.
	"intercept-request-multiline.invalid.jsonl": func(t *testing.T, f fixture, replies []*reply) {
		n := 0
		for _, l := range f.messages(t) {
			if strings.TrimSpace(l) != "" {
				n++
			}
		}
		if !wantCount(t, replies, n) {
			return
		}
		for _, r := range replies {
			wantError(t, r, -32700)
			wantID(t, r, nil)
		}
	},
	// B-INT-5: the legacy shape (tool.callId, no path/origin) is evaluated.
	"intercept-request.valid.json": func(t *testing.T, f fixture, replies []*reply) {
		if !wantCount(t, replies, 1) {
			return
		}
		wantID(t, replies[0], "evt_http_001")
		if replies[0].isError {
			t.Errorf("legacy-shaped request was not evaluated: %s", replies[0].line)
		}
	},
	// B-INT-5, B-EFF-2: no effects array → -32602 with the request id.
	"intercept-request-effects-missing.invalid.json": func(t *testing.T, f fixture, replies []*reply) {
		if !wantCount(t, replies, 1) {
			return
		}
		wantID(t, replies[0], "evt_missing_effects")
		wantError(t, replies[0], -32602)
	},
	// B-RPC-3, B-RPC-8: id differs from event.id → -32602 with the outer id.
	"intercept-request-id-mismatch.invalid.json": func(t *testing.T, f fixture, replies []*reply) {
		if !wantCount(t, replies, 1) {
			return
		}
		wantID(t, replies[0], "evt_http_outer")
		wantError(t, replies[0], -32602)
	},
	// B-EFF-2, B-INT-6: flow advertised, deny not: never deny or flow;
	// -32602 or effects [].
	"tool-before-continue-capability.invalid.json": func(t *testing.T, f fixture, replies []*reply) {
		if !wantCount(t, replies, 1) {
			return
		}
		r := replies[0]
		wantID(t, r, "evt_observe_before_001")
		if r.isError {
			wantError(t, r, -32602)
		} else {
			wantNoObjection(t, r)
		}
	},
	// B-OBS-7: an observe with an id → -32600 with that id, never a result.
	"observe-with-id.invalid.json": func(t *testing.T, f fixture, replies []*reply) {
		if !wantCount(t, replies, 1) {
			return
		}
		wantID(t, replies[0], "evt_observe_with_id_001")
		wantError(t, replies[0], -32600)
	},
}

func wantCount(t *testing.T, replies []*reply, n int) bool {
	t.Helper()
	if len(replies) != n {
		t.Errorf("got %d reply lines, want %d: %v", len(replies), n, replies)
		return false
	}
	return true
}

// genericCheck is what any request or notification fixture must satisfy.
func genericCheck(t *testing.T, f fixture, replies []*reply) {
	t.Helper()
	msgs := f.messages(t)
	var obj map[string]any
	if len(msgs) == 1 {
		obj, _ = decodeJSON(t, msgs[0]).(map[string]any)
	}
	id, hasID := obj["id"]
	switch {
	case f.Role == "notification" && !hasID && obj != nil:
		// B-RPC-4, B-OBS-1: never any output for a notification.
		wantCount(t, replies, 0)
	case f.Role == "notification":
		// B-OBS-7: an observe with an id is an invalid request.
		if wantCount(t, replies, 1) {
			wantID(t, replies[0], id)
			wantError(t, replies[0], -32600)
		}
	case obj == nil:
		// Several lines: at most one reply each, never a result.
		if len(replies) > len(msgs) {
			t.Errorf("%d replies to %d lines", len(replies), len(msgs))
		}
		for _, r := range replies {
			if !r.isError {
				t.Errorf("a malformed fixture got a result: %s", r.line)
			}
		}
	default:
		if !wantCount(t, replies, 1) {
			return
		}
		r := replies[0]
		if r.idJSON != "null" {
			wantID(t, r, id)
		}
		if f.Valid && r.isError {
			t.Errorf("valid request got an error: %s", r.line)
		}
		if !f.Valid && len(r.effects) > 0 {
			t.Errorf("invalid request got effects: %s", r.line)
		}
	}
}

// advertisedBy returns params.capabilities.effects of a single-message
// fixture, or ["deny"].
func advertisedBy(t *testing.T, f fixture) []string {
	msgs := f.messages(t)
	if len(msgs) != 1 {
		return []string{"deny"}
	}
	obj, _ := decodeJSON(t, msgs[0]).(map[string]any)
	params, _ := obj["params"].(map[string]any)
	caps, _ := params["capabilities"].(map[string]any)
	list, ok := caps["effects"].([]any)
	if !ok {
		return nil
	}
	var out []string
	for _, e := range list {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// TestConformanceFixtures replays every request and notification fixture of
// INDEX.json over stdio and asserts what its expect text says:
//   - persistent: one process gets every fixture in turn, each followed by
//     a probe request, so the lines before the probe's reply are exactly the
//     fixture's replies (and silence is proven); valid requests are sent
//     twice and must be answered alike (B-DUP-1);
//   - per_event: a fresh process per fixture, stdin closed after it, at
//     most one line per message and exit status 0 (B-STDIO-3/4); its
//     replies must equal the persistent ones (B-DUP-1).
func TestConformanceFixtures(t *testing.T) {
	t.Parallel()
	fixtures := messageFixtures(t)
	input := func(t *testing.T, f fixture) string { return strings.Join(f.messages(t), "\n") + "\n" }
	check := func(t *testing.T, f fixture, replies []*reply) {
		t.Helper()
		genericCheck(t, f, replies)
		if c, ok := fixtureChecks[f.name()]; ok {
			c(t, f, replies)
		}
	}

	persistent := map[string][]*reply{}
	t.Run("persistent", func(t *testing.T) {
		p := startSerial(t)
		for _, f := range fixtures {
			t.Run(f.name(), func(t *testing.T) {
				t.Logf("expect: %s", f.Expect)
				if _, ok := fixtureChecks[f.name()]; !ok {
					t.Logf("no specific expectation for %s: generic %s checks only", f.name(), f.Role)
				}
				advertised := advertisedBy(t, f)
				p.sendRaw(t, []byte(input(t, f)))
				replies := p.repliesUntilProbe(t)
				for _, r := range replies {
					// Re-check with this fixture's advertised effects.
					mustReplyAdvertising(t, r.line, advertised)
				}
				check(t, f, replies)
				persistent[f.name()] = replies

				if f.Role == "request" && f.Valid && len(f.messages(t)) == 1 {
					p.sendRaw(t, []byte(input(t, f)))
					again := p.repliesUntilProbe(t)
					sameReplies(t, replies, again)
				}
			})
		}
		p.expectCleanExit(t)
	})

	t.Run("per_event", func(t *testing.T) {
		// One process per fixture: the slowest part of the suite. The
		// per_event lifecycle itself is covered by TestPerEvent.
		testkit.RequireLong(t)
		for _, f := range fixtures {
			t.Run(f.name(), func(t *testing.T) {
				t.Parallel()
				advertised := advertisedBy(t, f)
				res := runOnce(t, input(t, f), "serve", "--stdio")
				if res.status != 0 {
					t.Errorf("exit status %d, want 0 (B-STDIO-3)\nstderr:\n%s", res.status, res.stderr)
				}
				if res.partial != "" {
					t.Errorf("incomplete last line %q", res.partial)
				}
				var replies []*reply
				for _, l := range res.lines {
					replies = append(replies, mustReplyAdvertising(t, l, advertised))
				}
				if len(f.messages(t)) == 1 && len(replies) > 1 {
					t.Errorf("per_event: %d lines for one message (B-STDIO-3)", len(replies))
				}
				check(t, f, replies)
				if want, ok := persistent[f.name()]; ok {
					sameReplies(t, want, replies)
				}
			})
		}
	})
}

// sameReplies requires two answers to the same input to be semantically
// equal (B-DUP-1). Several messages may be answered in any order (they are
// correlated by id), so replies are compared as sorted lists.
func sameReplies(t *testing.T, want, got []*reply) {
	t.Helper()
	if len(want) != len(got) {
		t.Errorf("same input, %d replies then %d (B-DUP-1)", len(want), len(got))
		return
	}
	sorted := func(rs []*reply) []*reply {
		out := slices.Clone(rs)
		slices.SortFunc(out, func(a, b *reply) int { return strings.Compare(encode(a.obj), encode(b.obj)) })
		return out
	}
	want, got = sorted(want), sorted(got)
	for i := range want {
		if !reflect.DeepEqual(want[i].obj, got[i].obj) {
			t.Errorf("same input answered differently (B-DUP-1):\n first: %s\n again: %s", want[i].line, got[i].line)
		}
	}
}

// messageFixtures returns the request and notification fixtures of
// INDEX.json: what a harness sends.
func messageFixtures(t *testing.T) []fixture {
	t.Helper()
	var fixtures []fixture
	for _, f := range loadIndex(t) {
		if f.Role == "request" || f.Role == "notification" {
			fixtures = append(fixtures, f)
		}
	}
	if len(fixtures) == 0 {
		t.Fatal("INDEX.json lists no request or notification fixture")
	}
	return fixtures
}
