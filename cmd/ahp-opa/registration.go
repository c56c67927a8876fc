package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ahp-opa/ahp-opa/engine"
	"github.com/ahp-opa/ahp-opa/internal/config"
	"github.com/ahp-opa/ahp-opa/internal/daemon"
	"github.com/ahp-opa/ahp-opa/transport"
	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// Default harness deadlines (timeoutMs). They leave room above the
// evaluation deadline (engine.DefaultEvalTimeout) and the HTTP queue wait;
// per_event also pays for starting the process and compiling the policy on
// every call.
const (
	defaultTimeoutMs         = 1000
	defaultPerEventTimeoutMs = 2000
	// minSafeTimeoutMs is the deadline below which a harness may give up
	// before ahp-opa's own evaluation deadline fires.
	minSafeTimeoutMs = int(2 * engine.DefaultEvalTimeout / 1e6)
)

// defaultObserved are the events observed by default: what the audit trail
// correlates decisions with. A per_event registration with --no-client
// observes nothing by default, since each notification would start a
// process that compiles the policy.
var defaultObserved = []string{ahp.EventToolAfter, ahp.EventSessionStart, ahp.EventSessionEnd}

// eventSelector is an exact event name, a family wildcard or "*" (B-REG-5).
var eventSelector = regexp.MustCompile(`^(?:\*|[a-z][a-z0-9]*\.\*|[a-z][a-z0-9]*(?:\.[a-z][a-z0-9]*)+)$`)

// envName is what a tokenEnv may be.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Registration document types (PROTOCOL.md §9).
type (
	registration struct {
		ProtocolVersion string `json:"protocolVersion"`
		Hooks           []hook `json:"hooks"`
	}
	hook struct {
		ID             string          `json:"id"`
		Transport      any             `json:"transport"`
		Authentication *authentication `json:"authentication,omitempty"`
		Subscriptions  []subscription  `json:"subscriptions"`
	}
	stdioTransport struct {
		Type      string   `json:"type"`
		Command   string   `json:"command"`
		Args      []string `json:"args"`
		Lifecycle string   `json:"lifecycle"`
	}
	httpTransport struct {
		Type string `json:"type"`
		URL  string `json:"url"`
	}
	authentication struct {
		Type     string `json:"type"`
		TokenEnv string `json:"tokenEnv"`
	}
	subscription struct {
		Events        []string `json:"events"`
		Mode          string   `json:"mode"`
		TimeoutMs     int      `json:"timeoutMs,omitempty"`
		FailurePolicy string   `json:"failurePolicy,omitempty"`
		Content       content  `json:"content"`
	}
	content struct {
		Default string `json:"default"`
	}
)

// registrationOptions are the flags of the registration command.
type registrationOptions struct {
	id             string
	transport      string
	lifecycle      string
	command        string
	url            string
	tokenEnv       string
	failurePolicy  string
	timeoutMs      int
	content        string
	observeContent string
	observe        []string
	observeSet     bool
	client         bool     // --client: the default for per_event, kept for older command lines
	noClient       bool     // per_event as ahp-opa serve --stdio, compiling the policy at every start
	serveArgs      []string // extra arguments for `serve --stdio`
}

func registrationCommand() *cobra.Command {
	var o registrationOptions
	cmd := &cobra.Command{
		Use:   "registration --failure-policy fail-closed|fail-open [flags] [-- SERVE-FLAGS...]",
		Short: "Print a registration document that tells a harness how to call ahp-opa",
		Long: `Registration prints an AHP registration document (protocolVersion "draft")
for one ahp-opa hook: an intercept subscription for tool.before and, unless
turned off with --observe "", an observe subscription for the audit trail.

  stdio, persistent   the harness starts "ahp-opa serve --stdio" once
  stdio, per_event    the harness starts "ahp-opa-hook ahp" for every event,
                      the small client that asks a warm per-user decision
                      daemon (started on the first event) instead of
                      compiling the policy; when the daemon cannot start,
                      the client decides in-process
  stdio, per_event, --no-client
                      the harness starts "ahp-opa serve --stdio" for every
                      event, which compiles the policy each time
  http                the harness POSTs to --url with the bearer token it
                      reads from the environment variable --token-env

AHP gives failurePolicy no default, so --failure-policy is required:
fail-closed blocks a tool call when ahp-opa cannot answer, fail-open lets it
run. A deny is enforced either way. Arguments after -- are appended to
"serve --stdio", for example -- --config /etc/ahp-opa.yaml; for the per_event
client they may be --config, --policy and --with-builtin (and ahp-opa-hook's
own --timeout and --idle-timeout), and every other setting goes in the
--config file.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if dash := cmd.ArgsLenAtDash(); len(args) > 0 && dash != 0 {
				return errors.New("put arguments for serve after --")
			}
			o.serveArgs = args
			o.observeSet = cmd.Flags().Changed("observe")
			doc, warnings, err := o.build()
			if err != nil {
				return err
			}
			for _, w := range warnings {
				fmt.Fprintln(cmd.ErrOrStderr(), "ahp-opa: warning:", w)
			}
			out, err := json.MarshalIndent(doc, "", "  ")
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s\n", out)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.id, "id", "dev.ahp-opa", "hook id (reverse DNS, unique in the harness)")
	fs.StringVar(&o.transport, "transport", "stdio", "stdio or http")
	fs.StringVar(&o.lifecycle, "lifecycle", "persistent", "stdio lifecycle: persistent or per_event")
	fs.StringVar(&o.command, "command", "", "stdio command; default: this executable (per_event: ahp-opa-hook next to it, else on PATH)")
	fs.BoolVar(&o.noClient, "no-client", false, "per_event as ahp-opa serve --stdio, which compiles the policy at every event, instead of the small client of the warm decision daemon")
	fs.BoolVar(&o.client, "client", false, "per_event through the small ahp-opa-hook client and the warm decision daemon (the default)")
	_ = fs.MarkHidden("client") // the default now; kept so that older command lines still work
	fs.StringVar(&o.url, "url", "", "HTTP endpoint, e.g. https://policy.example.com:8443/ahp")
	fs.StringVar(&o.tokenEnv, "token-env", config.DefaultTokenEnv,
		`environment variable the harness reads the bearer token from; "" when the endpoint needs none`)
	fs.StringVar(&o.failurePolicy, "failure-policy", "", "fail-closed or fail-open (required)")
	fs.IntVar(&o.timeoutMs, "timeout-ms", 0,
		fmt.Sprintf("harness deadline for one decision; default %d, %d for per_event", defaultTimeoutMs, defaultPerEventTimeoutMs))
	fs.StringVar(&o.content, "content", "body", "content selection default of the intercept subscription: body, metadata or omit (body: rules see the command and paths)")
	fs.StringVar(&o.observeContent, "observe-content", "metadata", "content selection default of the observe subscription: body, metadata or omit")
	fs.StringSliceVar(&o.observe, "observe", defaultObserved, `events to observe for the audit trail; "" for none`)
	return cmd
}

// build returns the document, with warnings about choices that work but
// are risky.
func (o registrationOptions) build() (*registration, []string, error) {
	var warnings []string
	if !transport.IsReverseDNS(o.id) {
		return nil, nil, fmt.Errorf("--id %q is not a reverse-DNS name such as dev.ahp-opa", o.id)
	}
	switch o.failurePolicy {
	case "fail-closed", "fail-open":
	case "":
		return nil, nil, errors.New("--failure-policy is required: fail-closed (block a call when ahp-opa cannot answer) or fail-open (let it run)")
	default:
		return nil, nil, fmt.Errorf("--failure-policy %q: want fail-closed or fail-open", o.failurePolicy)
	}
	for flag, v := range map[string]string{"--content": o.content, "--observe-content": o.observeContent} {
		switch v {
		case "body", "metadata", "omit":
		default:
			return nil, nil, fmt.Errorf("%s %q: want body, metadata or omit", flag, v)
		}
	}
	if o.client && o.noClient {
		return nil, nil, errors.New("--client and --no-client contradict each other")
	}
	h := hook{ID: o.id}
	timeout := defaultTimeoutMs
	observe := o.observe
	// client: per_event through ahp-opa-hook and the warm daemon.
	client := false
	switch o.transport {
	case "stdio":
		if o.url != "" {
			return nil, nil, errors.New("--url is for --transport http")
		}
		switch o.lifecycle {
		case "persistent":
		case "per_event":
			timeout = defaultPerEventTimeoutMs
			client = !o.noClient
			// A notification would start a process that compiles the
			// policy; through the warm daemon it costs a round trip.
			if !o.observeSet && !client {
				observe = nil
			}
		default:
			return nil, nil, fmt.Errorf("--lifecycle %q: want persistent or per_event", o.lifecycle)
		}
		if (o.client || o.noClient) && o.lifecycle != "per_event" {
			return nil, nil, errors.New("--client and --no-client are for --lifecycle per_event: a persistent backend stays warm by itself")
		}
		command, args := o.command, append([]string{"serve", "--stdio"}, o.serveArgs...)
		if client {
			var err error
			if args, err = clientArgs(o.serveArgs); err != nil {
				return nil, nil, err
			}
			if command == "" {
				if command, err = hookBinary(); err != nil {
					return nil, nil, err
				}
			}
		}
		if command == "" {
			exe, err := os.Executable()
			if err != nil {
				return nil, nil, fmt.Errorf("finding this executable (set --command): %w", err)
			}
			command = exe
		}
		h.Transport = stdioTransport{Type: "stdio", Command: command, Lifecycle: o.lifecycle, Args: args}
	case "http":
		if o.client || o.noClient {
			return nil, nil, errors.New("--client and --no-client are for --transport stdio --lifecycle per_event")
		}
		if len(o.serveArgs) > 0 {
			return nil, nil, errors.New("arguments after -- are for --transport stdio")
		}
		w, err := checkURL(o.url)
		if err != nil {
			return nil, nil, err
		}
		if w != "" {
			warnings = append(warnings, w)
		}
		h.Transport = httpTransport{Type: "http", URL: o.url}
		switch {
		case o.tokenEnv == "":
			warnings = append(warnings, "no authentication: only right for a loopback endpoint served without a token")
		case !envName.MatchString(o.tokenEnv):
			return nil, nil, fmt.Errorf("--token-env %q is not an environment variable name", o.tokenEnv)
		default:
			h.Authentication = &authentication{Type: "bearer", TokenEnv: o.tokenEnv}
		}
	default:
		return nil, nil, fmt.Errorf("--transport %q: want stdio or http", o.transport)
	}
	if o.timeoutMs != 0 {
		timeout = o.timeoutMs
	}
	if timeout < 1 {
		return nil, nil, fmt.Errorf("--timeout-ms must be positive, got %d", timeout)
	}
	if timeout < minSafeTimeoutMs {
		warnings = append(warnings, fmt.Sprintf("--timeout-ms %d is below %d ms: the harness may give up before "+
			"ahp-opa's evaluation deadline (eval_timeout, default %s) fires", timeout, minSafeTimeoutMs, engine.DefaultEvalTimeout))
	}
	h.Subscriptions = []subscription{{
		Events: []string{ahp.EventToolBefore}, Mode: "intercept",
		TimeoutMs: timeout, FailurePolicy: o.failurePolicy, Content: content{Default: o.content},
	}}
	events, err := cleanEvents(observe)
	if err != nil {
		return nil, nil, err
	}
	if len(events) > 0 {
		h.Subscriptions = append(h.Subscriptions, subscription{
			Events: events, Mode: "observe", Content: content{Default: o.observeContent},
		})
	}
	return &registration{ProtocolVersion: ahp.Version, Hooks: []hook{h}}, warnings, nil
}

// clientArgs turns the serve flags of a per_event registration into
// ahp-opa-hook's: those that choose the policy, which the client passes
// to the daemon and to its serve --stdio fallback, and the client's own.
// Every other setting belongs in the --config file, which both read as
// serve would.
func clientArgs(serve []string) ([]string, error) {
	var out []string
	for i := 0; i < len(serve); i++ {
		name, value, hasValue := strings.Cut(serve[i], "=")
		switch name {
		case "--with-builtin":
			switch value {
			case "", "true":
				out = append(out, name)
			case "false":
			default:
				return nil, fmt.Errorf("%s: want true or false", serve[i])
			}
			continue
		case "--config", "--policy", "--timeout", "--idle-timeout":
		default:
			return nil, fmt.Errorf("per_event: the client ahp-opa-hook takes --config, --policy, --with-builtin, --timeout and --idle-timeout, not %s: put that setting in the --config file (or pass --no-client to register serve --stdio, which compiles the policy at every event)", serve[i])
		}
		if !hasValue {
			if i+1 >= len(serve) {
				return nil, fmt.Errorf("%s needs a value", name)
			}
			i++
			value = serve[i]
		}
		if name == "--policy" {
			// serve reads a comma-separated list; the client one path a flag.
			for _, p := range strings.Split(value, ",") {
				out = append(out, name, p)
			}
			continue
		}
		out = append(out, name, value)
	}
	return append(out, daemon.AgentAHP), nil
}

// hookBinary finds ahp-opa-hook by absolute path, so that the harness's
// PATH does not matter: next to this executable, then on PATH.
func hookBinary() (string, error) {
	if self, err := os.Executable(); err == nil {
		if self, err = filepath.EvalSymlinks(self); err == nil {
			next := filepath.Join(filepath.Dir(self), "ahp-opa-hook")
			if fi, err := os.Stat(next); err == nil && !fi.IsDir() {
				return next, nil
			}
		}
	}
	p, err := exec.LookPath("ahp-opa-hook")
	if err != nil {
		return "", errors.New("per_event: the client ahp-opa-hook is neither next to this executable nor on PATH: build it with 'go build ./cmd/ahp-opa-hook', pass --command, or pass --no-client to register serve --stdio, which compiles the policy at every event")
	}
	return filepath.Abs(p)
}

// checkURL accepts an absolute http(s) URL (B-REG-2) and warns about plain
// HTTP to another host (B-HTTP-6).
func checkURL(raw string) (warning string, err error) {
	if raw == "" {
		return "", errors.New("--transport http needs --url, e.g. https://policy.example.com:8443/ahp")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("--url %q: want an absolute http:// or https:// URL", raw)
	}
	if u.User != nil {
		return "", errors.New("--url must not carry credentials; the token goes in --token-env")
	}
	if u.Scheme == "http" {
		host := u.Hostname()
		ip := net.ParseIP(host)
		if !strings.EqualFold(host, "localhost") && (ip == nil || !ip.IsLoopback()) {
			return "plain http:// to a remote host sends events and the token unencrypted; use https:// (B-HTTP-6)", nil
		}
	}
	return "", nil
}

// cleanEvents drops empty entries (--observe "") and checks the selectors.
func cleanEvents(list []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, e := range list {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if !eventSelector.MatchString(e) {
			return nil, fmt.Errorf("--observe %q: want an event name, a family such as session.* or *", e)
		}
		if !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	return out, nil
}
