package install

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// existing is a settings file per agent as a user may already have it: a
// hook of someone else's and other settings that must survive.
var existing = map[string]string{
	"claude-code": `{
    "model": "opus",
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/local/bin/lint-bash"}]}
        ],
        "PostToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "notify"}]}]
    },
    "permissions": {"allow": ["Bash(git status)"]}
}
`,
	"codex": `{"hooks": {"PreToolUse": [{"matcher": "^Bash$", "hooks": [{"type": "command", "command": "guard.sh", "timeout": 5}]}]}}
`,
	"gemini-cli": `{
  "theme": "dark",
  "hooks": {"BeforeTool": [{"matcher": "write_file", "hooks": [{"type": "command", "command": "check-write", "name": "cw"}]}]}
}
`,
	"cursor": `{
  "version": 1,
  "hooks": {"preToolUse": [{"command": "./audit.sh", "matcher": "Shell"}], "stop": [{"command": "bye"}]}
}
`,
	"copilot": `{"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": "echo hi", "timeoutSec": 5}]}}
`,
}

// event and command key per agent, to count our entries.
var shape = map[string]struct {
	event, key string
	nested     bool
}{
	"claude-code": {"PreToolUse", "command", true},
	"codex":       {"PreToolUse", "command", true},
	"gemini-cli":  {"BeforeTool", "command", true},
	"cursor":      {"preToolUse", "command", false},
	"copilot":     {"preToolUse", "bash", false},
}

func opts(t *testing.T, agent string) Options {
	t.Helper()
	return Options{Agent: agent, Scope: Project, Project: t.TempDir(), Command: "/opt/ahp/ahp-opa-hook",
		Now: func() time.Time { return time.Date(2026, 12, 2, 18, 0, 0, 0, time.UTC) }}
}

func plant(t *testing.T, o Options, content string) string {
	t.Helper()
	p, err := Path(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o640); err != nil {
		t.Fatal(err)
	}
	return p
}

func decode(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s is not JSON after install: %v\n%s", path, err, b)
	}
	return m
}

// ours returns our handlers under the pre-tool event of a decoded
// settings file.
func ours(t *testing.T, agent string, m map[string]any) []map[string]any {
	t.Helper()
	return oursAt(t, agent, m, shape[agent].event)
}

// oursAt returns our handlers under event.
func oursAt(t *testing.T, agent string, m map[string]any, event string) []map[string]any {
	t.Helper()
	s := shape[agent]
	hooks, _ := m["hooks"].(map[string]any)
	list, _ := hooks[event].([]any)
	var found []map[string]any
	for _, it := range list {
		hs := []any{it}
		if s.nested {
			hs, _ = it.(map[string]any)["hooks"].([]any)
		}
		for _, h := range hs {
			hm := h.(map[string]any)
			if cmd, _ := hm[s.key].(string); IsOurCommand(cmd) {
				found = append(found, hm)
			}
		}
	}
	return found
}

func backups(t *testing.T, path string) []string {
	t.Helper()
	b, _ := filepath.Glob(path + ".ahp-opa-backup-*")
	return b
}

func TestInstallMergesIdempotentAndUninstalls(t *testing.T) {
	for _, agent := range []string{"claude-code", "codex", "gemini-cli", "cursor", "copilot"} {
		t.Run(agent, func(t *testing.T) {
			o := opts(t, agent)
			path := plant(t, o, existing[agent])
			var orig map[string]any
			json.Unmarshal([]byte(existing[agent]), &orig)

			res, err := Apply(o)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Changed || res.Backup == "" {
				t.Fatalf("first install: %+v", res)
			}
			if b, _ := os.ReadFile(res.Backup); string(b) != existing[agent] {
				t.Errorf("backup differs from the original")
			}
			m := decode(t, path)
			got := ours(t, agent, m)
			if len(got) != 1 {
				t.Fatalf("%d entries of ours after install, want 1", len(got))
			}
			if cmd := got[0][shape[agent].key]; cmd != "/opt/ahp/ahp-opa-hook "+agent {
				t.Errorf("command %v", cmd)
			}
			switch agent {
			case "claude-code":
				if got[0]["onFailure"] != "block" {
					t.Errorf("Claude Code fail-closed switch not set: %v", got[0])
				}
			case "cursor":
				if got[0]["failClosed"] != true {
					t.Errorf("Cursor fail-closed switch not set: %v", got[0])
				}
			}
			if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
				t.Errorf("mode changed to %04o", fi.Mode().Perm())
			}
			// Everything that was there is still there.
			for k := range orig {
				if k != "hooks" && !reflect.DeepEqual(orig[k], m[k]) {
					t.Errorf("key %q changed: %v -> %v", k, orig[k], m[k])
				}
			}
			for ev, v := range orig["hooks"].(map[string]any) {
				now := m["hooks"].(map[string]any)[ev].([]any)
				if !reflect.DeepEqual(v.([]any)[0], now[0]) {
					t.Errorf("hooks.%s first entry changed: %v -> %v", ev, v, now[0])
				}
			}

			after, _ := os.ReadFile(path)
			res2, err := Apply(o)
			if err != nil || res2.Changed || res2.Backup != "" {
				t.Fatalf("second install: %+v, %v", res2, err)
			}
			if again, _ := os.ReadFile(path); !bytes.Equal(again, after) {
				t.Error("second install rewrote the file")
			}
			if n := len(backups(t, path)); n != 1 {
				t.Errorf("%d backups after two installs, want 1", n)
			}

			o.Uninstall = true
			o.Now = func() time.Time { return time.Date(2026, 12, 2, 18, 1, 0, 0, time.UTC) }
			res3, err := Apply(o)
			if err != nil || !res3.Changed || res3.Backup == "" {
				t.Fatalf("uninstall: %+v, %v", res3, err)
			}
			if !reflect.DeepEqual(decode(t, path), orig) {
				t.Errorf("uninstall did not restore the original content:\n%s", must(os.ReadFile(path)))
			}
		})
	}
}

func must(b []byte, _ error) string { return string(b) }

func TestInstallKeepsKeyOrderAndIndent(t *testing.T) {
	o := opts(t, "claude-code")
	path := plant(t, o, existing["claude-code"])
	if _, err := Apply(o); err != nil {
		t.Fatal(err)
	}
	b := must(os.ReadFile(path))
	if !strings.HasPrefix(b, "{\n    \"model\": \"opus\",\n    \"hooks\"") || strings.Index(b, `"permissions"`) < strings.Index(b, `"hooks"`) {
		t.Errorf("order or indent lost:\n%s", b)
	}
}

func TestInstallReplacesOlderEntryOfOurs(t *testing.T) {
	o := opts(t, "claude-code")
	path := plant(t, o, `{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"ahp-opa hook claude-code"},{"type":"command","command":"other"}]}]}}`)
	if _, err := Apply(o); err != nil {
		t.Fatal(err)
	}
	m := decode(t, path)
	if got := ours(t, "claude-code", m); len(got) != 1 || got[0]["command"] != "/opt/ahp/ahp-opa-hook claude-code" {
		t.Errorf("entries of ours: %v", got)
	}
	if !strings.Contains(must(os.ReadFile(path)), `"other"`) {
		t.Error("a handler sharing the group with our old one was lost")
	}
}

func TestInstallNewFile(t *testing.T) {
	for agent := range existing {
		t.Run(agent, func(t *testing.T) {
			o := opts(t, agent)
			res, err := Apply(o)
			if err != nil || !res.Changed || res.Backup != "" {
				t.Fatalf("%+v, %v", res, err)
			}
			m := decode(t, res.Path)
			if len(ours(t, agent, m)) != 1 {
				t.Errorf("new file: %v", m)
			}
			if (agent == "cursor" || agent == "copilot") && m["version"] != float64(1) {
				t.Errorf("version missing: %v", m)
			}
			o.Uninstall = true
			if _, err := Apply(o); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestUninstallWithoutFileChangesNothing(t *testing.T) {
	o := opts(t, "codex")
	o.Uninstall = true
	res, err := Apply(o)
	if err != nil || res.Changed {
		t.Fatalf("%+v, %v", res, err)
	}
	if _, err := os.Stat(res.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("uninstall created %s", res.Path)
	}
}

// TestBackupsDoNotPileUp (issue 30): installing and uninstalling again
// and again stops adding backups once each content the file takes has
// one (the original, installed, uninstalled), and the original stays kept.
func TestBackupsDoNotPileUp(t *testing.T) {
	o := opts(t, "claude-code")
	path := plant(t, o, existing["claude-code"])
	counts := map[int]int{}
	var first string
	for i := range 8 {
		o.Uninstall = i%2 == 1
		o.Now = func() time.Time { return time.Date(2026, 12, 2, 18, i, 0, 0, time.UTC) }
		res, err := Apply(o)
		if err != nil || !res.Changed || res.Backup == "" {
			t.Fatalf("run %d: %+v, %v", i, res, err)
		}
		if i == 0 {
			first = res.Backup
		}
		counts[i] = len(backups(t, path))
	}
	if counts[3] > 3 || counts[7] != counts[3] {
		t.Errorf("backups after each run: %v; want at most 3, and none more after the second cycle", counts)
	}
	if b, _ := os.ReadFile(first); string(b) != existing["claude-code"] {
		t.Errorf("the first backup is not the original file:\n%s", b)
	}
}

// TestUninstallLeavesNoEmptyHooks (issue 30): uninstalling from a file
// install created leaves no {"hooks": {}}, while a user's own empty
// hooks object, which held nothing of ours, stays as it was.
func TestUninstallLeavesNoEmptyHooks(t *testing.T) {
	for _, agent := range []string{"claude-code", "gemini-cli", "codex", "cursor", "copilot"} {
		t.Run(agent, func(t *testing.T) {
			o := opts(t, agent)
			if _, err := Apply(o); err != nil {
				t.Fatal(err)
			}
			o.Uninstall = true
			res, err := Apply(o)
			if err != nil || !res.Changed {
				t.Fatalf("%+v, %v", res, err)
			}
			data, err := os.ReadFile(res.Path)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(data), `"hooks"`) {
				t.Errorf("after uninstall %s holds:\n%s", res.Path, data)
			}
		})
	}
	o := opts(t, "claude-code")
	path := plant(t, o, `{"hooks": {}, "model": "x"}`)
	o.Uninstall = true
	if res, err := Apply(o); err != nil || res.Changed {
		t.Fatalf("%+v, %v", res, err)
	}
	if data, _ := os.ReadFile(path); string(data) != `{"hooks": {}, "model": "x"}` {
		t.Errorf("a file with nothing of ours changed: %s", data)
	}
}

func TestUnparsableFileUntouched(t *testing.T) {
	for name, content := range map[string]string{
		"trailing comma":             `{"hooks": {},}`,
		"comments":                   "// mine\n{\"hooks\": {}}",
		"array":                      `[1,2]`,
		"duplicate key":              `{"hooks": {}, "hooks": {}}`,
		"hooks not obj":              `{"hooks": [1]}`,
		"event not list":             `{"hooks": {"PreToolUse": {"a": 1}}}`,
		"observation event not list": `{"hooks": {"SessionEnd": "x"}}`,
		"two objects":                `{} {}`,
	} {
		for _, uninstall := range []bool{false, true} {
			t.Run(name, func(t *testing.T) {
				o := opts(t, "claude-code")
				o.Uninstall = uninstall
				o.Observe = true // the observation events are ours to edit too
				path := plant(t, o, content)
				_, err := Apply(o)
				if !errors.Is(err, ErrUnparsable) {
					t.Fatalf("err = %v, want ErrUnparsable", err)
				}
				if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "nothing was changed") {
					t.Errorf("error does not say which file and that nothing changed: %v", err)
				}
				if got := must(os.ReadFile(path)); got != content {
					t.Errorf("file changed: %q", got)
				}
				if b := backups(t, path); len(b) != 0 {
					t.Errorf("backups written: %v", b)
				}
			})
		}
	}
}

func TestDryRunPrintsDiffOnly(t *testing.T) {
	o := opts(t, "cursor")
	path := plant(t, o, existing["cursor"])
	o.DryRun = true
	res, err := Apply(o)
	if err != nil || !res.Changed {
		t.Fatalf("%+v, %v", res, err)
	}
	if !strings.Contains(res.Diff, `+`) || !strings.Contains(res.Diff, "ahp-opa-hook cursor") || !strings.Contains(res.Diff, `"failClosed": true`) {
		t.Errorf("diff:\n%s", res.Diff)
	}
	if must(os.ReadFile(path)) != existing["cursor"] || len(backups(t, path)) != 0 {
		t.Error("dry run wrote")
	}
}

// TestInstallFollowsSymlink: a user's settings file linked into a
// dotfiles checkout is edited where it lives (a project's may not lead
// out of the project: TestInstallRefusesHostileFiles).
func TestInstallFollowsSymlink(t *testing.T) {
	o := opts(t, "gemini-cli")
	o.Scope, o.Home = User, t.TempDir()
	real := filepath.Join(t.TempDir(), "dotfiles-settings.json")
	os.WriteFile(real, []byte(existing["gemini-cli"]), 0o644)
	path, _ := Path(o)
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.Symlink(real, path); err != nil {
		t.Fatal(err)
	}
	if _, err := Apply(o); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(path); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the symlink was replaced by a file")
	}
	if len(ours(t, "gemini-cli", decode(t, real))) != 1 {
		t.Error("the link target was not edited")
	}
}

func TestPaths(t *testing.T) {
	for _, tc := range []struct {
		agent string
		scope Scope
		want  string
	}{
		{"claude-code", User, "/h/.claude/settings.json"},
		{"claude-code", Project, "/p/.claude/settings.json"},
		{"codex", User, "/h/.codex/hooks.json"},
		{"gemini-cli", Project, "/p/.gemini/settings.json"},
		{"cursor", User, "/h/.cursor/hooks.json"},
		{"copilot", Project, "/p/.github/hooks/ahp-opa.json"},
	} {
		got, err := Path(Options{Agent: tc.agent, Scope: tc.scope, Home: "/h", Project: "/p"})
		if err != nil || got != tc.want {
			t.Errorf("%s %s: %q, %v; want %q", tc.agent, tc.scope, got, err, tc.want)
		}
	}
	if _, err := Path(Options{Agent: "vim", Home: "/h"}); !errors.Is(err, ErrUnknownAgent) {
		t.Errorf("unknown agent: %v", err)
	}
	// The error lists the agents there are, and the one a typo meant.
	for name, want := range map[string]string{
		"claude": `unknown agent "claude": want one of claude-code, codex, copilot, cursor, gemini-cli`,
		"cursr":  `want one of claude-code, codex, copilot, cursor, gemini-cli; did you mean "cursor"?`,
	} {
		if _, err := Apply(Options{Agent: name, Home: t.TempDir()}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("unknown agent %s: %v, want %s", name, err, want)
		}
	}
}

func TestIsOurCommand(t *testing.T) {
	for cmd, want := range map[string]bool{
		"ahp-opa-hook claude-code":            true,
		"/usr/bin/ahp-opa-hook --fail-open x": true,
		"'/my dir/ahp-opa-hook' codex":        true,
		"ahp-opa hook cursor":                 true,
		"/x/ahp-opa hook --no-daemon copilot": true,
		"ahp-opa serve --stdio":               false,
		"not-ahp-opa-hook claude-code":        false,
		"echo ahp-opa-hook":                   false,
		"'unterminated":                       false,
		"":                                    false,
	} {
		if got := IsOurCommand(cmd); got != want {
			t.Errorf("IsOurCommand(%q) = %v", cmd, got)
		}
	}
}

func FuzzParseObject(f *testing.F) {
	for _, s := range existing {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := parseObject(b)
		if err != nil {
			return
		}
		out := encode(o, "  ")
		o2, err := parseObject(out)
		if err != nil {
			t.Fatalf("re-encoded object does not parse: %v\n%s", err, out)
		}
		if !bytes.Equal(encode(o2, "  "), out) {
			t.Fatal("encode is not stable")
		}
	})
}

// observed lists, per agent, the events --observe adds to the pre-tool
// one: post-tool (and its failure variant where the agent has one) and
// session start and end, as CONTRACTS.md names them.
var observed = map[string][]string{
	"claude-code": {"PostToolUse", "PostToolUseFailure", "SessionStart", "SessionEnd"},
	"codex":       {"PostToolUse", "SessionStart"}, // no failure variant, no session end
	"gemini-cli":  {"AfterTool", "SessionStart", "SessionEnd"},
	"cursor":      {"postToolUse", "postToolUseFailure", "sessionStart", "sessionEnd"},
	"copilot":     {"postToolUse", "postToolUseFailure", "sessionStart", "sessionEnd"},
}

// guarded reports whether a handler carries a fail-closed switch.
func guarded(h map[string]any) bool {
	_, onFailure := h["onFailure"]
	_, failClosed := h["failClosed"]
	return onFailure || failClosed
}

// TestObserve: --observe adds one entry per observation event next to
// what is there, without the fail-closed switch and with --fail-open;
// runs twice to the same bytes; a dry run shows it; a plain install
// leaves the observation entries alone (updating the pre-tool hook must not
// switch the audit trail off); uninstall restores the original file.
func TestObserve(t *testing.T) {
	for agent, events := range observed {
		t.Run(agent, func(t *testing.T) {
			o := opts(t, agent)
			o.Observe = true
			path := plant(t, o, existing[agent])
			var orig map[string]any
			json.Unmarshal([]byte(existing[agent]), &orig)

			dry := o
			dry.DryRun = true
			res, err := Apply(dry)
			if err != nil || !res.Changed {
				t.Fatalf("dry run: %+v, %v", res, err)
			}
			for _, ev := range events {
				if !strings.Contains(res.Diff, "+") || !strings.Contains(res.Diff, `"`+ev+`"`) {
					t.Errorf("dry-run diff does not show %s:\n%s", ev, res.Diff)
				}
			}
			if !strings.Contains(res.Diff, "ahp-opa-hook --fail-open "+agent) {
				t.Errorf("dry-run diff lacks the observation command:\n%s", res.Diff)
			}
			if must(os.ReadFile(path)) != existing[agent] || len(backups(t, path)) != 0 {
				t.Fatal("dry run wrote")
			}

			res, err = Apply(o)
			if err != nil || !res.Changed || res.Backup == "" {
				t.Fatalf("install: %+v, %v", res, err)
			}
			if want := append([]string{shape[agent].event}, events...); !reflect.DeepEqual(res.Events, want) {
				t.Errorf("events %v, want %v", res.Events, want)
			}
			if !strings.Contains(strings.Join(res.Notes, "\n"), "never block") {
				t.Errorf("notes do not say the observation hooks never block: %q", res.Notes)
			}
			m := decode(t, path)
			pre := ours(t, agent, m)
			if len(pre) != 1 || pre[0][shape[agent].key] != "/opt/ahp/ahp-opa-hook "+agent {
				t.Errorf("pre-tool entries of ours: %v", pre)
			}
			for _, ev := range events {
				got := oursAt(t, agent, m, ev)
				if len(got) != 1 {
					t.Fatalf("%s: %d entries of ours, want 1", ev, len(got))
				}
				if cmd := got[0][shape[agent].key]; cmd != "/opt/ahp/ahp-opa-hook --fail-open "+agent {
					t.Errorf("%s: command %v", ev, cmd)
				}
				if guarded(got[0]) {
					t.Errorf("%s: an observation hook with a fail-closed switch: %v", ev, got[0])
				}
			}
			for ev, v := range orig["hooks"].(map[string]any) {
				if now := m["hooks"].(map[string]any)[ev].([]any); !reflect.DeepEqual(v.([]any)[0], now[0]) {
					t.Errorf("hooks.%s first entry changed: %v -> %v", ev, v, now[0])
				}
			}

			after := must(os.ReadFile(path))
			if res, err := Apply(o); err != nil || res.Changed || must(os.ReadFile(path)) != after || len(backups(t, path)) != 1 {
				t.Fatalf("second install: %+v, %v", res, err)
			}

			plain := o
			plain.Observe = false
			plain.Now = func() time.Time { return time.Date(2026, 12, 2, 18, 1, 0, 0, time.UTC) }
			res, err = Apply(plain)
			if err != nil || res.Changed || must(os.ReadFile(path)) != after {
				t.Fatalf("install without --observe changed the file: %+v, %v", res, err)
			}
			m = decode(t, path)
			for _, ev := range events {
				if got := oursAt(t, agent, m, ev); len(got) != 1 {
					t.Errorf("%s: %d entries of ours after a plain install, want the 1 --observe wrote", ev, len(got))
				}
			}
			if len(ours(t, agent, m)) != 1 {
				t.Error("a plain install left other than one pre-tool entry")
			}

			o.Now = func() time.Time { return time.Date(2026, 12, 2, 18, 2, 0, 0, time.UTC) }
			if _, err := Apply(o); err != nil {
				t.Fatal(err)
			}
			o.Uninstall = true
			o.Now = func() time.Time { return time.Date(2026, 12, 2, 18, 3, 0, 0, time.UTC) }
			res, err = Apply(o)
			if err != nil || !res.Changed || len(res.Events) != 0 {
				t.Fatalf("uninstall: %+v, %v", res, err)
			}
			if !reflect.DeepEqual(decode(t, path), orig) {
				t.Errorf("uninstall did not restore the original content:\n%s", must(os.ReadFile(path)))
			}
		})
	}
}

// TestUninstallEveryEvent: uninstall removes our entries from every event,
// also from events install does not write (a hand-made registration), and
// only ours; a value it does not understand under such an event is left as
// it is rather than refused.
func TestUninstallEveryEvent(t *testing.T) {
	for _, tc := range []struct {
		agent, content, want string
	}{
		{"claude-code",
			`{"hooks":{"Stop":[{"matcher":"","hooks":[{"type":"command","command":"ahp-opa hook claude-code"},{"type":"command","command":"say done"}]}],` +
				`"PostToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"/x/ahp-opa-hook --fail-open claude-code"}]}],"Odd":"keep"}}`,
			`{"hooks":{"Stop":[{"matcher":"","hooks":[{"type":"command","command":"say done"}]}],"Odd":"keep"}}`},
		{"cursor",
			`{"version":1,"hooks":{"afterShellExecution":[{"command":"ahp-opa-hook cursor"},{"command":"./log.sh"}],"sessionEnd":[{"command":"ahp-opa-hook --fail-open cursor"}]}}`,
			`{"version":1,"hooks":{"afterShellExecution":[{"command":"./log.sh"}]}}`},
		{"copilot",
			`{"version":1,"hooks":{"sessionStart":[{"type":"command","bash":"'/my dir/ahp-opa-hook' copilot"}],"errorOccurred":[{"type":"command","bash":"notify"}]}}`,
			`{"version":1,"hooks":{"errorOccurred":[{"type":"command","bash":"notify"}]}}`},
	} {
		t.Run(tc.agent, func(t *testing.T) {
			o := opts(t, tc.agent)
			o.Uninstall = true
			path := plant(t, o, tc.content)
			res, err := Apply(o)
			if err != nil || !res.Changed || res.Backup == "" {
				t.Fatalf("%+v, %v", res, err)
			}
			var want map[string]any
			json.Unmarshal([]byte(tc.want), &want)
			if got := decode(t, path); !reflect.DeepEqual(got, want) {
				t.Errorf("after uninstall:\n%s\nwant %s", must(os.ReadFile(path)), tc.want)
			}
		})
	}
}

// TestObserveKeepsUsersFailOpen: a hook command that already fails open
// is not given the flag twice.
func TestObserveKeepsUsersFailOpen(t *testing.T) {
	o := opts(t, "gemini-cli")
	o.Observe = true
	o.Command = "ahp-opa hook --fail-open --config /etc/ahp.yaml"
	res, err := Apply(o)
	if err != nil {
		t.Fatal(err)
	}
	m := decode(t, res.Path)
	if got := oursAt(t, "gemini-cli", m, "AfterTool"); len(got) != 1 || got[0]["command"] != "ahp-opa hook --fail-open --config /etc/ahp.yaml gemini-cli" {
		t.Errorf("AfterTool: %v", got)
	}
}
