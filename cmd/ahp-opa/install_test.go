package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ahp-opa/ahp-opa/internal/adapters"
	"github.com/ahp-opa/ahp-opa/internal/audit"
	"github.com/ahp-opa/ahp-opa/internal/install"
)

func runInstall(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := installCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

func TestInstallCommand(t *testing.T) {
	proj := t.TempDir()
	settings := filepath.Join(proj, ".cursor", "hooks.json")
	base := []string{"cursor", "--scope", "project", "--project", proj, "--hook-cmd", "/bin/ahp-opa-hook"}

	out, err := runInstall(t, append(base, "--dry-run")...)
	if err != nil || !strings.Contains(out, "+") || !strings.Contains(out, "dry run") {
		t.Fatalf("dry run: %q, %v", out, err)
	}
	if _, err := os.Stat(settings); err == nil {
		t.Fatal("dry run wrote the settings file")
	}
	if out, err = runInstall(t, base...); err != nil || !strings.Contains(out, "installed in "+settings) {
		t.Fatalf("install: %q, %v", out, err)
	}
	if out, err = runInstall(t, base...); err != nil || !strings.Contains(out, "already installed") {
		t.Fatalf("second install: %q, %v", out, err)
	}
	if out, err = runInstall(t, append(base, "--uninstall")...); err != nil || !strings.Contains(out, "removed from") {
		t.Fatalf("uninstall: %q, %v", out, err)
	}
	if b, _ := os.ReadFile(settings); strings.Contains(string(b), "ahp-opa-hook") {
		t.Errorf("entry left after uninstall: %s", b)
	}

	os.WriteFile(settings, []byte("{nope"), 0o644)
	if _, err := runInstall(t, base...); err == nil || !strings.Contains(err.Error(), "cannot be parsed") {
		t.Errorf("unparsable file: %v", err)
	}
	if b, _ := os.ReadFile(settings); string(b) != "{nope" {
		t.Errorf("unparsable file changed: %q", b)
	}
	if _, err := runInstall(t, "vim", "--scope", "project", "--project", proj); err == nil {
		t.Error("unknown agent accepted")
	}
	if out, err := runInstall(t, "--help"); err != nil || !strings.Contains(out, "--observe") || !strings.Contains(out, "never block") {
		t.Errorf("--help does not explain --observe: %v\n%s", err, out)
	}
}

// registered returns the hook commands of ours under event in a settings
// file, whatever the agent's shape (nested groups or a flat list, command
// or bash).
func registered(t *testing.T, settings []byte, event string) []string {
	t.Helper()
	var doc struct {
		Hooks map[string][]map[string]any `json:"hooks"`
	}
	if err := json.Unmarshal(settings, &doc); err != nil {
		t.Fatalf("settings: %v\n%s", err, settings)
	}
	var cmds []string
	for _, item := range doc.Hooks[event] {
		handlers := []any{item}
		if nested, ok := item["hooks"].([]any); ok {
			handlers = nested
		}
		for _, h := range handlers {
			hm, _ := h.(map[string]any)
			for _, key := range []string{"command", "bash"} {
				if c, _ := hm[key].(string); install.IsOurCommand(c) {
					cmds = append(cmds, c)
				}
			}
		}
	}
	return cmds
}

// TestInstallObserveAudits: after 'install AGENT --observe', the command
// registered for each observation event answers that event's fixture
// payloads with "{}" at exit 0 and nothing on stderr, and each becomes an
// observation in the audit log. Every event install registers has a
// fixture, so the event names are the ones the agents send.
func TestInstallObserveAudits(t *testing.T) {
	dir, fixtures := hookFixtures(t)
	for _, agent := range adapters.Names {
		t.Run(agent, func(t *testing.T) {
			proj := t.TempDir()
			auditPath := filepath.Join(proj, "audit.jsonl")
			cfg := filepath.Join(proj, "c.yaml")
			if err := os.WriteFile(cfg, []byte("audit:\n  file:\n    path: "+auditPath+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			out, err := runInstall(t, agent, "--observe", "--scope", "project", "--project", proj, "--hook-cmd", "ahp-opa hook --config "+cfg)
			if err != nil {
				t.Fatalf("install: %v\n%s", err, out)
			}
			path, err := install.Path(install.Options{Agent: agent, Scope: install.Project, Project: proj})
			if err != nil {
				t.Fatal(err)
			}
			settings, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			events := strings.Split(strings.TrimPrefix(lineWith(t, out, "events: "), "events: "), ", ")
			if len(events) < 3 {
				t.Fatalf("events %v: the observation hooks are missing\n%s", events, out)
			}
			want := map[string]int{}
			for _, event := range events[1:] { // events[0] is the pre-tool hook
				cmds := registered(t, settings, event)
				if len(cmds) != 1 {
					t.Fatalf("%s: commands of ours %q, want one", event, cmds)
				}
				args := strings.Fields(cmds[0])
				if len(args) < 3 || args[0] != "ahp-opa" || args[1] != "hook" {
					t.Fatalf("%s: registered %q", event, cmds[0])
				}
				n := 0
				for _, f := range fixtures {
					if f.Kind != "input" || f.Agent != agent || f.Event != event {
						continue
					}
					n++
					payload, err := os.ReadFile(filepath.Join(dir, f.File))
					if err != nil {
						t.Fatal(err)
					}
					stdout, stderr, exit := runHookCommand(t, string(payload), args[2:]...)
					if stdout != "{}\n" || stderr != "" || exit != 0 {
						t.Errorf("%s: stdout %q stderr %q exit %d, want {} and exit 0", f.File, stdout, stderr, exit)
					}
					ev, err := adapters.Parse(agent, payload, time.Now())
					if err != nil {
						t.Fatal(err)
					}
					want[audit.KindObservation+" "+ev.Type+" "+adapters.SourcePrefix+agent]++
				}
				if n == 0 {
					t.Errorf("install registers %s, for which the fixtures have no payload", event)
				}
			}
			if got := auditCounts(t, auditPath); !sameCounts(got, want) {
				t.Errorf("audit records %v, want %v", got, want)
			}
		})
	}
}

// lineWith returns the first line of out that starts with prefix.
func lineWith(t *testing.T, out, prefix string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	t.Fatalf("no line starting with %q in\n%s", prefix, out)
	return ""
}

// TestInstallAgentTimeout: the timeout registered with the agent follows
// the hook command's own --timeout, and a given one below it is written
// with a warning on stderr.
func TestInstallAgentTimeout(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		want    string // the codex handler's timeout
		warning bool
	}{
		{"hook's --timeout 20s", []string{"--hook-cmd", "ahp-opa-hook --timeout 20s"}, `"timeout": 21`, false},
		{"default hook", []string{"--hook-cmd", "/bin/ahp-opa-hook"}, `"timeout": 10`, false},
		{"--agent-timeout below", []string{"--hook-cmd", "ahp-opa-hook --timeout 20s", "--agent-timeout", "12s"}, `"timeout": 12`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proj := t.TempDir()
			cmd := installCommand()
			var out, serr bytes.Buffer
			cmd.SetOut(&out)
			cmd.SetErr(&serr)
			cmd.SetArgs(append([]string{"codex", "--scope", "project", "--project", proj}, tc.args...))
			if err := cmd.Execute(); err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(filepath.Join(proj, ".codex", "hooks.json"))
			if !strings.Contains(string(b), tc.want) {
				t.Errorf("settings %s, want %s", b, tc.want)
			}
			want := ""
			if tc.warning {
				want = "warning: the agent timeout 12s is not above the hook's own deadline 20s plus 1s: when the hook needs its whole time the agent kills it first and Codex runs the call\n"
			}
			if serr.String() != want {
				t.Errorf("stderr %q, want %q", serr.String(), want)
			}
		})
	}
}
