package test

import (
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-opa/ahp-opa/internal/testkit"
)

// TestServeRefusesAuditLogThatIsNotOne: `serve --audit-log DIR` (a
// directory by mistake) used to rename the directory away; now it, and
// every other non-log, is refused at startup and left as it was.
func TestServeRefusesAuditLogThatIsNotOne(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string) string
		want  string // PATH stands for the audit path
	}{
		{"a directory", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "logs")
			os.Mkdir(p, 0o755)
			os.WriteFile(filepath.Join(p, "syslog"), []byte("precious\n"), 0o644)
			return p
		}, "audit log PATH: not an ahp-opa audit log: it is a directory"},
		{"someone's file", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "notes.txt")
			os.WriteFile(p, []byte("my notes\n"), 0o644)
			return p
		}, "audit log PATH: not an ahp-opa audit log: its first line is not an audit record"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := c.setup(t, dir)
			before := testkit.SnapshotTree(t, dir)
			cmd := exec.Command(binPath, "serve", "--http", "127.0.0.1:0", "--audit-log", path)
			cmd.Env = childEnv()
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("exit = %v, want status 1\n%s", err, out)
			}
			if want := strings.ReplaceAll(c.want, "PATH", path); !strings.Contains(string(out), want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
			testkit.AssertSameTree(t, before, testkit.SnapshotTree(t, dir))
		})
	}
}

// TestServeAuditStdoutClosed: audit records go to stdout and its reader
// goes away (`| head`, a crashed collector). The process neither dies of
// SIGPIPE nor changes its answers; the loss is logged and shown on
// /healthz. With audit.required the decision becomes -32003.
func TestServeAuditStdoutClosed(t *testing.T) {
	t.Parallel()
	for _, required := range []bool{false, true} {
		name := "default"
		var env []string
		if required {
			name, env = "required", []string{"AHP_OPA_AUDIT__REQUIRED=true"}
		}
		t.Run(name, func(t *testing.T) {
			hs := startHTTPServe(t, env, "--audit-log", "-")
			if err := hs.closeStdout(); err != nil {
				t.Fatal(err)
			}
			c := &http.Client{}
			defer c.CloseIdleConnections()
			r := hsDo(t, c, "POST", hs.base+"/ahp", "", "application/json", interceptLine("p1", "git push --force origin main"))
			switch {
			case r.status != 200:
				t.Fatalf("status %d: %s", r.status, r.body)
			case required && !strings.Contains(r.body, `"code":-32003`):
				t.Errorf("required: %s, want -32003", r.body)
			case !required && !strings.Contains(r.body, `"type":"deny"`):
				t.Errorf("answer changed by a closed audit stdout: %s", r.body)
			}
			hs.waitLog(t, "audit records are being lost")
			h := hsDo(t, c, "GET", hs.base+"/healthz", "", "", "")
			if h.status != 200 || !strings.HasPrefix(h.body, "ok; degraded: audit log failing since ") || !strings.Contains(h.body, "broken pipe") {
				t.Errorf("/healthz = %d %q, want 200 and the broken pipe", h.status, h.body)
			}
			rd := hsDo(t, c, "GET", hs.base+"/readyz", "", "", "")
			if wantStatus := map[bool]int{false: 200, true: 503}[required]; rd.status != wantStatus {
				t.Errorf("/readyz = %d %q, want %d", rd.status, rd.body, wantStatus)
			}
			select {
			case <-hs.exited:
				t.Fatalf("the process ended: %v\n%s", hs.waitErr, hs.stderr.String())
			default:
			}
		})
	}
}

// TestServeRefusesAuditStdoutWithStdio: with --stdio, stdout carries the
// protocol; audit records there would corrupt it.
func TestServeRefusesAuditStdoutWithStdio(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(binPath, "serve", "--stdio", "--audit-log", "-")
	cmd.Env = childEnv()
	out, err := cmd.CombinedOutput()
	want := `configuration: audit.file.path "-" (standard output) cannot be used with --stdio, whose stdout carries the protocol`
	if err == nil || !strings.Contains(string(out), want) {
		t.Errorf("serve --stdio --audit-log -: %v\n%s\nwant %s", err, out, want)
	}
}
