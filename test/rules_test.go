package test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// teamPolicy fails on every command that is not a number: the user rule
// of issue #10, next to the built-in library.
const teamPolicy = `package ahp.tool.before.team

deny contains "command is a large number" if to_number(input.tool.input.command) > 10
`

// TestRuleErrorIsolation drives the binary: a user rule that fails never
// removes a built-in deny, on_rule_error decides what the failure means,
// shadowed denies are recorded and not answered, and the token in the
// failing input reaches neither the debug log nor the audit log.
func TestRuleErrorIsolation(t *testing.T) {
	t.Parallel()
	const token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	forcePush := "GITHUB_TOKEN=" + token + " git push --force origin main"
	dir := t.TempDir()
	team := writeFile(t, dir, "rules/team.rego", teamPolicy)
	type exchange struct {
		command string
		code    string // the deny's code; "" for no objection; "error" for -32004
	}
	tests := []struct {
		name      string
		args      []string
		exchanges []exchange
		audit     []string // substrings of the audit log
	}{
		{name: "on_rule_error=deny (default)", exchanges: []exchange{
			{forcePush, "dev.ahp-opa.git.force-push"},
			{"rm -rf /", "dev.ahp-opa.fs.rm-recursive-critical"},
			{"ls", "dev.ahp-opa.policy-error"},
		}, audit: []string{`"rule_errors":[{"rule":"ahp.tool.before.team.deny","location":"` + team + `:3","builtin":"to_number"`}},
		{name: "on_rule_error=ignore with a shadowed built-in rule", args: []string{"--on-rule-error", "ignore", "--shadow", "dev.ahp-opa.git.force-push"},
			exchanges: []exchange{
				{forcePush, ""},
				{"rm -rf /", "dev.ahp-opa.fs.rm-recursive-critical"},
				{"ls", ""},
			}, audit: []string{`"would_deny":[{"package":"ahp.tool.before.builtin","code":"dev.ahp-opa.git.force-push"`}},
		{name: "on_rule_error=error", args: []string{"--on-rule-error", "error"}, exchanges: []exchange{
			{forcePush, "error"},
		}, audit: []string{`"decision":"error"`, `"rule_errors":[{"rule":"ahp.tool.before.team.deny"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			auditLog := filepath.Join(t.TempDir(), "audit.jsonl")
			args := append([]string{"--with-builtin", "--policy", team, "--log-level", "debug", "--log-format", "json",
				"--audit-log", auditLog}, tt.args...)
			p := startServe(t, args...)
			for i, ex := range tt.exchanges {
				id := "evt-" + string(rune('a'+i))
				r := p.roundTrip(t, interceptLine(id, ex.command))
				wantID(t, r, id)
				switch ex.code {
				case "":
					wantNoObjection(t, r)
				case "error":
					wantError(t, r, -32004)
				default:
					if d := wantDeny(t, r); d != nil && d["code"] != ex.code {
						t.Errorf("%q: deny code %v, want %s: %s", ex.command, d["code"], ex.code, r.line)
					}
				}
				if strings.Contains(r.line, token) {
					t.Errorf("the token reached the reply: %s", r.line)
				}
			}
			p.expectCleanExit(t)
			stderr := p.stderr.String()
			if !strings.Contains(stderr, `"msg":"policy rule failed"`) || !strings.Contains(stderr, "[REDACTED]") {
				t.Errorf("the debug log does not report the masked rule error:\n%s", stderr)
			}
			if strings.Contains(stderr, token) {
				t.Errorf("the token reached the log:\n%s", stderr)
			}
			b, err := os.ReadFile(auditLog)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), token) {
				t.Errorf("the token reached the audit log:\n%s", b)
			}
			for _, want := range tt.audit {
				if !strings.Contains(string(b), want) {
					t.Errorf("audit log lacks %s:\n%s", want, b)
				}
			}
		})
	}
}
