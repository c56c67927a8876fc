package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ahp-opa/ahp-opa/internal/testkit"
)

// The hook binary must start without OPA: that is its whole point. Nor
// may it link net, whose cgo resolver makes it load libc at every start
// (~1.3 ms, BENCHMARKS.md).
func TestDoesNotLinkOPA(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go toolchain not on PATH")
	}
	out, err := exec.Command(gobin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(dep, "open-policy-agent") || strings.Contains(dep, "prometheus") || strings.Contains(dep, "/engine") ||
			strings.HasSuffix(dep, "/transport") ||
			dep == "net" || dep == "runtime/cgo" {
			t.Errorf("ahp-opa-hook depends on %s", dep)
		}
	}
}

func TestParseArgs(t *testing.T) {
	o, err := parseArgs([]string{"--policy", "a.rego", "claude-code", "--fail-open", "--policy", "/b", "--timeout", "2s"})
	if err != nil || o.agent != "claude-code" || !o.failOpen || len(o.policies) != 2 || o.timeout.String() != "2s" {
		t.Fatalf("%+v, %v", o, err)
	}
	if args := o.policyArgs(); !filepath.IsAbs(args[1]) || args[3] != "/b" {
		t.Errorf("policy args not absolute: %v", args)
	}
	for _, bad := range [][]string{{}, {"--policy"}, {"a", "b"}, {"--nope", "a"}, {"--timeout", "x", "a"}} {
		if _, err := parseArgs(bad); err == nil {
			t.Errorf("parseArgs(%q) accepted", bad)
		}
	}
}

// TestHelpAndUsage (issue 30): --help is help, not an unknown flag, and
// the usage names every flag parseArgs takes, the ahp mode, the agents and
// the default timeout.
func TestHelpAndUsage(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"claude-code", "--help"}} {
		if o, err := parseArgs(args); err != nil || !o.help {
			t.Errorf("parseArgs(%q) = %+v, %v; want help", args, o, err)
		}
	}
	for _, want := range []string{"--policy", "--with-builtin", "--config", "--fail-open", "--no-daemon", "--timeout", "--idle-timeout",
		"--help", " ahp ", "claude-code, codex, gemini-cli, cursor, copilot", "(default 9s)"} {
		if !strings.Contains(usage, want) {
			t.Errorf("usage lacks %q:\n%s", want, usage)
		}
	}
	if _, err := parseArgs([]string{"--timeout", "soon", "codex"}); err == nil || !strings.Contains(err.Error(), `"soon"`) {
		t.Errorf("a bad --timeout is not echoed: %v", err)
	}
}

// TestEnvDefaults: AHP_OPA_HOOK__NO_DAEMON and __FAIL_OPEN set the hook's
// keys, as for every other command; the timeout is the flag's alone.
func TestEnvDefaults(t *testing.T) {
	tests := []struct {
		env      map[string]string
		noDaemon bool
		failOpen bool
		timeout  string
		err      string
	}{
		{env: nil, timeout: "9s"},
		{env: map[string]string{"AHP_OPA_HOOK__NO_DAEMON": "1", "AHP_OPA_HOOK__FAIL_OPEN": "true", "AHP_OPA_HOOK__TIMEOUT": "3s"},
			noDaemon: true, failOpen: true, timeout: "9s"},
		{env: map[string]string{"AHP_OPA_HOOK__NO_DAEMON": "maybe"}, err: `AHP_OPA_HOOK__NO_DAEMON="maybe"`},
	}
	for _, tt := range tests {
		o := options{timeout: 9 * time.Second}
		err := o.fromEnv(func(k string) string { return tt.env[k] })
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%v: err = %v, want %s", tt.env, err, tt.err)
			}
			continue
		}
		if err != nil || o.noDaemon != tt.noDaemon || o.failOpen != tt.failOpen || o.timeout.String() != tt.timeout {
			t.Errorf("%v: %+v, %v", tt.env, o, err)
		}
	}
}

var (
	buildOnce sync.Once
	built     string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if built != "" {
		os.Remove(built)
	}
	os.Exit(code)
}

// buildHook builds the hook into a fresh dir, with fullScript (if any) as
// the ahp-opa next to it.
func buildHook(t *testing.T, fullScript string) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go toolchain not on PATH")
	}
	buildOnce.Do(func() {
		built = filepath.Join(os.TempDir(), "ahp-opa-hook-test-"+strconv.Itoa(os.Getpid()))
		if out, err := exec.Command(gobin, "build", "-o", built, ".").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	dir := t.TempDir()
	bin, err := os.ReadFile(built)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ahp-opa-hook"), bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if fullScript != "" {
		if err := os.WriteFile(filepath.Join(dir, "ahp-opa"), []byte("#!/bin/sh\n"+fullScript), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "ahp-opa-hook")
}

// runHook runs the hook client with a Claude Code payload on stdin.
func runHook(t *testing.T, hook, runtime string, args ...string) (string, string, int) {
	t.Helper()
	return runClient(t, hook, runtime, `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`, args...)
}

// runClient runs the hook client in a private runtime dir and returns its
// stdout, stderr and exit status.
func runClient(t *testing.T, hook, runtime, stdin string, args ...string) (string, string, int) {
	t.Helper()
	return runHookIn(t, hook, runtime, "", nil, stdin, args...)
}

// runHookIn is runClient in directory dir (the test's own when empty) with
// env added to the private runtime dir.
func runHookIn(t *testing.T, hook, runtime, dir string, env []string, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(hook, args...)
	cmd.Env = append([]string{"XDG_RUNTIME_DIR=" + runtime, "PATH=/usr/bin:/bin"}, env...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	var out, serr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &serr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), serr.String(), code
}

func TestFallbackChain(t *testing.T) {
	// The daemon fails to start; the in-process hook answers with its args.
	inproc := `case "$1" in
daemon) echo "daemon cannot start" >&2; exit 1;;
hook) shift; echo "{\"inproc\":\"$*\"}"; cat >/dev/null;;
esac
`
	hook := buildHook(t, inproc)
	rt := t.TempDir()
	out, serr, code := runHook(t, hook, rt, "--policy", "/p.rego", "claude-code")
	if code != 0 || out != `{"inproc":"--no-daemon --policy /p.rego claude-code"}`+"\n" {
		t.Errorf("in-process fallback: %q %q %d", out, serr, code)
	}
	if !strings.Contains(serr, "deciding in-process") {
		t.Errorf("fallback not reported: %q", serr)
	}
	if _, serr2, _ := runHook(t, hook, rt, "--policy", "/p.rego", "claude-code"); strings.Contains(serr2, "in-process") {
		t.Errorf("fallback reported twice: %q", serr2)
	}
	log, _ := os.ReadFile(filepath.Join(rt, "ahp-opa", "daemon.log"))
	if !strings.Contains(string(log), "daemon cannot start") {
		t.Errorf("daemon stderr not kept in daemon.log: %q", log)
	}
}

func TestFailsClosed(t *testing.T) {
	broken := `echo "policy rules/team.rego failed to compile" >&2; exit 1
`
	for _, tc := range []struct {
		name, script string
		args         []string
		deny         bool
	}{
		{"in-process breaks", broken, []string{"codex"}, true},
		{"no ahp-opa anywhere", "", []string{"cursor"}, true},
		{"fail-open", broken, []string{"--fail-open", "gemini-cli"}, false},
		{"no-daemon, in-process breaks", broken, []string{"--no-daemon", "copilot"}, true},
		{"bad flag", broken, []string{"--bogus", "claude-code"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hook := buildHook(t, tc.script)
			out, serr, code := runHook(t, hook, t.TempDir(), tc.args...)
			if code != 0 {
				t.Errorf("exit %d, want 0 (stderr %q)", code, serr)
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(out), &m); err != nil {
				t.Fatalf("stdout is not one JSON object: %q", out)
			}
			if got := strings.Contains(out, "deny"); got != tc.deny {
				t.Errorf("deny = %v, want %v: %s", got, tc.deny, out)
			}
			if tc.deny && !strings.Contains(out, "ahp-opa") {
				t.Errorf("deny without a reason naming ahp-opa: %s", out)
			}
		})
	}
}

// runAHP runs the client as a per_event AHP backend.
func runAHP(t *testing.T, hook, runtime, stdin string, args ...string) (string, string, int) {
	t.Helper()
	return runClient(t, hook, runtime, stdin, append(args, "ahp")...)
}

// TestAHPFallback: when the daemon cannot start, the input goes to
// `ahp-opa serve --stdio` with the policy flags, one message at a time,
// and the user is told once.
func TestAHPFallback(t *testing.T) {
	serve := `case "$1" in
daemon) echo "daemon cannot start" >&2; exit 1;;
serve) shift; while IFS= read -r l; do echo "{\"serve\":\"$*\",\"line\":$l}"; done;;
esac
`
	hook := buildHook(t, serve)
	rt := t.TempDir()
	in := `{"id":1}` + "\n" + `{"id":2}` + "\n"
	out, serr, code := runAHP(t, hook, rt, in, "--policy", "/p.rego")
	want := `{"serve":"--stdio --http= --concurrency 1 --policy /p.rego","line":{"id":1}}` + "\n" +
		`{"serve":"--stdio --http= --concurrency 1 --policy /p.rego","line":{"id":2}}` + "\n"
	if code != 0 || out != want {
		t.Errorf("fallback: %q %q %d", out, serr, code)
	}
	if !strings.Contains(serr, "answering with 'ahp-opa serve --stdio'") {
		t.Errorf("fallback not reported: %q", serr)
	}
	if _, serr2, _ := runAHP(t, hook, rt, in, "--policy", "/p.rego"); strings.Contains(serr2, "serve --stdio") {
		t.Errorf("fallback reported twice: %q", serr2)
	}
	if _, serr3, _ := runAHP(t, hook, t.TempDir(), in, "--no-daemon"); serr3 != "" {
		t.Errorf("--no-daemon reported a fallback the user chose: %q", serr3)
	}
}

// TestAHPNoBackend: when neither the daemon nor serve can answer, a
// request gets a -32003 error with its id and the exit status is 0; a
// notification or a line without an id cannot be answered: exit 1. Both
// say why on stderr.
func TestAHPNoBackend(t *testing.T) {
	broken := `echo "policy rules/team.rego failed to compile" >&2; exit 1
`
	for _, tc := range []struct {
		name, script, in, out string
		code                  int
	}{
		{"serve breaks", broken, `{"jsonrpc":"2.0","id":"e1","method":"hooks/intercept"}` + "\n", `"id":"e1","error":{"code":-32003`, 0},
		{"no ahp-opa anywhere", "", `{"id":7}`, `"id":7,"error":{"code":-32003`, 0},
		{"notification", broken, `{"jsonrpc":"2.0","method":"hooks/observe"}` + "\n", "", 1},
		{"garbage", broken, "{\n", "", 1},
		{"nothing to answer", broken, "\n", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hook := buildHook(t, tc.script)
			out, serr, code := runAHP(t, hook, t.TempDir(), tc.in)
			if code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tc.code, serr)
			}
			if tc.out == "" {
				if out != "" {
					t.Errorf("stdout %q, want nothing", out)
				}
			} else if strings.Count(out, "\n") != 1 || !json.Valid([]byte(out)) || !strings.Contains(out, tc.out) {
				t.Errorf("stdout %q, want one line with %s", out, tc.out)
			}
			if tc.in != "\n" && !strings.Contains(serr, "failed too") {
				t.Errorf("stderr does not say why: %q", serr)
			}
		})
	}
}

func TestAHPUsage(t *testing.T) {
	hook := buildHook(t, "")
	out, serr, code := runAHP(t, hook, t.TempDir(), `{"id":1}`, "--fail-open")
	if code == 0 || out != "" || !strings.Contains(serr, "failurePolicy") {
		t.Errorf("--fail-open ahp: %q %q %d", out, serr, code)
	}
}

// startLog is a stand-in ahp-opa whose daemon reports how it was started
// (in daemon.log, where the client sends a daemon's stderr) and fails;
// its in-process hook answers "{}".
const startLog = `case "$1" in
daemon) echo "pwd=$PWD policy=$AHP_OPA_POLICY args=$*" >&2; exit 1;;
hook) cat >/dev/null; echo '{}';;
esac
`

// TestDaemonPerEffectiveConfiguration: hooks of two projects that both
// say AHP_OPA_POLICY=rules mean two different policies and get two
// daemons, each started with absolute paths in "/"; hooks that mean the
// same files share one from any directory.
func TestDaemonPerEffectiveConfiguration(t *testing.T) {
	hook := buildHook(t, startLog)
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	for _, d := range []string{a, b} {
		if err := os.MkdirAll(filepath.Join(d, "rules"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name   string
		x, y   [2]string // cwd, AHP_OPA_POLICY
		starts [2]string // what each daemon got: pwd and policy
		share  bool
	}{
		{"relative policy, two projects", [2]string{a, "rules"}, [2]string{b, "rules"},
			[2]string{"pwd=/ policy=" + a + "/rules", "pwd=/ policy=" + b + "/rules"}, false},
		{"absolute policy, two directories", [2]string{a, a + "/rules"}, [2]string{b, a + "/rules"},
			[2]string{"pwd=/ policy=" + a + "/rules", "pwd=/ policy=" + a + "/rules"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := t.TempDir()
			before := testkit.SnapshotTree(t, root)
			for _, h := range [][2]string{tc.x, tc.y} {
				out, serr, code := runIn(t, hook, rt, h[0], []string{"AHP_OPA_POLICY=" + h[1]}, "codex")
				if out != "{}\n" || code != 0 {
					t.Fatalf("hook in %s: %q %q %d", h[0], out, serr, code)
				}
			}
			log, _ := os.ReadFile(filepath.Join(rt, "ahp-opa", "daemon.log"))
			lines := strings.Split(strings.TrimSpace(string(log)), "\n")
			if len(lines) != 2 {
				t.Fatalf("daemon.log: %q, want two starts", log)
			}
			var sockets [2]string
			for i, l := range lines {
				head, args, _ := strings.Cut(l, " args=")
				if head != tc.starts[i] {
					t.Errorf("daemon %d started with %q, want %q", i+1, head, tc.starts[i])
				}
				f := strings.Fields(args)
				sockets[i] = f[len(f)-1]
			}
			if share := sockets[0] == sockets[1]; share != tc.share {
				t.Errorf("share = %v, want %v (%s)", share, tc.share, log)
			}
			testkit.AssertSameTree(t, before, testkit.SnapshotTree(t, root))
		})
	}
}

// TestNoDaemonIsNoOutage: --no-daemon is the user's choice, not news on
// every call; a daemon that cannot start is told once.
func TestNoDaemonIsNoOutage(t *testing.T) {
	hook := buildHook(t, startLog)
	for _, tc := range []struct {
		name   string
		args   []string
		stderr [2]string // of two calls
	}{
		{"--no-daemon", []string{"--no-daemon", "codex"}, [2]string{"", ""}},
		{"daemon fails", []string{"codex"}, [2]string{"ahp-opa: the decision daemon is unavailable, deciding in-process (slower): daemon: started daemon did not answer: it exited (exit status 1)\n", ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := t.TempDir()
			for i, want := range tc.stderr {
				out, serr, code := runIn(t, hook, rt, t.TempDir(), nil, tc.args...)
				if out != "{}\n" || serr != want || code != 0 {
					t.Errorf("call %d: %q %q %d, want stderr %q", i+1, out, serr, code, want)
				}
			}
		})
	}
}

// runIn runs the hook client in dir with the extra environment env and a
// Codex payload on stdin.
func runIn(t *testing.T, hook, runtime, dir string, env []string, args ...string) (string, string, int) {
	t.Helper()
	return runHookIn(t, hook, runtime, dir, env, `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`, args...)
}

// TestDaemonLogCapped: daemon.log, where every daemon's stderr goes, does
// not grow without bound: past 1 MiB it becomes daemon.log.1 (replacing
// the one before) when the next daemon starts.
func TestDaemonLogCapped(t *testing.T) {
	hook := buildHook(t, startLog)
	for _, tc := range []struct {
		name    string
		size    int
		rotated bool
	}{
		{"under the cap", 1 << 19, false},
		{"over the cap", 1<<20 + 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := t.TempDir()
			dir := filepath.Join(rt, "ahp-opa")
			os.Mkdir(dir, 0o700)
			old := strings.Repeat("x", tc.size)
			os.WriteFile(filepath.Join(dir, "daemon.log"), []byte(old), 0o600)
			os.WriteFile(filepath.Join(dir, "daemon.log.1"), []byte("older"), 0o600)
			if out, serr, code := runIn(t, hook, rt, t.TempDir(), nil, "codex"); out != "{}\n" || code != 0 {
				t.Fatalf("hook: %q %q %d", out, serr, code)
			}
			log, _ := os.ReadFile(filepath.Join(dir, "daemon.log"))
			one, _ := os.ReadFile(filepath.Join(dir, "daemon.log.1"))
			const start = "pwd="
			switch {
			case tc.rotated && (string(one) != old || !strings.HasPrefix(string(log), start)):
				t.Errorf("not rotated: daemon.log %.60q (%d bytes), daemon.log.1 %d bytes", log, len(log), len(one))
			case !tc.rotated && (string(one) != "older" || !strings.HasPrefix(string(log), old+start)):
				t.Errorf("rotated under the cap: daemon.log %d bytes, daemon.log.1 %q", len(log), one)
			}
		})
	}
}
