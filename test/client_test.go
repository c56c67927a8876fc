package test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ahp-opa/ahp-opa/internal/daemon"
	"github.com/ahp-opa/ahp-opa/internal/testkit"
)

// The per_event client: `ahp-opa-hook ahp` relays each message to the warm
// decision daemon, which answers as `serve --stdio` does. These tests run
// it as a harness would, with the arguments `registration --lifecycle
// per_event` gives by default, and require the very bytes serve writes for
// the same input.

var (
	clientOnce sync.Once
	clientPath string
	clientErr  error
)

// clientBinary builds ahp-opa-hook once, beside a link named ahp-opa to
// the binary under test, as an installation puts them: the client starts
// its daemon and its serve fallback from there.
func clientBinary(tb testing.TB) string {
	tb.Helper()
	clientOnce.Do(func() {
		dir := filepath.Join(tmpDir, "client")
		if clientErr = os.Mkdir(dir, 0o755); clientErr != nil {
			return
		}
		if clientPath, clientErr = buildCommand(dir, "ahp-opa-hook"); clientErr != nil {
			return
		}
		clientErr = os.Symlink(binPath, filepath.Join(dir, "ahp-opa"))
	})
	if clientErr != nil {
		tb.Fatalf("building ahp-opa-hook: %v", clientErr)
	}
	return clientPath
}

// client runs the per_event client in a runtime directory of its own, so
// that its daemons are the test's; they are stopped when the test ends.
type client struct {
	runtime string
	args    []string // the registration's args, "ahp" last
}

// newClient registers the client form for serveArgs and prepares its
// runtime directory.
func newClient(t *testing.T, serveArgs ...string) *client {
	t.Helper()
	bin := clientBinary(t)
	res := runOnce(t, "", append([]string{"registration", "--lifecycle", "per_event", "--failure-policy", "fail-closed",
		"--command", bin, "--"}, serveArgs...)...)
	if res.status != 0 {
		t.Fatalf("registration: exit %d\n%s", res.status, res.stderr)
	}
	var doc struct {
		Hooks []struct {
			Transport struct {
				Command   string
				Args      []string
				Lifecycle string
			}
		}
	}
	if err := json.Unmarshal([]byte(strings.Join(res.lines, "\n")), &doc); err != nil || len(doc.Hooks) != 1 {
		t.Fatalf("registration printed %q: %v", res.lines, err)
	}
	tr := doc.Hooks[0].Transport
	if tr.Command != bin || tr.Lifecycle != "per_event" || len(tr.Args) == 0 || tr.Args[len(tr.Args)-1] != daemon.AgentAHP {
		t.Fatalf("registration transport: %+v", tr)
	}
	c := &client{runtime: t.TempDir(), args: tr.Args}
	t.Cleanup(func() { c.stopDaemons(t) })
	return c
}

// run is one per_event start of the client.
func (c *client) run(tb testing.TB, input string, extra ...string) onceResult {
	tb.Helper()
	args := slices.Concat(extra, c.args)
	return runBinOnce(tb, clientBinary(tb), []string{"XDG_RUNTIME_DIR=" + c.runtime}, input, args...)
}

// runWarm is run, requiring the daemon to answer: the fallback would give
// the same bytes, and the test would not see the daemon's.
func (c *client) runWarm(tb testing.TB, input string) onceResult {
	tb.Helper()
	res := c.run(tb, input)
	if strings.Contains(res.stderr, "the decision daemon is unavailable") {
		tb.Errorf("the daemon did not answer:\n%s", res.stderr)
	}
	return res
}

// stopDaemons asks each daemon of the runtime directory to leave, as a
// client of another version does, waits until it has (its life lock is
// free), and reports a data race it logged.
func (c *client) stopDaemons(tb testing.TB) {
	dir := filepath.Join(c.runtime, "ahp-opa")
	sockets, _ := filepath.Glob(filepath.Join(dir, "*.sock"))
	for _, s := range sockets {
		p := daemon.PathsAt(s)
		ctx, cancel := context.WithTimeout(context.Background(), exitTimeout)
		(&daemon.Client{Paths: p, Version: "test: leave"}).Hook(ctx, daemon.Request{Agent: "codex"})
		lock, err := daemon.LockFile(ctx, p.Life, true)
		cancel()
		if err != nil {
			tb.Errorf("the daemon on %s did not leave: %v", s, err)
			continue
		}
		daemon.UnlockFile(lock)
	}
	if log, _ := os.ReadFile(filepath.Join(dir, "daemon.log")); strings.Contains(string(log), "WARNING: DATA RACE") {
		tb.Errorf("data race in the daemon:\n%s", log)
	}
}

// sameBytes requires the client's output to be exactly serve's.
func sameBytes(t *testing.T, serve, client onceResult) {
	t.Helper()
	if client.status != 0 {
		t.Errorf("client exit status %d, want 0 (B-STDIO-3)\nstderr:\n%s", client.status, client.stderr)
	}
	if client.partial != "" {
		t.Errorf("client: incomplete last line %q", client.partial)
	}
	if !slices.Equal(client.lines, serve.lines) {
		t.Errorf("the client's replies differ from serve --stdio's\nserve:\n%s\nclient:\n%s\nclient stderr:\n%s",
			strings.Join(serve.lines, "\n"), strings.Join(client.lines, "\n"), client.stderr)
	}
}

// TestClientConformanceFixtures replays every request and notification
// fixture of INDEX.json through the client, one per_event start each, and
// requires serve's replies to the same fixtures byte for byte. serve runs
// persistent and serial, and both get the same messages in the same
// order (each fixture followed by serve's probe request), so session facts
// and the retry cache evolve alike on both sides.
func TestClientConformanceFixtures(t *testing.T) {
	t.Parallel()
	fixtures := messageFixtures(t)
	serve := startSerial(t)
	c := newClient(t)
	for _, f := range fixtures {
		t.Run(f.name(), func(t *testing.T) {
			input := strings.Join(f.messages(t), "\n") + "\n"
			serve.sendRaw(t, []byte(input))
			var want onceResult
			for _, r := range serve.repliesUntilProbe(t) {
				want.lines = append(want.lines, r.line)
			}
			probe := fmt.Sprintf("probe-%d", serve.probes)
			got := c.runWarm(t, input+interceptLine(probe, "ls -la")+"\n")
			if n := len(got.lines); n == 0 || mustReply(t, got.lines[n-1]).idJSON != jsonText(probe) {
				t.Fatalf("the client did not answer the probe last: %q\nstderr:\n%s", got.lines, got.stderr)
			}
			got.lines = got.lines[:len(got.lines)-1]
			sameBytes(t, want, got)
			if len(f.messages(t)) == 1 && len(got.lines) > 1 {
				t.Errorf("per_event: %d lines for one message (B-STDIO-3)", len(got.lines))
			}
		})
	}
	serve.expectCleanExit(t)
}

// clientCases are per_event inputs whose replies the client must give
// exactly as serve --stdio does.
func clientCases() []struct{ name, input string } {
	deny := interceptLine("evt-c1", "git push --force")
	allow := interceptLine("evt-c2", "git status")
	note := encode(observeMsg(sessionEndEvent("evt-c3")))
	return []struct{ name, input string }{
		{"deny", deny + "\n"},
		{"no objection", allow + "\n"},
		{"no trailing newline", deny},
		{"CRLF line ending", allow + "\r\n"},
		{"protocol error", encode(with(denyRequest("evt-c4", "ls"), "params.protocolVersion", "0.1")) + "\n"},
		{"malformed", "{\n"},
		{"invalid UTF-8", "{\"id\":\"a\xff\"}\n"},
		{"batch", "[" + allow + "]\n"},
		{"integer id", encode(interceptMsg(7, testkit.ShellEvent("evt-c5", "ls"))) + "\n"},
		{"notification", note + "\n"},
		{"observe with an id", encode(with(observeMsg(sessionEndEvent("evt-c6")), "id", "evt-c6")) + "\n"},
		{"nothing at all", ""},
		{"blank line only", "\n"},
		{"several messages, in order", "\n" + deny + "\n" + note + "\nnot json\n\n" + allow + "\r\n" + interceptLine("evt-c7", "rm -rf /") + "\n"},
	}
}

// TestClientPerEvent: each case through the client (warm daemon) and
// through serve --stdio, one start each: the same bytes, exit 0.
func TestClientPerEvent(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	for _, tc := range clientCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			want := runOnce(t, tc.input, "serve", "--stdio", "--concurrency=1")
			sameBytes(t, want, c.runWarm(t, tc.input))
		})
	}
}

// TestClientConfig: the --config file reaches the daemon as it reaches
// serve; here a small framing limit answers a long line with -32600 and
// the id its beginning names.
func TestClientConfig(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "ahp-opa.yaml")
	if err := os.WriteFile(cfg, []byte("max_message_bytes: 1024\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	long := interceptLine("evt-long", "echo "+strings.Repeat("x", 2000))
	input := long + "\n" + interceptLine("evt-after", "ls") + "\n"
	want := runOnce(t, input, "serve", "--stdio", "--concurrency=1", "--config", cfg)
	if len(want.lines) != 2 || !strings.Contains(want.lines[0], `"id":"evt-long","error":{"code":-32600`) {
		t.Fatalf("serve did not refuse the long line as expected: %q", want.lines)
	}
	sameBytes(t, want, newClient(t, "--config", cfg).runWarm(t, input))
}

// TestClientFallback: when the daemon cannot be used, serve --stdio
// answers (the same bytes); the user is told why, unless they chose it.
func TestClientFallback(t *testing.T) {
	t.Parallel()
	input := clientCases()[len(clientCases())-1].input
	want := runOnce(t, input, "serve", "--stdio", "--concurrency=1")

	t.Run("unsafe runtime directory", func(t *testing.T) {
		t.Parallel()
		c := newClient(t)
		// Another user could have planted a directory open to all.
		if err := os.Mkdir(filepath.Join(c.runtime, "ahp-opa"), 0o755); err != nil {
			t.Fatal(err)
		}
		got := c.run(t, input)
		sameBytes(t, want, got)
		if !strings.Contains(got.stderr, "the decision daemon is unavailable") || !strings.Contains(got.stderr, "0700") {
			t.Errorf("stderr does not say why: %s", got.stderr)
		}
	})
	t.Run("no-daemon", func(t *testing.T) {
		t.Parallel()
		c := newClient(t)
		got := c.run(t, input, "--no-daemon")
		sameBytes(t, want, got)
		if strings.Contains(got.stderr, "unavailable") {
			t.Errorf("a fallback the user chose was reported: %s", got.stderr)
		}
		if _, err := os.Stat(filepath.Join(c.runtime, "ahp-opa")); err == nil {
			t.Error("--no-daemon touched the runtime directory")
		}
	})
}
