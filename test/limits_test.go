package test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ahp-opa/ahp-opa/internal/testkit"
)

// writeLine is a hooks/intercept request for a Write of content bytes of
// plain text: allowed by every built-in rule when it is decided.
func writeLine(id string, content int) string {
	msg := denyRequest(id, "ls")
	with(msg, "params.event.tool", map[string]any{
		"name": "Write", "origin": "native",
		"input": map[string]any{"file_path": testkit.Workspace + "/src/big.txt", "content": strings.Repeat("plain text line\n", content/16+1)[:content]},
	})
	return encode(msg)
}

const tooLargeCode = "dev.ahp-opa.input.too-large"

// TestInputLimits: the same Write gets the same answer on stdio and on
// HTTP. Below max_input_bytes it is decided by the policy; above it, up to
// the framing limit, it is denied as too large to check (a deny, which a
// fail-open harness enforces, not a transport error); past the framing
// limit stdio answers -32600 with the request's id and HTTP 413.
func TestInputLimits(t *testing.T) {
	t.Parallel()
	const (
		input   = 64 << 10
		framing = 256 << 10
	)
	limits := []string{"--max-input-bytes", "65536", "--max-message-bytes", "262144", "--max-body-bytes", "262144"}
	cases := []struct {
		name    string
		content int
		want    string // "allow", "too-large" or "framing"
	}{
		// Sizes are of the content; the message is a little larger (a
		// newline is two bytes in JSON, and the envelope).
		{"under the input limit", input / 2, "allow"},
		{"over the input limit", input + 1024, "too-large"},
		{"under the framing limit", framing * 3 / 4, "too-large"},
		{"over the framing limit", framing + 1024, "framing"},
	}

	p := startSerial(t, limits...)
	hs := startHTTPServe(t, []string{"AHP_OPA_TOKEN=" + hsToken}, limits...)
	c := &http.Client{}
	defer c.CloseIdleConnections()
	for _, tc := range cases {
		line := writeLine("w-"+strings.ReplaceAll(tc.name, " ", "-"), tc.content)
		id := "w-" + strings.ReplaceAll(tc.name, " ", "-")
		t.Run("stdio/"+tc.name, func(t *testing.T) {
			r := p.roundTrip(t, line)
			wantID(t, r, id)
			checkLimitReply(t, r, tc.want)
		})
		t.Run("http/"+tc.name, func(t *testing.T) {
			resp := hsDo(t, c, http.MethodPost, hs.base+"/ahp", hsToken, "application/json", line)
			if tc.want == "framing" {
				if resp.status != http.StatusRequestEntityTooLarge {
					t.Errorf("status %d, want 413", resp.status)
				}
				return
			}
			if resp.status != http.StatusOK {
				t.Fatalf("status %d: %s", resp.status, resp.body)
			}
			r := mustReply(t, resp.body)
			wantID(t, r, id)
			checkLimitReply(t, r, tc.want)
		})
	}
	p.probe(t)
	p.expectCleanExit(t)
}

func checkLimitReply(t *testing.T, r *reply, want string) {
	t.Helper()
	switch want {
	case "allow":
		wantNoObjection(t, r)
	case "too-large":
		d := wantDeny(t, r)
		if d["code"] != tooLargeCode || !strings.Contains(d["reason"].(string), "too") {
			t.Errorf("deny %v, want code %s with a reason that says the input is too large", d, tooLargeCode)
		}
	case "framing":
		wantError(t, r, -32600)
	}
}

// TestDefaultLimitsAgree: with the defaults, a 3 MiB Write is decided and a
// 5 MiB one denied as too large, on both transports alike.
func TestDefaultLimitsAgree(t *testing.T) {
	t.Parallel()
	p := startSerial(t)
	hs := startHTTPServe(t, []string{"AHP_OPA_TOKEN=" + hsToken})
	c := &http.Client{}
	defer c.CloseIdleConnections()
	for _, tc := range []struct {
		content int
		want    string
	}{{3 << 20, "allow"}, {5 << 20, "too-large"}} {
		line := writeLine("w", tc.content)
		checkLimitReply(t, p.roundTrip(t, line), tc.want)
		resp := hsDo(t, c, http.MethodPost, hs.base+"/ahp", hsToken, "application/json", line)
		if resp.status != http.StatusOK {
			t.Fatalf("%d bytes over HTTP: status %d", tc.content, resp.status)
		}
		checkLimitReply(t, mustReply(t, resp.body), tc.want)
	}
	p.probe(t)
	p.expectCleanExit(t)
}
