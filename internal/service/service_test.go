package service_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ahp-opa/ahp-opa/bundles"
	"github.com/ahp-opa/ahp-opa/internal/config"
	"github.com/ahp-opa/ahp-opa/internal/service"
	"github.com/ahp-opa/ahp-opa/internal/testkit"
	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// sshRule is the built-in rule that denies reading a private SSH key.
const sshRule = "dev.ahp-opa.secrets.ssh-private-key"

// reloadSettle bounds each wait for a reload: watchAfter, the debounce
// and a compile of the built-in library, on a busy machine with -race.
const reloadSettle = 30 * time.Second

var ids atomic.Int64

// intercept is one hooks/intercept line for a shell command.
func intercept(command string) []byte {
	id := fmt.Sprintf("e%d", ids.Add(1))
	return []byte(`{"jsonrpc":"2.0","id":"` + id + `","method":"hooks/intercept","params":{"protocolVersion":"draft",` +
		`"event":{"id":"` + id + `","source":"urn:test","type":"tool.before","time":"2026-01-02T03:04:05Z","call":{"id":"c` + id + `"},` +
		`"path":"native","tool":{"name":"Bash","origin":"native","input":{"command":"` + command + `"}}},` +
		`"capabilities":{"effects":["deny"]}}}`)
}

// answer is "deny CODE", "allow", or "error N: message".
func answer(t *testing.T, svc *service.Service, command string) string {
	t.Helper()
	resp := svc.Server.Handle(context.Background(), intercept(command))
	if resp == nil {
		t.Fatal("no response")
	}
	if resp.Error != nil {
		return fmt.Sprintf("error %d: %s", resp.Error.Code, resp.Error.Message)
	}
	for _, e := range resp.Result.Effects {
		if e.Type == ahp.EffectDeny {
			return "deny " + e.Code
		}
	}
	return "allow"
}

// await polls cond, a condition the service reports, until it holds.
func await(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(reloadSettle)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond) // polling what the service reports, not waiting for time to pass
	}
}

func writeFile(t *testing.T, path, doc string) {
	t.Helper()
	// Written beside and renamed over, as editors save: never half a file.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func logger() (*slog.Logger, *testkit.Buffer) {
	var buf testkit.Buffer
	return slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})), &buf
}

// start runs a watching service on the configuration file doc, as serve
// and the daemon do, and closes it when the test ends.
func start(t *testing.T, doc string, opts service.Options) (*service.Service, string, *testkit.Buffer) {
	t.Helper()
	t.Setenv("HOME", "/home/dev")
	path := filepath.Join(t.TempDir(), "ahp-opa.yaml")
	writeFile(t, path, doc)
	src := config.Source{Path: path}
	cfg, err := src.Load()
	if err != nil {
		t.Fatal(err)
	}
	log, buf := logger()
	opts.Logger, opts.Source, opts.Watch, opts.Metrics = log, src, true, true
	svc, err := service.New(context.Background(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	return svc, path, buf
}

// TestConfigReload is issue 22's stale policy: a rule removed from
// library.disabled_rules in the configuration file takes effect within the
// reload latency, and a broken edit keeps the last good configuration and
// is reported. The daemon runs this service Lazy, serve runs it eagerly.
func TestConfigReload(t *testing.T) {
	for _, lazy := range []bool{false, true} {
		t.Run(fmt.Sprintf("lazy=%v", lazy), func(t *testing.T) {
			svc, path, logs := start(t, "library:\n  disabled_rules: ["+sshRule+"]\n", service.Options{Lazy: lazy})
			if got := answer(t, svc, "cat ~/.ssh/id_rsa"); got != "allow" {
				t.Fatalf("with the rule disabled: %s", got)
			}
			writeFile(t, path, "library:\n  disabled_rules: []\n")
			await(t, "the edit to take effect", func() bool { return answer(t, svc, "cat ~/.ssh/id_rsa") == "deny "+sshRule })
			if p, _ := svc.Health(); p != "" {
				t.Errorf("health after a good edit: %q", p)
			}

			writeFile(t, path, "library:\n  disabled_rules: [no.such.rule]\n")
			await(t, "the broken edit to be reported", func() bool {
				p, _ := svc.Health()
				return strings.Contains(p, "configuration reload failing") && strings.Contains(p, "no.such.rule")
			})
			if got := answer(t, svc, "cat ~/.ssh/id_rsa"); got != "deny "+sshRule {
				t.Errorf("after a broken edit: %s, want the last good configuration's deny", got)
			}
			if !strings.Contains(logs.String(), "configuration reload failed") {
				t.Errorf("the failure was not logged:\n%s", logs)
			}
			if got := metric(t, svc, `ahp_opa_config_reloads_total{outcome="failure"}`); got != "1" {
				t.Errorf("failure count %s, want 1", got)
			}

			// Fixed again: the report clears.
			writeFile(t, path, "library:\n  disabled_rules: ["+sshRule+"]\n")
			await(t, "the fix to take effect", func() bool { return answer(t, svc, "cat ~/.ssh/id_rsa") == "allow" })
			await(t, "the report to clear", func() bool { p, _ := svc.Health(); return p == "" })
		})
	}
}

// TestConfigReloadFollowIgnoresWatchOff: a service no one restarts (the
// decision daemon, Options.Follow) follows its configuration file even
// when it says watch: false; otherwise a rule enabled again in the file
// would stay off in the daemon while in-process decisions deny.
func TestConfigReloadFollowIgnoresWatchOff(t *testing.T) {
	svc, path, _ := start(t, "watch: false\nlibrary:\n  disabled_rules: ["+sshRule+"]\n", service.Options{Lazy: true, Follow: true})
	if got := answer(t, svc, "cat ~/.ssh/id_rsa"); got != "allow" {
		t.Fatalf("with the rule disabled: %s", got)
	}
	writeFile(t, path, "watch: false\nlibrary:\n  disabled_rules: []\n")
	await(t, "the edit to take effect", func() bool { return answer(t, svc, "cat ~/.ssh/id_rsa") == "deny "+sshRule })
}

// metric reads one sample of the service's metrics.
func metric(t *testing.T, svc *service.Service, name string) string {
	t.Helper()
	families, err := svc.Metrics.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	base, labels, _ := strings.Cut(name, "{")
	for _, f := range families {
		if f.GetName() != base {
			continue
		}
		for _, m := range f.GetMetric() {
			var l []string
			for _, p := range m.GetLabel() {
				l = append(l, fmt.Sprintf("%s=%q", p.GetName(), p.GetValue()))
			}
			if strings.Join(l, ",")+"}" == labels || labels == "" && len(l) == 0 {
				return fmt.Sprint(m.GetCounter().GetValue())
			}
		}
	}
	t.Fatalf("no metric %s", name)
	return ""
}

// TestConfigReloadRestartCallback: an edit of settings that need a
// restart is handed to Options.Restart with their keys, so that the
// decision daemon, which no one restarts, can leave for a new one instead
// of deciding with hook.fail_open: true after the file says false.
func TestConfigReloadRestartCallback(t *testing.T) {
	keys := make(chan []string, 4)
	svc, path, _ := start(t, "hook:\n  fail_open: true\n", service.Options{Lazy: true, Restart: func(k []string) { keys <- k }})
	if got := answer(t, svc, "ls"); got != "allow" {
		t.Fatalf("ls: %s", got)
	}
	writeFile(t, path, "hook:\n  fail_open: false\n")
	select {
	case got := <-keys:
		if strings.Join(got, ",") != "hook.fail_open" {
			t.Errorf("restart keys %q, want hook.fail_open", got)
		}
	case <-time.After(reloadSettle):
		t.Fatal("no restart was asked for")
	}
}

// TestConfigReloadRestartKeys: settings that cannot change live are logged
// as needing a restart and keep their values; live ones in the same edit
// are applied.
func TestConfigReloadRestartKeys(t *testing.T) {
	svc, path, logs := start(t, "audit:\n  include_input: false\n", service.Options{})
	writeFile(t, path, "audit:\n  include_input: true\nhttp: 127.0.0.1:1\nshadow: ["+sshRule+"]\n")
	await(t, "the reload", func() bool { return strings.Contains(logs.String(), "configuration reloaded") })
	if !strings.Contains(logs.String(), "need a restart") {
		t.Errorf("no restart warning:\n%s", logs)
	}
	cfg := svc.Config()
	if cfg.Audit.IncludeInput || cfg.HTTP != "" {
		t.Errorf("restart-only settings changed live: include_input %v, http %q", cfg.Audit.IncludeInput, cfg.HTTP)
	}
	if len(cfg.Shadow) != 1 {
		t.Errorf("shadow %v: the live setting of the same edit was not applied", cfg.Shadow)
	}
	for _, key := range []string{"audit.include_input", "http"} {
		if !strings.Contains(logs.String(), key) {
			t.Errorf("the warning does not name %s:\n%s", key, logs)
		}
	}
}

// TestConfigReloadPolicyFails: an edit whose policy does not load keeps
// the running stack, and is reported as a failed reload.
func TestConfigReloadPolicyFails(t *testing.T) {
	dir := t.TempDir()
	broken := filepath.Join(dir, "broken.rego")
	if err := os.WriteFile(broken, []byte("package ahp.tool.before.b\n\ndeny contains \"x\" if {"), 0o600); err != nil {
		t.Fatal(err)
	}
	svc, path, _ := start(t, "eval_timeout: 2s\n", service.Options{})
	before := svc.Engine()
	writeFile(t, path, "policy: ["+broken+"]\n")
	await(t, "the failure to be reported", func() bool { p, _ := svc.Health(); return strings.Contains(p, "broken.rego") })
	if svc.Engine() != before {
		t.Error("a stack whose policy failed was swapped in")
	}
	if got := answer(t, svc, "git push --force origin main"); !strings.HasPrefix(got, "deny ") {
		t.Errorf("the built-in library no longer answers: %s", got)
	}
}

// TestReloadSwapAnswersEveryRequest: requests under way while the stack is
// swapped, again and again, all get a decision: none is refused, none
// waits for a compile, none runs on a stopped canary.
func TestReloadSwapAnswersEveryRequest(t *testing.T) {
	canary := t.TempDir()
	if err := os.WriteFile(filepath.Join(canary, "c.rego"), []byte("package ahp.tool.before.c\n\ndeny contains \"c\" if input.tool.name == \"Nope\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A compile beside the requests slows them on a small machine: the
	// deadline is not what is tested.
	docs := []string{
		"eval_timeout: 1m\ncanary: [" + canary + "]\nlibrary:\n  disabled_rules: [" + sshRule + "]\n",
		"eval_timeout: 1m\ncanary: [" + canary + "]\n",
	}
	svc, path, _ := start(t, docs[0], service.Options{Canary: true})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var bad atomic.Value
	for range 2 {
		wg.Go(func() {
			for ctx.Err() == nil {
				resp := svc.Server.Handle(context.Background(), intercept("cat ~/.ssh/id_rsa"))
				if resp == nil || resp.Error != nil {
					bad.Store(fmt.Sprintf("%+v", resp))
					return
				}
			}
		})
	}
	for i := 1; i <= 4; i++ {
		writeFile(t, path, docs[i%2])
		svc.ReloadConfig()
		want := "allow"
		if i%2 == 1 {
			want = "deny " + sshRule
		}
		if got := answer(t, svc, "cat ~/.ssh/id_rsa"); got != want {
			t.Errorf("reload %d: %s, want %s", i, got, want)
		}
	}
	cancel()
	wg.Wait()
	if v := bad.Load(); v != nil {
		t.Errorf("a request during a swap was not decided: %s", v)
	}
}

// goroutines counts the goroutines, leaving out the one os/signal starts
// on first use and keeps for the process.
func goroutines() (int, string) {
	buf := make([]byte, 1<<20)
	dump := string(buf[:runtime.Stack(buf, true)])
	n := 0
	for g := range strings.SplitSeq(dump, "\n\n") {
		if !strings.Contains(g, "os/signal.loop") {
			n++
		}
	}
	return n, dump
}

// awaitGoroutines waits for the goroutine count to come back to at most n.
func awaitGoroutines(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, dump := goroutines()
		if got <= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines left, want at most %d:\n%s", got, n, dump)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestCloseStopsEverything: after Close no goroutine of the service is
// left (reloader, watches, auditor, SIGHUP handler, canary), the audit log
// holds what was decided, and the service refuses to start again.
func TestCloseStopsEverything(t *testing.T) {
	dir := t.TempDir()
	auditLog := filepath.Join(dir, "audit.jsonl")
	canary := filepath.Join(dir, "canary")
	if err := os.Mkdir(canary, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(canary, "c.rego"), []byte("package ahp.tool.before.c\n\ndeny contains \"c\" if false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "ahp-opa.yaml")
	writeFile(t, cfgPath, "audit:\n  file: {path: "+auditLog+"}\ncanary: ["+canary+"]\n")
	src := config.Source{Path: cfgPath}
	cfg, err := src.Load()
	if err != nil {
		t.Fatal(err)
	}
	before, _ := goroutines()
	log, _ := logger()
	svc, err := service.New(context.Background(), cfg, service.Options{
		Logger: log, Watch: true, Metrics: true, AuditLog: true, DecisionLogs: true, Canary: true, Source: src,
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := answer(t, svc, "git push --force origin main"); !strings.HasPrefix(got, "deny ") {
		t.Errorf("force push: %s", got)
	}
	svc.Close()
	awaitGoroutines(t, before)
	data, err := os.ReadFile(auditLog)
	if err != nil || !strings.Contains(string(data), `"decision"`) {
		t.Errorf("audit log after Close: %v %q", err, data)
	}
	if err := svc.Start(context.Background()); !errors.Is(err, service.ErrClosed) {
		t.Errorf("Start after Close = %v, want ErrClosed", err)
	}
	if got := answer(t, svc, "ls"); !strings.HasPrefix(got, "error -32003") {
		t.Errorf("a decision after Close: %s, want unavailable", got)
	}
}

// TestStartFailure: a policy that does not load is a *PolicyError and
// leaves nothing running; lazily, the next Start tries again and succeeds
// once the policy is fixed.
func TestStartFailure(t *testing.T) {
	dir := t.TempDir()
	policy := filepath.Join(dir, "p.rego")
	if err := os.WriteFile(policy, []byte("package ahp.tool.before.p\n\ndeny contains \"x\" if {"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Policy = []string{policy}
	cfg.Audit.File.Path = filepath.Join(dir, "audit.jsonl")
	before, _ := goroutines()

	svc, err := service.New(context.Background(), cfg, service.Options{Watch: true, AuditLog: true, Metrics: true})
	var pe *service.PolicyError
	if svc != nil || !errors.As(err, &pe) || !strings.Contains(err.Error(), "p.rego") {
		t.Fatalf("New = %v, %v; want a *PolicyError naming p.rego", svc, err)
	}
	awaitGoroutines(t, before)

	lazy, err := service.New(context.Background(), cfg, service.Options{Lazy: true, AuditLog: true})
	if err != nil {
		t.Fatal(err)
	}
	defer lazy.Close()
	if err := lazy.Start(context.Background()); !errors.As(err, &pe) {
		t.Fatalf("lazy Start = %v, want a *PolicyError", err)
	}
	if err := os.WriteFile(policy, []byte("package ahp.tool.before.p\n\ndeny contains \"x\" if input.tool.name == \"P\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := lazy.Start(context.Background()); err != nil || !lazy.Ready() {
		t.Fatalf("Start after the fix = %v, ready %v", err, lazy.Ready())
	}

	// A configuration the auditor refuses fails New as well.
	bad := config.Default()
	bad.Audit.File.Path = dir // a directory
	if svc, err := service.New(context.Background(), bad, service.Options{AuditLog: true}); err == nil || svc != nil {
		t.Errorf("an audit log that is a directory: %v", err)
	}
}

// TestSources: which sources a service serves.
func TestSources(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.rego"), []byte("package ahp.tool.before.p\n\ndeny contains \"p\" if input.tool.name == \"P\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name              string
		policy            []string
		withBuiltin       bool
		builtin, userRule bool
		notice            string // the start-up line saying which policies answer
	}{
		{"nothing: the built-in library", nil, false, true, false, `level=INFO msg="policies: the built-in library only; add your own rules with --policy PATH --with-builtin" library=on`},
		{"--policy alone", []string{dir}, false, false, true, `level=WARN msg="policies: your own rules only, the built-in library is off`},
		{"--policy --with-builtin", []string{dir}, true, true, true, `level=INFO msg="policies: your own rules and the built-in library" library=on`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.Policy, cfg.WithBuiltin = c.policy, c.withBuiltin
			log, buf := logger()
			svc, err := service.New(context.Background(), cfg, service.Options{Logger: log})
			if err != nil {
				t.Fatal(err)
			}
			defer svc.Close()
			if !strings.Contains(buf.String(), c.notice) {
				t.Errorf("log lacks %s:\n%s", c.notice, buf.String())
			}
			if !c.builtin && !strings.Contains(buf.String(), "add --with-builtin") {
				t.Errorf("the warning does not say how to keep the library:\n%s", buf.String())
			}
			rules := strings.Join(svc.Engine().Snapshot().Rules, " ")
			if strings.Contains(rules, "builtin") != c.builtin || strings.Contains(rules, ".p.deny") != c.userRule {
				t.Errorf("rules %s", rules)
			}
			if st := svc.Reloader().Status(); !st.Ready() || st.Reloads[bundles.Activated] != 1 {
				t.Errorf("status %+v", st)
			}
		})
	}
}

// TestLiveKeysDocumented: docs/configuration.md lists exactly the keys a
// reload applies live.
func TestLiveKeysDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "These keys take effect live:")
	list, _, ok2 := strings.Cut(rest, ". A new decision stack")
	if !ok || !ok2 {
		t.Fatal("docs/configuration.md has no list of the keys that take effect live")
	}
	var documented []string
	for _, m := range regexp.MustCompile("`([a-z_.]+)`").FindAllStringSubmatch(list, -1) {
		documented = append(documented, m[1])
	}
	leaves, _, _ := config.Keys()
	for _, key := range leaves {
		listed := slices.ContainsFunc(documented, func(d string) bool { return key == d || strings.HasPrefix(key, d+".") })
		if listed != service.Live(key) {
			t.Errorf("key %s: documented as live %v, applied live %v", key, listed, service.Live(key))
		}
	}
}

// TestPerCallNoticeIsQuiet: a process per call (ahp-opa hook) writes to
// the agent's log, so the note on which policies answer stays at debug
// level there instead of repeating at every tool call.
func TestPerCallNoticeIsQuiet(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.rego"), []byte("package ahp.tool.before.p\n\ndeny contains \"p\" if input.tool.name == \"P\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Policy = []string{dir}
	for _, perCall := range []bool{false, true} {
		log, buf := logger()
		svc, err := service.New(context.Background(), cfg, service.Options{Logger: log, Lazy: true, PerCall: perCall})
		if err != nil {
			t.Fatal(err)
		}
		svc.Close()
		want := "level=WARN msg=\"policies: your own rules only"
		if perCall {
			want = "level=DEBUG msg=\"policies: your own rules only"
		}
		if !strings.Contains(buf.String(), want) {
			t.Errorf("PerCall %v: log lacks %s:\n%s", perCall, want, buf.String())
		}
	}
}
