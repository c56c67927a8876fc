package test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-opa/ahp-opa/internal/testkit"
)

// dangerPolicy denies the tool named Danger and nothing else.
const dangerPolicy = `package ahp.tool.before.t

deny contains {"reason": "no", "code": "com.example.t"} if input.tool.name == "Danger"
`

// writeFile writes content under dir and returns the path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func dangerEvent(id string) map[string]any {
	ev := testkit.ShellEvent(id, "irrelevant")
	with(ev, "tool.name", "Danger")
	with(ev, "tool.kind", "other")
	with(ev, "tool.input", map[string]any{"target": "everything"})
	return ev
}

// checkDangerPolicy runs the decisions the Danger policy implies.
func checkDangerPolicy(t *testing.T, p *proc) {
	t.Helper()
	r := p.roundTrip(t, encode(interceptMsg("evt-d1", dangerEvent("evt-d1"), "deny")))
	wantID(t, r, "evt-d1")
	if d := wantDeny(t, r); d != nil {
		if d["reason"] != "no" || d["code"] != "com.example.t" {
			t.Errorf("deny reason/code = %v/%v, want no/com.example.t: %s", d["reason"], d["code"], r.line)
		}
	}
	// The built-in library is not loaded next to a --policy.
	r = p.roundTrip(t, interceptLine("evt-d2", "git push --force"))
	wantID(t, r, "evt-d2")
	wantNoObjection(t, r)
	// B-INT-6: the policy denies, deny is not advertised → an error.
	r = p.roundTrip(t, encode(interceptMsg("evt-d3", dangerEvent("evt-d3"))))
	wantID(t, r, "evt-d3")
	if !r.isError || (r.code != -32602 && r.code != -32004) {
		t.Errorf("unadvertised deny: want -32602 or -32004, got %s", r.line)
	}
}

// TestPolicyFlag serves a policy given with --policy, as a file and as a
// directory.
func TestPolicyFlag(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := writeFile(t, dir, "danger.rego", dangerPolicy)
	t.Run("file", func(t *testing.T) {
		p := startServe(t, "--policy", file)
		checkDangerPolicy(t, p)
		p.expectCleanExit(t)
	})
	t.Run("directory", func(t *testing.T) {
		p := startServe(t, "--policy", dir)
		checkDangerPolicy(t, p)
		p.expectCleanExit(t)
	})
	t.Run("config file", func(t *testing.T) {
		cfg := writeFile(t, t.TempDir(), "ahp-opa.yaml", "policy:\n  - "+file+"\nlog_level: debug\n")
		p := startServe(t, "--config", cfg)
		checkDangerPolicy(t, p)
		p.expectCleanExit(t)
	})
}

// TestBadStartup: a broken policy or configuration stops the process with
// a non-zero status, a message on stderr and nothing on stdout (B-STDIO-2).
func TestBadStartup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cases := []struct {
		name string
		args []string
	}{
		{"syntax error", []string{"--policy", writeFile(t, dir, "broken/p.rego", "package ahp.tool.before.x\n\ndeny contains if {\n")}},
		{"no deny rule", []string{"--policy", writeFile(t, dir, "nodeny/p.rego", "package ahp.tool.before.x\n\nallow := true\n")}},
		{"missing path", []string{"--policy", filepath.Join(dir, "does-not-exist.rego")}},
		{"misspelt config key", []string{"--config", writeFile(t, dir, "bad.yaml", "log_levle: debug\n")}},
		{"bad log level", []string{"--log-level", "loud"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res := runOnce(t, interceptLine("evt-x", "ls")+"\n", append([]string{"serve", "--stdio"}, c.args...)...)
			if res.status == 0 {
				t.Errorf("exit status 0, want non-zero")
			}
			if len(res.lines) != 0 || res.partial != "" {
				t.Errorf("stdout not empty: %q %q", res.lines, res.partial)
			}
			if strings.TrimSpace(res.stderr) == "" {
				t.Errorf("no message on stderr")
			}
		})
	}
}

// evalRun runs `ahp-opa eval` and returns stdout as one string.
func evalRun(t *testing.T, stdin string, args ...string) (stdout string, res onceResult) {
	t.Helper()
	res = runOnce(t, stdin, append([]string{"eval"}, args...)...)
	out := strings.Join(res.lines, "\n")
	if res.partial != "" {
		out += "\n" + res.partial
	}
	return out, res
}

// compactReply turns eval's (pretty-printed) output into one reply line.
func compactReply(t *testing.T, out string) *reply {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(out)); err != nil {
		t.Fatalf("eval output is not one JSON value: %v\n%s", err, out)
	}
	return mustReply(t, buf.String())
}

// TestEval: eval prints the response for an event or a request file and
// exits 0 for a result, 1 for an error response or bad input.
func TestEval(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	policy := writeFile(t, dir, "danger.rego", dangerPolicy)
	eventFile := writeFile(t, dir, "event.json", encode(testkit.ShellEvent("evt-e1", "git push --force")))
	prettyEvent, _ := json.MarshalIndent(testkit.ShellEvent("evt-e2", "git status"), "", "  ")
	prettyFile := writeFile(t, dir, "pretty.json", string(prettyEvent))
	requestFile := writeFile(t, dir, "request.json", interceptLine("evt-e3", "rm -rf ~"))
	dangerFile := writeFile(t, dir, "danger.json", encode(dangerEvent("evt-e4")))
	afterFile := writeFile(t, dir, "after.json", encode(with(testkit.ShellEvent("evt-e5", "ls"), "type", "tool.after")))
	oldFile := writeFile(t, dir, "old.json", encode(with(denyRequest("evt-e6", "ls"), "params.protocolVersion", "0.1")))
	notJSON := writeFile(t, dir, "garbage.json", "not json at all\n")
	notification := writeFile(t, dir, "observe.json", encode(observeMsg(sessionEndEvent("evt-e7"))))

	results := []struct {
		name  string
		stdin string
		args  []string
		id    string
		deny  bool
	}{
		{"event file denied", "", []string{eventFile}, "evt-e1", true},
		{"pretty event file allowed", "", []string{prettyFile}, "evt-e2", false},
		{"request file denied", "", []string{requestFile}, "evt-e3", true},
		{"event on stdin", encode(testkit.ShellEvent("evt-e8", "git push --force")), []string{"-"}, "evt-e8", true},
		{"--policy denies Danger", "", []string{"--policy", policy, dangerFile}, "evt-e4", true},
		{"--policy ignores git push", "", []string{"--policy", policy, eventFile}, "evt-e1", false},
	}
	for _, c := range results {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out, res := evalRun(t, c.stdin, c.args...)
			if res.status != 0 {
				t.Errorf("exit status %d, want 0\nstdout:\n%s\nstderr:\n%s", res.status, out, res.stderr)
			}
			r := compactReply(t, out)
			wantID(t, r, c.id)
			if c.deny {
				wantDeny(t, r)
			} else {
				wantNoObjection(t, r)
			}
		})
	}

	errorsOut := []struct {
		name string
		args []string
		code int64
	}{
		{"unsupported event type", []string{afterFile}, -32002},
		{"unsupported version", []string{oldFile}, -32001},
	}
	for _, c := range errorsOut {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out, res := evalRun(t, "", c.args...)
			if res.status != 1 {
				t.Errorf("exit status %d, want 1", res.status)
			}
			wantError(t, compactReply(t, out), c.code)
		})
	}

	failures := []struct {
		name string
		args []string
	}{
		{"not JSON", []string{notJSON}},
		{"missing file", []string{filepath.Join(dir, "nope.json")}},
		{"notification", []string{notification}},
	}
	for _, c := range failures {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out, res := evalRun(t, "", c.args...)
			if res.status != 1 {
				t.Errorf("exit status %d, want 1\nstdout:\n%s", res.status, out)
			}
			if strings.TrimSpace(res.stderr) == "" {
				t.Errorf("no message on stderr")
			}
		})
	}
}

// TestVersion: version names the protocol version and exits 0.
func TestVersion(t *testing.T) {
	t.Parallel()
	res := runOnce(t, "", "version")
	out := strings.Join(res.lines, "\n")
	if res.status != 0 {
		t.Errorf("exit status %d", res.status)
	}
	if !strings.Contains(out, "draft") {
		t.Errorf("version output does not name protocol draft:\n%s", out)
	}
}

// TestEvalExplainNamesPolicies (issue 30): eval --explain says which
// policies answered and how to change it, a team's rule speaks before the
// library's, both are listed, and no INFO log is mixed into the
// explanation.
func TestEvalExplainNamesPolicies(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "mine/tf.rego", `package ahp.tool.before.myteam

deny contains {"reason": "Team rule: no terraform destroy.", "code": "com.example.tf"} if {
	contains(input.tool.input.command, "terraform destroy")
}
`)
	event := writeFile(t, dir, "event.json", encode(testkit.ShellEvent("evt-t1", "terraform destroy -auto-approve")))
	cases := []struct {
		name     string
		args     []string
		event    string // default: terraform destroy
		code     string
		want     []string
		wantNone []string
	}{
		{name: "--policy alone warns", args: []string{"--policy", filepath.Join(dir, "mine")}, code: "com.example.tf",
			want: []string{"the built-in library is off", "add --with-builtin"}},
		{name: "team rule first, library listed", args: []string{"--policy", filepath.Join(dir, "mine"), "--with-builtin"}, code: "com.example.tf",
			want:     []string{"policies: your own rules and the built-in library", "ahp.tool.before.myteam.deny com.example.tf", "dev.ahp-opa.infra.teardown"},
			wantNone: []string{"library is off"}},
		{name: "library alone", code: "dev.ahp-opa.infra.teardown",
			want: []string{"policies: the built-in library only"}},
		// A deny with no effect recognised must not read "effects: none".
		{name: "deny without effects", event: "../examples/events/no-verify.json", code: "dev.ahp-opa.git.no-verify",
			want: []string{"effects: none recognised in the effects table"}, wantNone: []string{"effects: none\n"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ev := event
			if c.event != "" {
				ev = c.event
			}
			out, res := evalRun(t, "", append(append([]string{"--explain"}, c.args...), ev)...)
			if got := compactReply(t, out); len(got.effects) != 1 || got.effects[0]["code"] != c.code {
				t.Errorf("answer %s, want a deny by %s", out, c.code)
			}
			for _, w := range c.want {
				if !strings.Contains(res.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, res.stderr)
				}
			}
			for _, w := range append(c.wantNone, `"level":"INFO"`, "level=INFO") {
				if strings.Contains(res.stderr, w) {
					t.Errorf("stderr has %q:\n%s", w, res.stderr)
				}
			}
		})
	}
}
