package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/ahp-opa/ahp-opa/internal/config"
	"github.com/ahp-opa/ahp-opa/internal/testkit"
)

// schemaBaseURL is the $id prefix of the official schemas, which live in the
// shared conformance folder and are read at run time.
const schemaBaseURL = "https://agenthooksprotocol.org/schemas/draft/"

// registrationSchema compiles registration.schema.json with every file of
// its folder registered under its $id, so that references resolve locally.
// It skips the test when the shared folder is absent, or fails it when
// AHP_REQUIRE_SHARED=1.
func registrationSchema(t *testing.T) (*jsonschema.Schema, string) {
	t.Helper()
	dir := filepath.Join(testkit.AHP(t), "conformance", "schema", "draft")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat() // "format": "uri" on urls is checked too
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".schema.json") {
			continue
		}
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		id := schemaBaseURL + e.Name()
		if m, ok := doc.(map[string]any); ok {
			if s, ok := m["$id"].(string); ok && s != "" {
				id = s
			}
		}
		if err := c.AddResource(id, doc); err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
	}
	sch, err := c.Compile(schemaBaseURL + "registration.schema.json")
	if err != nil {
		t.Fatalf("compiling the registration schema: %v", err)
	}
	return sch, filepath.Join(filepath.Dir(filepath.Dir(dir)), "fixtures", "draft", "registration")
}

func validate(t *testing.T, sch *jsonschema.Schema, text []byte) error {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, text)
	}
	return sch.Validate(v)
}

// runRegistration runs the command with args and returns stdout and
// stderr.
func runRegistration(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := registrationCommand()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err = cmd.Execute()
	return out.String(), errOut.String(), err
}

// TestSchemaValidatorWorks guards the test below against a validator that
// accepts anything: the official fixtures must come out right.
func TestSchemaValidatorWorks(t *testing.T) {
	sch, fixtures := registrationSchema(t)
	for _, tt := range []struct {
		file  string
		valid bool
	}{
		{"portable.valid.json", true},
		{"literal-token.invalid.json", false},
		{"observe-policy-fields.invalid.json", false},
		{"empty-hooks.invalid.json", false},
	} {
		data, err := os.ReadFile(filepath.Join(fixtures, tt.file))
		if err != nil {
			t.Fatal(err)
		}
		if err := validate(t, sch, data); (err == nil) != tt.valid {
			t.Errorf("%s: valid = %v, want %v (%v)", tt.file, err == nil, tt.valid, err)
		}
	}
}

// TestRegistrationValidates: every shape the command prints passes the
// official schema (B-REG-1..5).
func TestRegistrationValidates(t *testing.T) {
	sch, _ := registrationSchema(t)
	tests := []struct {
		name      string
		args      []string
		transport map[string]any // members the transport must have
		stdioArgs []any          // the stdio args; nil: serve --stdio first
		auth      string         // tokenEnv, "" for no authentication
		timeout   float64
		policy    string
		observe   []any // nil: no observe subscription
		warning   string
	}{
		{
			name:      "stdio persistent",
			args:      []string{"--failure-policy", "fail-closed", "--command", "/usr/local/bin/ahp-opa"},
			transport: map[string]any{"type": "stdio", "lifecycle": "persistent", "command": "/usr/local/bin/ahp-opa"},
			timeout:   defaultTimeoutMs, policy: "fail-closed",
			observe: []any{"tool.after", "session.start", "session.end"},
		},
		{
			name:      "stdio per_event without the client, with serve flags",
			args:      []string{"--lifecycle", "per_event", "--no-client", "--failure-policy", "fail-open", "--command", "/usr/local/bin/ahp-opa", "--", "--config", "/etc/ahp-opa.yaml", "--log-level", "warn"},
			transport: map[string]any{"type": "stdio", "lifecycle": "per_event", "command": "/usr/local/bin/ahp-opa"},
			stdioArgs: []any{"serve", "--stdio", "--config", "/etc/ahp-opa.yaml", "--log-level", "warn"},
			timeout:   defaultPerEventTimeoutMs, policy: "fail-open",
		},
		{
			name:      "stdio per_event without the client, observing on request",
			args:      []string{"--lifecycle", "per_event", "--no-client", "--failure-policy", "fail-closed", "--observe", "session.*"},
			transport: map[string]any{"type": "stdio", "lifecycle": "per_event"},
			timeout:   defaultPerEventTimeoutMs, policy: "fail-closed", observe: []any{"session.*"},
		},
		{
			name: "per_event goes through the daemon client by default",
			args: []string{"--lifecycle", "per_event", "--failure-policy", "fail-closed", "--command", "/usr/local/bin/ahp-opa-hook",
				"--", "--policy", "/p,/q", "--with-builtin", "--config=/etc/ahp-opa.yaml", "--idle-timeout", "1h"},
			transport: map[string]any{"type": "stdio", "lifecycle": "per_event", "command": "/usr/local/bin/ahp-opa-hook"},
			stdioArgs: []any{"--policy", "/p", "--policy", "/q", "--with-builtin", "--config", "/etc/ahp-opa.yaml", "--idle-timeout", "1h", "ahp"},
			timeout:   defaultPerEventTimeoutMs, policy: "fail-closed",
			observe: []any{"tool.after", "session.start", "session.end"},
		},
		{
			name: "per_event with --client, as older command lines say",
			args: []string{"--lifecycle", "per_event", "--client", "--failure-policy", "fail-closed", "--command", "/usr/local/bin/ahp-opa-hook",
				"--", "--config", "/etc/ahp-opa.yaml"},
			transport: map[string]any{"type": "stdio", "lifecycle": "per_event", "command": "/usr/local/bin/ahp-opa-hook"},
			stdioArgs: []any{"--config", "/etc/ahp-opa.yaml", "ahp"},
			timeout:   defaultPerEventTimeoutMs, policy: "fail-closed",
			observe: []any{"tool.after", "session.start", "session.end"},
		},
		{
			name:      "http with tokenEnv",
			args:      []string{"--transport", "http", "--url", "https://policy.example.com:8443/ahp", "--failure-policy", "fail-closed"},
			transport: map[string]any{"type": "http", "url": "https://policy.example.com:8443/ahp"},
			auth:      config.DefaultTokenEnv, timeout: defaultTimeoutMs, policy: "fail-closed",
			observe: []any{"tool.after", "session.start", "session.end"},
		},
		{
			name: "http, own variable and deadline, no observation",
			args: []string{"--transport=http", "--url=http://127.0.0.1:8080/ahp", "--token-env=POLICY_TOKEN",
				"--failure-policy=fail-open", "--timeout-ms=750", "--observe="},
			transport: map[string]any{"type": "http"},
			auth:      "POLICY_TOKEN", timeout: 750, policy: "fail-open",
		},
		{
			name:      "http on loopback without a token",
			args:      []string{"--transport", "http", "--url", "http://localhost:8080/ahp", "--token-env", "", "--failure-policy", "fail-closed"},
			transport: map[string]any{"type": "http"},
			timeout:   defaultTimeoutMs, policy: "fail-closed",
			observe: []any{"tool.after", "session.start", "session.end"},
			warning: "no authentication",
		},
		{
			name:      "plain http to a remote host warns",
			args:      []string{"--transport", "http", "--url", "http://10.0.0.8:8080/ahp", "--failure-policy", "fail-closed", "--observe", ""},
			transport: map[string]any{"type": "http"},
			auth:      config.DefaultTokenEnv, timeout: defaultTimeoutMs, policy: "fail-closed",
			warning: "B-HTTP-6",
		},
		{
			name:      "short deadline warns",
			args:      []string{"--failure-policy", "fail-closed", "--timeout-ms", "100", "--observe", ""},
			transport: map[string]any{"type": "stdio"},
			timeout:   100, policy: "fail-closed",
			warning: "below",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, stderr, err := runRegistration(t, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			if err := validate(t, sch, []byte(out)); err != nil {
				t.Fatalf("output fails registration.schema.json: %v\n%s", err, out)
			}
			if (tt.warning == "") != (stderr == "") || !strings.Contains(stderr, tt.warning) {
				t.Errorf("stderr = %q, want a warning about %q", stderr, tt.warning)
			}
			var doc struct {
				ProtocolVersion string
				Hooks           []struct {
					ID             string
					Transport      map[string]any
					Authentication map[string]any
					Subscriptions  []map[string]any
				}
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatal(err)
			}
			if doc.ProtocolVersion != "draft" || len(doc.Hooks) != 1 || doc.Hooks[0].ID != "dev.ahp-opa" {
				t.Fatalf("document header: %s", out)
			}
			h := doc.Hooks[0]
			for k, v := range tt.transport {
				if h.Transport[k] != v {
					t.Errorf("transport.%s = %v, want %v", k, h.Transport[k], v)
				}
			}
			if h.Transport["type"] == "stdio" {
				args, _ := h.Transport["args"].([]any)
				if tt.stdioArgs != nil {
					if !reflect.DeepEqual(args, tt.stdioArgs) {
						t.Errorf("stdio args = %v, want %v", args, tt.stdioArgs)
					}
				} else if len(args) < 2 || args[0] != "serve" || args[1] != "--stdio" {
					t.Errorf("stdio args = %v, want serve --stdio first", args)
				}
			}
			if got, _ := h.Authentication["tokenEnv"].(string); got != tt.auth {
				t.Errorf("authentication = %v, want tokenEnv %q", h.Authentication, tt.auth)
			}
			if len(h.Authentication) > 0 && len(h.Authentication) != 2 {
				t.Errorf("authentication carries more than type and tokenEnv (B-REG-3): %v", h.Authentication)
			}
			in := h.Subscriptions[0]
			if in["mode"] != "intercept" || in["timeoutMs"] != tt.timeout || in["failurePolicy"] != tt.policy || in["content"] == nil {
				t.Errorf("intercept subscription = %v", in)
			}
			if tt.observe == nil {
				if len(h.Subscriptions) != 1 {
					t.Errorf("want no observe subscription, got %v", h.Subscriptions[1:])
				}
				return
			}
			if len(h.Subscriptions) != 2 {
				t.Fatalf("want an observe subscription, got %v", h.Subscriptions)
			}
			ob := h.Subscriptions[1]
			if fmt.Sprint(ob["events"]) != fmt.Sprint(tt.observe) || ob["mode"] != "observe" || ob["content"] == nil {
				t.Errorf("observe subscription = %v, want events %v", ob, tt.observe)
			}
			if _, ok := ob["timeoutMs"]; ok {
				t.Errorf("observe subscription carries timeoutMs (B-REG-4)")
			}
		})
	}
}

func TestRegistrationRefuses(t *testing.T) {
	fp := "--failure-policy=fail-closed"
	tests := []struct {
		name string
		args []string
		err  string
	}{
		{"no failure policy", nil, "--failure-policy is required"},
		{"unknown failure policy", []string{"--failure-policy=deny"}, "fail-closed or fail-open"},
		{"bad id", []string{fp, "--id=ahp opa"}, "reverse-DNS"},
		{"unknown transport", []string{fp, "--transport=grpc"}, "stdio or http"},
		{"unknown lifecycle", []string{fp, "--lifecycle=once"}, "persistent or per_event"},
		{"http without url", []string{fp, "--transport=http"}, "needs --url"},
		{"relative url", []string{fp, "--transport=http", "--url=/ahp"}, "absolute"},
		{"ftp url", []string{fp, "--transport=http", "--url=ftp://x/ahp"}, "absolute"},
		{"credentials in url", []string{fp, "--transport=http", "--url=https://u:p@x/ahp"}, "credentials"},
		{"url for stdio", []string{fp, "--url=https://x/ahp"}, "--transport http"},
		{"serve flags for http", []string{fp, "--transport=http", "--url=https://x/ahp", "--", "--config=x"}, "--transport stdio"},
		{"serve arguments without --", []string{fp, "serve-arg"}, "after --"},
		{"bad token variable", []string{fp, "--transport=http", "--url=https://x/ahp", "--token-env=A-B"}, "environment variable"},
		{"negative deadline", []string{fp, "--timeout-ms=-5"}, "positive"},
		{"bad event selector", []string{fp, "--observe=tool.*x"}, "--observe"},
		{"bad content", []string{fp, "--content=all"}, "body, metadata or omit"},
		{"client for a persistent backend", []string{fp, "--client", "--command=/h"}, "--lifecycle per_event"},
		{"client over http", []string{fp, "--client", "--transport=http", "--url=https://x/ahp"}, "--transport stdio"},
		{"client with a serve-only flag", []string{fp, "--client", "--lifecycle=per_event", "--command=/h", "--", "--eval-timeout", "1s"}, "--config file"},
		{"client flag without value", []string{fp, "--client", "--lifecycle=per_event", "--command=/h", "--", "--policy"}, "needs a value"},
		{"per_event client with a serve-only flag", []string{fp, "--lifecycle=per_event", "--command=/h", "--", "--log-level", "warn"}, "--no-client"},
		{"client and no client", []string{fp, "--client", "--no-client", "--lifecycle=per_event", "--command=/h"}, "contradict"},
		{"no client for a persistent backend", []string{fp, "--no-client", "--command=/h"}, "--lifecycle per_event"},
		{"no client over http", []string{fp, "--no-client", "--transport=http", "--url=https://x/ahp"}, "--transport stdio"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := runRegistration(t, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("error = %v, want one about %q", err, tt.err)
			}
			if out != "" {
				t.Errorf("printed a document despite the error:\n%s", out)
			}
		})
	}
}

// TestRegistrationPerEventNeedsTheClient: per_event registers the client,
// so without one to point at, the command says how to get one or do
// without rather than register the slow form unasked.
func TestRegistrationPerEventNeedsTheClient(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	out, _, err := runRegistration(t, "--lifecycle=per_event", "--failure-policy=fail-closed")
	if err == nil || !strings.Contains(err.Error(), "ahp-opa-hook is neither next to this executable nor on PATH") || !strings.Contains(err.Error(), "--no-client") {
		t.Fatalf("error = %v, want one naming ahp-opa-hook and --no-client", err)
	}
	if out != "" {
		t.Errorf("printed a document despite the error:\n%s", out)
	}
	if _, _, err := runRegistration(t, "--lifecycle=per_event", "--no-client", "--failure-policy=fail-closed"); err != nil {
		t.Errorf("--no-client needs no ahp-opa-hook: %v", err)
	}
}

// TestReadmeRegistration: the document README shows under "Use it from an
// AHP harness" is exactly what the command shown above it prints (run from
// a checkout in /home/you/ahp-opa), and it passes the official schema.
func TestReadmeRegistration(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "## Use it from an AHP harness")
	if !ok {
		t.Fatal(`README has no "Use it from an AHP harness" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	_, rest, ok := strings.Cut(section, "\n./bin/ahp-opa registration ")
	if !ok {
		t.Fatal("the section shows no ./bin/ahp-opa registration command")
	}
	cmdLine, rest, _ := strings.Cut(rest, "\n")
	cmdLine = strings.ReplaceAll(cmdLine, `"$PWD/`, `"/home/you/ahp-opa/`)
	cmdLine = strings.ReplaceAll(cmdLine, `"`, "")
	_, doc, ok := strings.Cut(rest, "```json\n")
	if !ok {
		t.Fatal("no JSON block follows the command")
	}
	doc, _, _ = strings.Cut(doc, "```")

	stdout, _, err := runRegistration(t, strings.Fields(cmdLine)...)
	if err != nil {
		t.Fatalf("ahp-opa registration %s: %v", cmdLine, err)
	}
	var got, want any
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(doc), &want); err != nil {
		t.Fatalf("README's document is not JSON: %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("README's document differs from the command's output\nREADME:\n%s\ncommand:\n%s", doc, stdout)
	}
	sch, _ := registrationSchema(t)
	if err := validate(t, sch, []byte(doc)); err != nil {
		t.Errorf("README's document fails the schema: %v", err)
	}
}
