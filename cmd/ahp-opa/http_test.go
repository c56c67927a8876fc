package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ahp-opa/ahp-opa/internal/config"

	"github.com/ahp-opa/ahp-opa/internal/testkit"

	"github.com/spf13/pflag"

	"github.com/ahp-opa/ahp-opa/bundles"
	"github.com/ahp-opa/ahp-opa/engine"
	"github.com/ahp-opa/ahp-opa/internal/metrics"
	"github.com/ahp-opa/ahp-opa/transport"
)

const secretToken = "tok-0123456789abcdef-0123456789abcdef"

func testLogger() (*slog.Logger, *testkit.Buffer) {
	buf := &testkit.Buffer{}
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})), buf
}

func TestIsLoopback(t *testing.T) {
	tests := []struct {
		addr     string
		loopback bool
		err      bool
	}{
		{"127.0.0.1:8080", true, false},
		{"127.9.9.9:0", true, false},
		{"[::1]:8080", true, false},
		{"localhost:8080", true, false},
		{"LOCALHOST:8080", true, false},
		{":8080", false, false},
		{"0.0.0.0:8080", false, false},
		{"[::]:8080", false, false},
		{"10.1.2.3:8080", false, false},
		{"policy.example.com:443", false, false},
		{"127.0.0.1", false, true},
		{"", false, true},
	}
	for _, tt := range tests {
		got, err := isLoopback(tt.addr)
		if (err != nil) != tt.err || got != tt.loopback {
			t.Errorf("isLoopback(%q) = %v, %v; want %v, error %v", tt.addr, got, err, tt.loopback, tt.err)
		}
	}
}

func TestLoadToken(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := file("good", secretToken+"\n", 0o600)
	tests := []struct {
		name    string
		file    string
		env     map[string]string
		envName string
		want    string
		err     string // substring of the error; "" for none
		warn    string // substring of the log
	}{
		{name: "none", want: ""},
		{name: "from the default variable", env: map[string]string{config.DefaultTokenEnv: secretToken}, want: secretToken},
		{name: "from a named variable", envName: "MY_TOKEN", env: map[string]string{"MY_TOKEN": " " + secretToken + "\n"}, want: secretToken},
		{name: "variable disabled", envName: "-", env: map[string]string{config.DefaultTokenEnv: secretToken}, want: ""},
		{name: "from a file, newline trimmed", file: good, want: secretToken},
		{name: "file and variable both set", file: good, env: map[string]string{config.DefaultTokenEnv: secretToken}, err: "both"},
		{name: "missing file", file: filepath.Join(dir, "none"), err: "token file"},
		{name: "empty file", file: file("empty", "\n\n", 0o600), err: "empty"},
		{name: "space inside", file: file("space", "abc def-0123456789abcdef", 0o600), err: "whitespace"},
		{name: "non-ASCII", env: map[string]string{config.DefaultTokenEnv: "tøken-0123456789abcdef"}, err: "non-ASCII"},
		{name: "readable by others", file: file("open", secretToken, 0o644), want: secretToken, warn: "chmod 600"},
		{name: "short", env: map[string]string{config.DefaultTokenEnv: "short"}, want: "short", warn: "short"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config.DefaultHTTP()
			cfg.TokenFile = tt.file
			switch tt.envName {
			case "":
			case "-":
				cfg.TokenEnv = ""
			default:
				cfg.TokenEnv = tt.envName
			}
			log, logs := testLogger()
			got, err := loadToken(cfg, func(k string) string { return tt.env[k] }, log)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error = %v, want one about %q", err, tt.err)
				}
				if strings.Contains(err.Error(), "0123456789abcdef") {
					t.Errorf("the error quotes the token: %v", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("token = %q, %v; want %q", got, err, tt.want)
			}
			if tt.warn != "" && !strings.Contains(logs.String(), tt.warn) {
				t.Errorf("log lacks %q:\n%s", tt.warn, logs)
			}
			if strings.Contains(logs.String(), "0123456789abcdef") {
				t.Errorf("the token reached the log:\n%s", logs)
			}
		})
	}
}

func TestCheckExposure(t *testing.T) {
	tests := []struct {
		name     string
		addr     string
		token    bool
		allow    bool
		tls      bool
		err      string
		warnings []string
	}{
		{name: "loopback without token", addr: "127.0.0.1:0"},
		{name: "ipv6 loopback without token", addr: "[::1]:0"},
		{name: "all interfaces without token", addr: ":8080", err: "--allow-insecure-no-auth"},
		{name: "remote without token", addr: "10.0.0.1:8080", err: "not a loopback address"},
		{name: "host name without token", addr: "policy.example.com:8080", err: "bearer token"},
		{name: "explicitly allowed", addr: "0.0.0.0:8080", allow: true, warnings: []string{"WITHOUT AUTHENTICATION", "plain HTTP"}},
		{name: "token, plain HTTP", addr: "0.0.0.0:8080", token: true, warnings: []string{"plain HTTP"}},
		{name: "token and TLS", addr: "0.0.0.0:8443", token: true, tls: true},
		{name: "bad address", addr: "nonsense", err: "http address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config.DefaultHTTP()
			cfg.HTTP, cfg.AllowInsecureNoAuth = tt.addr, tt.allow
			if tt.tls {
				cfg.TLSCert, cfg.TLSKey = "c", "k"
			}
			log, logs := testLogger()
			err := checkExposure(cfg, tt.token, log)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error = %v, want one about %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.warnings {
				if !strings.Contains(logs.String(), w) {
					t.Errorf("log lacks %q:\n%s", w, logs)
				}
			}
			if len(tt.warnings) == 0 && logs.String() != "" {
				t.Errorf("unexpected log:\n%s", logs)
			}
		})
	}
}

// TestHTTPConfigKeys: the HTTP settings come from the file, the
// environment and the flags like every other key.
func TestHTTPConfigKeys(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "ahp-opa.yaml")
	yaml := `http: 127.0.0.1:9000
token_file: /run/secrets/ahp-token
token_env: ""
tls_cert: /etc/tls/tls.crt
tls_key: /etc/tls/tls.key
max_body_bytes: 2097152
http_concurrency: 6
http_queue_wait: 50ms
http_read_timeout: 3s
http_write_timeout: 4s
http_idle_timeout: 1m
shutdown_timeout: 20s
allow_insecure_no_auth: false
`
	if err := os.WriteFile(cfgFile, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	addEngineFlags(fs)
	addHTTPFlags(fs)
	if err := fs.Parse([]string{"--http-write-timeout=7s"}); err != nil {
		t.Fatal(err)
	}
	environ := func() []string {
		// AHP_OPA_TOKEN is the token itself, not an unknown setting.
		return []string{"AHP_OPA_HTTP_CONCURRENCY=3", "AHP_OPA_TOKEN=" + secretToken}
	}
	cfg, err := config.Load(fs, cfgFile, environ)
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.HTTPConfig
	want := config.HTTPConfig{
		HTTP: "127.0.0.1:9000", TokenFile: "/run/secrets/ahp-token", TokenEnv: "",
		TLSCert: "/etc/tls/tls.crt", TLSKey: "/etc/tls/tls.key", MaxBodyBytes: 2 << 20,
		HTTPConcurrency: 3, HTTPQueueWait: 50e6, HTTPReadTimeout: 3e9, HTTPWriteTimeout: 7e9,
		HTTPIdleTimeout: 60e9, ShutdownTimeout: 20e9,
	}
	if got != want {
		t.Errorf("config\n got %+v\nwant %+v", got, want)
	}

	for _, bad := range []string{
		"tls_cert: /x\n",
		"max_body_bytes: 10\n",
		"http_concurency: 2\n",
		"shutdown_timeout: 0s\n",
		"http_concurrency: -1\n",
	} {
		if err := os.WriteFile(cfgFile, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
		addEngineFlags(fs)
		addHTTPFlags(fs)
		if _, err := config.Load(fs, cfgFile, func() []string { return nil }); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}

// servedEngine wires an engine to a listening binding the way serve does.
func servedEngine(t *testing.T, eng *engine.Engine, token string) (url string, m *metrics.Metrics) {
	t.Helper()
	log, _ := testLogger()
	cfg := config.DefaultHTTP()
	cfg.HTTP = "127.0.0.1:0"
	env := map[string]string{config.DefaultTokenEnv: token}
	b, err := prepareHTTP(cfg, func(k string) string { return env[k] }, log)
	if err != nil {
		t.Fatal(err)
	}
	m = metrics.New()
	m.TrackPolicy(func() (string, time.Time, bool) {
		if s := eng.Snapshot(); s != nil {
			return s.Revision, s.Built, true
		}
		return "", time.Time{}, false
	})
	srv := &transport.Server{Interceptor: metrics.Interceptor(eng, m), Observer: metrics.Observer(nil, m), Logger: log}
	h := b.binding(srv, func() bool { return eng.Snapshot() != nil }, m)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serveBindings(ctx, log, nil, b, h) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serveBindings: %v", err)
		}
	})
	return "http://" + b.ln.Addr().String(), m
}

func call(t *testing.T, method, url, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func interceptBody(id, command string) string {
	b, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": id, "method": "hooks/intercept",
		"params": map[string]any{
			"protocolVersion": "draft",
			"capabilities":    map[string]any{"effects": []string{"deny"}},
			"event": map[string]any{
				"id": id, "source": "urn:test", "type": "tool.before", "time": "2026-01-02T03:04:05Z",
				"call": map[string]any{"id": "c1"}, "path": "native",
				"tool": map[string]any{"name": "Bash", "origin": "native", "input": map[string]any{"command": command}},
			},
		},
	})
	return string(b)
}

// TestReadinessFollowsPolicy: before a policy is active /readyz is 503 and
// requests get -32003; once one is loaded both recover, and the metrics
// show it.
func TestReadinessFollowsPolicy(t *testing.T) {
	eng := engine.New(engine.Options{})
	url, _ := servedEngine(t, eng, secretToken)

	if s, _ := call(t, "GET", url+"/readyz", "", ""); s != 503 {
		t.Errorf("readyz without a policy = %d, want 503", s)
	}
	if s, _ := call(t, "GET", url+"/healthz", "", ""); s != 200 {
		t.Errorf("healthz without a policy = %d, want 200", s)
	}
	s, body := call(t, "POST", url+"/ahp", secretToken, interceptBody("e1", "ls"))
	if s != 200 || !strings.Contains(body, `"code":-32003`) || !strings.Contains(body, `"id":"e1"`) {
		t.Errorf("intercept without a policy = %d %s, want 200 with -32003", s, body)
	}
	_, met := call(t, "GET", url+"/metrics", secretToken, "")
	for _, l := range []string{"ahp_opa_policy_active 0", `ahp_opa_decisions_total{outcome="unavailable"} 1`} {
		if !strings.Contains(met, "\n"+l+"\n") {
			t.Errorf("metrics lack %q", l)
		}
	}

	p, err := bundles.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Load(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if s, _ := call(t, "GET", url+"/readyz", "", ""); s != 200 {
		t.Errorf("readyz with a policy = %d, want 200", s)
	}
	s, body = call(t, "POST", url+"/ahp", secretToken, interceptBody("e2", "rm -rf /"))
	if s != 200 || !strings.Contains(body, `"type":"deny"`) {
		t.Errorf("intercept with a policy = %d %s, want a deny", s, body)
	}
	s, body = call(t, "POST", url+"/ahp", secretToken, interceptBody("e3", "ls"))
	if s != 200 || !strings.Contains(body, `"effects":[]`) {
		t.Errorf("intercept with a policy = %d %s, want no objection", s, body)
	}
	_, met = call(t, "GET", url+"/metrics", secretToken, "")
	for _, l := range []string{
		"ahp_opa_policy_active 1",
		`ahp_opa_policy_revision_info{revision="` + p.Revision + `"} 1`,
		`ahp_opa_decisions_total{outcome="deny"} 1`,
		`ahp_opa_decisions_total{outcome="no_objection"} 1`,
		`ahp_opa_http_responses_total{status="200"} 3`,
		`ahp_opa_errors_total{code="-32003"} 1`,
		"ahp_opa_decision_duration_seconds_count 3",
	} {
		if !strings.Contains(met, "\n"+l+"\n") {
			t.Errorf("metrics lack %q", l)
		}
	}
	if s, _ := call(t, "GET", url+"/metrics", "", ""); s != 401 {
		t.Errorf("metrics without the token = %d, want 401", s)
	}
}

// TestPrepareHTTPFailsEarly: configuration mistakes are reported before
// anything listens.
func TestPrepareHTTPFailsEarly(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.pem")
	if err := os.WriteFile(junk, []byte("junk"), 0o600); err != nil {
		t.Fatal(err)
	}
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	log, _ := testLogger()
	tests := []struct {
		name string
		cfg  func(*config.HTTPConfig)
		err  string
	}{
		{"no binding", func(c *config.HTTPConfig) { c.HTTP = "" }, ""},
		{"open address without token", func(c *config.HTTPConfig) { c.HTTP = "0.0.0.0:0" }, "--allow-insecure-no-auth"},
		{"bad certificate", func(c *config.HTTPConfig) { c.TLSCert, c.TLSKey = junk, junk }, "tls"},
		{"port in use", func(c *config.HTTPConfig) { c.HTTP = taken.Addr().String() }, "address already in use"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config.DefaultHTTP()
			cfg.HTTP = "127.0.0.1:0"
			tt.cfg(&cfg)
			b, err := prepareHTTP(cfg, func(string) string { return "" }, log)
			if tt.err == "" {
				if err != nil || b != nil {
					t.Fatalf("got %v, %v; want nothing", b, err)
				}
				return
			}
			if err == nil {
				b.Close()
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tt.err) {
				t.Errorf("error = %v, want one about %q", err, tt.err)
			}
		})
	}
}
