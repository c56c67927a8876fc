package test

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ahp-opa/ahp-opa/internal/testkit"
	"github.com/open-policy-agent/opa/v1/bundle"
)

// Black-box tests of hot reloading: the binary serves a policy, the test
// changes the sources, and the answers follow.

// reloadSettle bounds each wait for a reload: debounce plus a compile,
// on a busy machine with -race.
const reloadSettle = 20 * time.Second

// reloadRule is a policy denying the tool named tool with reason.
func reloadRule(pkg, tool, reason string) string {
	return fmt.Sprintf("package ahp.tool.before.%s\n\ndeny contains {\"reason\": %q, \"code\": \"com.example.reload\"} if input.tool.name == %q\n",
		pkg, reason, tool)
}

// reloadAsk sends one intercept for tool, advertising deny.
func reloadAsk(t *testing.T, p *proc, id, tool string) *reply {
	t.Helper()
	ev := testkit.ShellEvent(id, "irrelevant")
	with(ev, "tool.name", tool)
	with(ev, "tool.kind", "other")
	r := p.roundTrip(t, encode(interceptMsg(id, ev, "deny")))
	wantID(t, r, id)
	return r
}

// reloadReason is the deny reason of r, "" for no objection, or "error N".
func reloadReason(r *reply) string {
	if r.isError {
		return fmt.Sprintf("error %d", r.code)
	}
	if d := r.denyEffect(); d != nil {
		reason, _ := d["reason"].(string)
		return reason
	}
	return ""
}

// reloadAwait asks about tool until the answer is want, and returns the
// reply.
func reloadAwait(t *testing.T, p *proc, tool, want string) *reply {
	t.Helper()
	deadline := time.Now().Add(reloadSettle)
	for i := 0; ; i++ {
		r := reloadAsk(t, p, fmt.Sprintf("evt-%s-%d", tool, i), tool)
		if reloadReason(r) == want {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: answer %q, want %q after %s\nstderr:\n%s", tool, reloadReason(r), want, reloadSettle, p.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// reloadRevision is the policy revision in a deny's extension.
func reloadRevision(r *reply) string {
	d := r.denyEffect()
	ext, _ := d["extensions"].(map[string]any)
	det, _ := ext["dev.ahp-opa"].(map[string]any)
	rev, _ := det["revision"].(string)
	return rev
}

func reloadPut(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReloadServe edits, breaks, extends and prunes the policy directory of
// a running `serve --stdio`.
func TestReloadServe(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	main := filepath.Join(dir, "main.rego")
	reloadPut(t, main, reloadRule("m", "Zap", "v1"))
	p := startServe(t, "--policy", dir, "--log-level", "debug")
	r := reloadAwait(t, p, "Zap", "v1")
	rev1 := reloadRevision(r)

	reloadPut(t, main, reloadRule("m", "Zap", "v2"))
	r = reloadAwait(t, p, "Zap", "v2")
	if rev := reloadRevision(r); rev == "" || rev == rev1 {
		t.Errorf("revision %q after an edit, was %q", rev, rev1)
	}

	// A broken save: the last good policy keeps answering, the log says
	// where the error is.
	reloadPut(t, main, "package ahp.tool.before.m\n\ndeny contains if {\n")
	deadline := time.Now().Add(reloadSettle)
	for !strings.Contains(p.stderr.String(), "main.rego:4") {
		if time.Now().After(deadline) {
			t.Fatalf("no reload error naming main.rego:4 in the log:\n%s", p.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := reloadReason(reloadAsk(t, p, "evt-broken", "Zap")); got != "v2" {
		t.Errorf("after a broken save: %q, want v2", got)
	}

	// New file in a new subdirectory, then its removal.
	extra := filepath.Join(dir, "team", "extra.rego")
	reloadPut(t, main, reloadRule("m", "Zap", "v3"))
	reloadPut(t, extra, reloadRule("extra", "Bolt", "extra"))
	reloadAwait(t, p, "Bolt", "extra")
	reloadAwait(t, p, "Zap", "v3")
	if err := os.Remove(extra); err != nil {
		t.Fatal(err)
	}
	reloadAwait(t, p, "Bolt", "")
	p.expectCleanExit(t)
	for _, want := range []string{`"outcome":"activated"`, `"outcome":"failed"`, `"files":`, `"duration":`} {
		if !strings.Contains(p.stderr.String(), want) {
			t.Errorf("reload log lacks %s", want)
		}
	}
}

// TestReloadStartupRefusals: a policy that cannot be served stops the
// process at startup with a clear message.
func TestReloadStartupRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	failing := filepath.Join(dir, "failing")
	reloadPut(t, filepath.Join(failing, "p.rego"), reloadRule("p", "Zap", "no"))
	reloadPut(t, filepath.Join(failing, "p_test.rego"), "package ahp.tool.before.p_test\n\ntest_wrong if false\n")
	empty := filepath.Join(dir, "empty")
	reloadPut(t, filepath.Join(empty, "README.md"), "nothing here")
	unsigned := filepath.Join(dir, "unsigned.tar.gz")
	reloadBundle(t, unsigned, "u1", reloadRule("u", "Zap", "u"))
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no policy files", []string{"--policy", empty}, "no Rego policy found"},
		{"failing tests", []string{"--policy", failing, "--verify-tests"}, "policy tests failed"},
		{"unsigned bundle", []string{"--policy", unsigned, "--verification-key", "secret-not-a-key"}, "signature"},
		{"bad bundles config", []string{"--config", writeFile(t, dir, "c.yaml", "bundles:\n  b:\n    service: nowhere\n")}, "nowhere"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res := runOnce(t, interceptLine("evt-x", "ls")+"\n", append([]string{"serve", "--stdio"}, c.args...)...)
			if res.status == 0 || len(res.lines) != 0 {
				t.Errorf("status %d, stdout %q: want a non-zero exit and no reply", res.status, res.lines)
			}
			if !strings.Contains(res.stderr, c.want) {
				t.Errorf("stderr lacks %q:\n%s", c.want, res.stderr)
			}
			if strings.Contains(res.stderr, "secret-not-a-key") {
				t.Errorf("stderr quotes the key:\n%s", res.stderr)
			}
		})
	}
}

// reloadBundle writes an unsigned bundle tarball with one module.
func reloadBundle(t *testing.T, path, revision, module string) {
	t.Helper()
	var buf bytes.Buffer
	b := bundle.Bundle{
		Data:     map[string]any{},
		Manifest: bundle.Manifest{Revision: revision},
		Modules:  []bundle.ModuleFile{{URL: "/p.rego", Path: "/p.rego", Raw: []byte(module)}},
	}
	if err := bundle.NewWriter(&buf).Write(b); err != nil {
		t.Fatal(err)
	}
	reloadPut(t, path, buf.String())
}

// reloadServer is a minimal OPA bundle service.
type reloadServer struct {
	mu   sync.Mutex
	body []byte // nil: 503
}

func (s *reloadServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	body := s.body
	s.mu.Unlock()
	if body == nil || r.Header.Get("Authorization") != "Bearer reload-token" {
		http.Error(w, "unavailable", http.StatusServiceUnavailable)
		return
	}
	etag := fmt.Sprintf(`"%x"`, sha256.Sum256(body))
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("ETag", etag)
	_, _ = w.Write(body)
}

func (s *reloadServer) publish(t *testing.T, revision, module string) {
	path := filepath.Join(t.TempDir(), "b.tar.gz")
	reloadBundle(t, path, revision, module)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.body = b
	s.mu.Unlock()
}

// TestReloadRemoteBundle: with a bundle service configured the process
// starts without a policy, answers -32003 until the bundle arrives, then
// follows its updates and keeps the last one through an outage.
func TestReloadRemoteBundle(t *testing.T) {
	t.Parallel()
	srv := &reloadServer{}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	cfg := writeFile(t, t.TempDir(), "ahp-opa.yaml", fmt.Sprintf(`services:
  acme:
    url: %s
    credentials:
      bearer:
        token: reload-token
bundles:
  authz:
    service: acme
    resource: bundles/authz.tar.gz
    polling:
      min_delay_seconds: 0
      max_delay_seconds: 1
`, hs.URL))
	p := startServe(t, "--config", cfg)
	wantError(t, reloadAsk(t, p, "evt-early", "Zap"), -32003)

	srv.publish(t, "r1", reloadRule("r", "Zap", "remote v1"))
	r := reloadAwait(t, p, "Zap", "remote v1")
	if rev := reloadRevision(r); rev != "r1" {
		t.Errorf("revision %q, want the manifest's r1", rev)
	}
	srv.publish(t, "r2", reloadRule("r", "Zap", "remote v2"))
	reloadAwait(t, p, "Zap", "remote v2")

	srv.mu.Lock()
	srv.body = nil // outage
	srv.mu.Unlock()
	deadline := time.Now().Add(reloadSettle)
	for !strings.Contains(p.stderr.String(), "Service Unavailable") {
		if time.Now().After(deadline) {
			t.Fatalf("no download failure logged:\n%s", p.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := reloadReason(reloadAsk(t, p, "evt-outage", "Zap")); got != "remote v2" {
		t.Errorf("during the outage: %q, want remote v2", got)
	}
	if strings.Contains(p.stderr.String(), "reload-token") {
		t.Error("the bearer token appears in the log")
	}
	p.expectCleanExit(t)
}

// TestReloadServeConfig (issue 22, a stale policy): `serve` follows its
// --config file. A rule removed from library.disabled_rules denies within
// the reload latency; a broken edit keeps the last good configuration and
// is logged.
func TestReloadServeConfig(t *testing.T) {
	t.Parallel()
	const rule = "dev.ahp-opa.secrets.ssh-private-key"
	cfg := filepath.Join(t.TempDir(), "ahp-opa.yaml")
	reloadPut(t, cfg, "library:\n  disabled_rules: ["+rule+"]\n")
	p := startServe(t, "--config", cfg)
	code := func(i int) string {
		t.Helper()
		id := fmt.Sprintf("evt-key-%d", i)
		r := p.roundTrip(t, encode(interceptMsg(id, testkit.ShellEvent(id, "cat ~/.ssh/id_rsa"), "deny")))
		wantID(t, r, id)
		if r.isError {
			t.Fatalf("error %d", r.code)
		}
		if d := r.denyEffect(); d != nil {
			c, _ := d["code"].(string)
			return c
		}
		return ""
	}
	if got := code(0); got != "" {
		t.Fatalf("with %s disabled: deny %s", rule, got)
	}
	reloadPut(t, cfg, "library:\n  disabled_rules: []\n")
	deadline := time.Now().Add(reloadSettle)
	for i := 1; code(i) != rule; i++ {
		if time.Now().After(deadline) {
			t.Fatalf("the edit never took effect\nstderr:\n%s", p.stderr.String())
		}
		time.Sleep(20 * time.Millisecond) // polling the answers
	}
	reloadPut(t, cfg, "library:\n  disabled_rules: [no.such.rule]\n")
	for !strings.Contains(p.stderr.String(), "configuration reload failed") {
		if time.Now().After(deadline) {
			t.Fatalf("the broken edit was not reported\nstderr:\n%s", p.stderr.String())
		}
		time.Sleep(20 * time.Millisecond) // polling the log
	}
	if got := code(-1); got != rule {
		t.Errorf("after a broken edit: %q, want the last good configuration's deny %s", got, rule)
	}
	p.expectCleanExit(t)
}
