package bundles_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ahp-opa/ahp-opa/bundles"
	"github.com/ahp-opa/ahp-opa/engine"
	"github.com/ahp-opa/ahp-opa/internal/testkit"
	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// bundleServer is an OPA bundle service: it serves one bundle with an
// ETag, answers 304 to a matching If-None-Match, and can be taken down.
type bundleServer struct {
	*httptest.Server
	mu    sync.Mutex
	body  []byte
	etag  string
	down  bool
	auth  string // required Authorization header, "" for none
	hits  atomic.Int64
	paths sync.Map
}

func newBundleServer(t testing.TB) *bundleServer {
	bs := &bundleServer{}
	bs.Server = httptest.NewServer(http.HandlerFunc(bs.serve))
	t.Cleanup(bs.Close)
	return bs
}

func (bs *bundleServer) serve(w http.ResponseWriter, r *http.Request) {
	bs.hits.Add(1)
	bs.paths.Store(r.URL.Path, true)
	bs.mu.Lock()
	body, etag, down, auth := bs.body, bs.etag, bs.down, bs.auth
	bs.mu.Unlock()
	switch {
	case auth != "" && r.Header.Get("Authorization") != auth:
		http.Error(w, "who are you", http.StatusUnauthorized)
	case down:
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
	case body == nil:
		http.NotFound(w, r)
	case r.Header.Get("If-None-Match") != "" && strings.Contains(r.Header.Get("If-None-Match"), etag):
		w.WriteHeader(http.StatusNotModified)
	default:
		w.Header().Set("ETag", etag)
		w.Header().Set("Content-Type", "application/gzip")
		_, _ = w.Write(body)
	}
}

// publish makes spec the bundle served from now on.
func (bs *bundleServer) publish(t testing.TB, spec bundleSpec) {
	body := spec.build(t)
	bs.mu.Lock()
	defer bs.mu.Unlock()
	bs.body, bs.down = body, false
	bs.etag = fmt.Sprintf(`"%x"`, len(body)*31+int(time.Now().UnixNano()%1000))
}

func (bs *bundleServer) setDown(down bool) {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	bs.down = down
}

// remoteConfig points bundle "authz" at the server, polling quickly.
func remoteConfig(t testing.TB, bs *bundleServer, extra string) bundles.OPAConfig {
	t.Helper()
	services := fmt.Sprintf(`{"acme": {"url": %q, "credentials": {"bearer": {"token": "s3cr3t-token"}}}}`, bs.URL)
	bundlesJSON := `{"authz": {"service": "acme", "resource": "bundles/authz.tar.gz",
		"polling": {"min_delay_seconds": 0, "max_delay_seconds": 1}` + extra + `}}`
	bs.mu.Lock()
	bs.auth = "Bearer s3cr3t-token"
	bs.mu.Unlock()
	return bundles.OPAConfig{Services: json.RawMessage(services), Bundles: json.RawMessage(bundlesJSON)}
}

// TestRemoteBundle follows a bundle from an OPA bundle service through its
// first download, an update, an outage and a broken release.
func TestRemoteBundle(t *testing.T) {
	bs := newBundleServer(t)
	bs.setDown(true)
	s := newStand(t, bundles.Options{OPA: remoteConfig(t, bs, "")})

	// Nothing downloaded yet: not ready, requests are refused.
	if _, err := decide(t, s.eng, testkit.ToolEvent(testkit.NativeTool("R", nil))); !isCode(err, ahp.CodeBackendUnavailable) {
		t.Fatalf("Decide before the first bundle: %v, want -32003", err)
	}
	ev := s.waitEvent(bundles.Failed, 0)
	if ev.Source != "bundle authz" || !errors.Is(ev.Err, bundles.ErrDownload) || strings.Contains(ev.Err.Error(), "s3cr3t") {
		t.Errorf("download failure event %+v", ev)
	}
	if st := s.rl.Status(); st.Ready() || !equalStrings(st.Waiting, []string{"authz"}) {
		t.Errorf("status before the first bundle: %+v", st)
	}

	bs.publish(t, bundleSpec{revision: "r1", files: map[string]string{"r.rego": rule("r", "R", "r1")}})
	ctx, cancel := context.WithTimeout(context.Background(), settle)
	defer cancel()
	if err := s.rl.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	s.waitReasons("R", "r1")
	if _, ok := bs.paths.Load("/bundles/authz.tar.gz"); !ok {
		t.Error("the resource path was not requested")
	}

	bs.publish(t, bundleSpec{revision: "r2", files: map[string]string{"r.rego": rule("r", "R", "r2")}})
	s.waitReasons("R", "r2")
	if st := s.rl.Status(); st.Revision != "r2" || len(st.Waiting) != 0 {
		t.Errorf("status after the update: %+v", st)
	}

	// Outage: failures are reported, the last bundle keeps deciding.
	failed := s.count(bundles.Failed)
	bs.setDown(true)
	s.waitEvent(bundles.Failed, failed)
	if got := s.reasons("R"); !equalStrings(got, []string{"r2"}) {
		t.Errorf("during the outage: %q, want r2", got)
	}

	// A release that does not compile is refused.
	bs.publish(t, bundleSpec{revision: "r3-broken", files: map[string]string{"r.rego": "package ahp.tool.before.r\n\ndeny := 1\n"}})
	ev = s.waitMatch("refusal of r3-broken", func(ev bundles.Event) bool { return ev.Revision == "r3-broken" })
	if ev.Outcome != bundles.Failed || !strings.Contains(ev.Err.Error(), "authz/r.rego:3") {
		t.Errorf("broken bundle: %s %v, want a failure naming authz/r.rego:3", ev.Outcome, ev.Err)
	}
	if got := s.reasons("R"); !equalStrings(got, []string{"r2"}) {
		t.Errorf("after a broken release: %q, want r2", got)
	}

	bs.publish(t, bundleSpec{revision: "r4", files: map[string]string{"r.rego": rule("r", "R", "r4")}})
	s.waitReasons("R", "r4")
}

// TestRemoteBundleSigned: a bundle service that serves an unsigned or
// tampered bundle is refused when the bundle's signing block is set.
func TestRemoteBundleSigned(t *testing.T) {
	ci := newSigner(t, "ci")
	bs := newBundleServer(t)
	cfg := remoteConfig(t, bs, `, "signing": {"keyid": "ci"}`)
	cfg.Keys = keysJSON(t, ci)
	bs.publish(t, bundleSpec{revision: "unsigned", files: map[string]string{"r.rego": rule("r", "R", "unsigned")}})
	s := newStand(t, bundles.Options{OPA: cfg})
	ev := s.waitEvent(bundles.Failed, 0)
	if !strings.Contains(ev.Err.Error(), "signature") {
		t.Errorf("unsigned bundle: %v", ev.Err)
	}
	bs.publish(t, bundleSpec{revision: "signed", files: map[string]string{"r.rego": rule("r", "R", "signed")}, signer: ci})
	s.waitReasons("R", "signed")
	failed := s.count(bundles.Failed)
	bs.publish(t, bundleSpec{revision: "tampered", files: map[string]string{"r.rego": rule("r", "R", "tampered")}, signer: ci, tamper: true})
	s.waitEvent(bundles.Failed, failed)
	if got := s.reasons("R"); !equalStrings(got, []string{"signed"}) {
		t.Errorf("after a tampered bundle: %q", got)
	}
}

// TestRemoteWithLocal: local files and a remote bundle decide together; the
// first activation waits for the bundle, and each side reloads alone.
func TestRemoteWithLocal(t *testing.T) {
	bs := newBundleServer(t)
	dir := t.TempDir()
	put(t, dir+"/l.rego", rule("l", "X", "local1"))
	s := newStand(t, bundles.Options{Paths: []string{dir}, Builtin: true, Watch: true, RescanInterval: -1, OPA: remoteConfig(t, bs, "")})
	if s.rl.Status().Ready() {
		t.Fatal("ready before the bundle was downloaded")
	}
	bs.publish(t, bundleSpec{revision: "r1", roots: []string{"ahp/tool/before/r"}, files: map[string]string{"r.rego": rule("r", "X", "remote1")}})
	s.waitReasons("X", "local1", "remote1")
	if rev := s.rl.Status().Revision; !strings.HasPrefix(rev, bundles.BuiltinRevisionPrefix) || !strings.HasSuffix(rev, "+r1") {
		t.Errorf("revision %q, want builtin+local+r1", rev)
	}
	put(t, dir+"/l.rego", rule("l", "X", "local2"))
	s.waitReasons("X", "local2", "remote1")
	bs.publish(t, bundleSpec{revision: "r2", roots: []string{"ahp/tool/before/r"}, files: map[string]string{"r.rego": rule("r", "X", "remote2")}})
	s.waitReasons("X", "local2", "remote2")
	// The built-in library still decides.
	d, err := decide(t, s.eng, map[string]any{
		"id": "e", "source": "urn:x", "type": "tool.before", "time": "2026-01-02T03:04:05Z",
		"tool": map[string]any{"name": "Bash", "kind": "shell", "input": map[string]any{"command": "git push --force origin main"}},
	})
	if err != nil || !d.Denied() {
		t.Errorf("built-in library: %+v, %v", d, err)
	}
}

// TestRemoteBundlesNeedADownloader: remote bundles the reloader was given
// no downloader for are refused, not ignored.
func TestRemoteBundlesNeedADownloader(t *testing.T) {
	_, err := bundles.NewReloader(engine.New(engine.Options{}), bundles.Options{Builtin: true,
		OPA: bundles.OPAConfig{Services: json.RawMessage(`{"a": {"url": "http://127.0.0.1:1"}}`), Bundles: json.RawMessage(`{"b": {}}`)}})
	if err == nil || !strings.Contains(err.Error(), "nothing downloads them") {
		t.Errorf("error %v", err)
	}
}

// TestRemoteConfigErrors: configuration mistakes are errors at start.
func TestRemoteConfigErrors(t *testing.T) {
	cases := []struct {
		name string
		cfg  bundles.OPAConfig
		want string
	}{
		{"unknown service", bundles.OPAConfig{
			Services: json.RawMessage(`{"a": {"url": "http://127.0.0.1:1"}}`),
			Bundles:  json.RawMessage(`{"b": {"service": "nope"}}`)}, "service name \"nope\" not found"},
		{"no services", bundles.OPAConfig{Bundles: json.RawMessage(`{"b": {"resource": "x"}}`)}, "service"},
		{"unknown signing key", bundles.OPAConfig{
			Services: json.RawMessage(`{"a": {"url": "http://127.0.0.1:1"}}`),
			Bundles:  json.RawMessage(`{"b": {"signing": {"keyid": "missing"}}}`)}, "key id missing not found"},
		{"file resource", bundles.OPAConfig{
			Services: json.RawMessage(`{"a": {"url": "http://127.0.0.1:1"}}`),
			Bundles:  json.RawMessage(`{"b": {"resource": "file:///tmp/b.tar.gz"}}`)}, "--policy"},
		{"local signing without keys", bundles.OPAConfig{Signing: json.RawMessage(`{"keyid": "ci"}`)}, "signing"},
		{"services not an object", bundles.OPAConfig{Services: json.RawMessage(`"http://x"`), Bundles: json.RawMessage(`{"b": {}}`)}, "services"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := newReloader(engine.New(engine.Options{}), bundles.Options{OPA: c.cfg, Builtin: true})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
}
