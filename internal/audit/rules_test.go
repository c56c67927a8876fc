package audit

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ahp-opa/ahp-opa/engine"
	"github.com/ahp-opa/ahp-opa/transport"
)

// judgeFunc is a Judge that returns one verdict.
type judgeFunc func(*transport.InterceptRequest) engine.Verdict

func (f judgeFunc) Judge(_ context.Context, req *transport.InterceptRequest) engine.Verdict {
	return f(req)
}

func TestDecisionRecordsRuleOutcomes(t *testing.T) {
	const token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	many := make([]engine.Match, 40)
	for i := range many {
		many[i] = engine.Match{Package: "ahp.tool.before.many", Code: fmt.Sprintf("com.example.c%02d", i), Reason: "r"}
	}
	tests := []struct {
		name  string
		d     engine.Decision
		check func(t *testing.T, r Record)
	}{
		{name: "rule error, masked", d: engine.Decision{
			Matches: []engine.Match{{Package: "ahp.tool.before.team", Code: engine.CodeRuleError, Reason: "policy error in team.rego:3 (to_number): denied by on_rule_error=deny"}},
			Errors: []engine.RuleError{{Rule: "ahp.tool.before.team.deny", Location: "team.rego:3", Builtin: "to_number",
				Message: `to_number: parsing "GITHUB_TOKEN=` + token + `"`}},
		}, check: func(t *testing.T, r Record) {
			if len(r.RuleErrors) != 1 || r.RuleErrors[0].Location != "team.rego:3" || r.RuleErrors[0].Builtin != "to_number" {
				t.Errorf("rule_errors %+v", r.RuleErrors)
			}
			if strings.Contains(fmt.Sprint(r), token) {
				t.Errorf("token in the record: %+v", r)
			}
		}},
		{name: "would deny", d: engine.Decision{
			Shadowed: []engine.Match{{Package: "ahp.tool.before.builtin", Code: "dev.ahp-opa.git.force-push", Reason: "no force push"}},
		}, check: func(t *testing.T, r Record) {
			if r.Decision != DecisionAllow || len(r.WouldDeny) != 1 || r.WouldDeny[0].Code != "dev.ahp-opa.git.force-push" || r.WouldDeny[0].Reason != "no force push" {
				t.Errorf("record %+v, want allow with one would_deny", r)
			}
		}},
		{name: "codes capped", d: engine.Decision{Matches: many}, check: func(t *testing.T, r Record) {
			if len(r.Codes) != engine.MaxListedMatches || r.CodesTruncated != 40-engine.MaxListedMatches {
				t.Errorf("%d codes, %d truncated", len(r.Codes), r.CodesTruncated)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &memWriter{}
			a := newAuditor(t, Config{}, w)
			judge := judgeFunc(func(*transport.InterceptRequest) engine.Verdict {
				v := engine.Verdict{Decision: tt.d, Result: transport.NewResult()}
				if tt.d.Denied() {
					v.Result = transport.NewResult(tt.d.Effect())
				}
				return v
			})
			if _, err := a.Interceptor(judge).Intercept(context.Background(), newReq("e1", "Bash", "ls")); err != nil {
				t.Fatal(err)
			}
			flush(t, a)
			if len(w.recs) != 1 {
				t.Fatalf("records %v", w.kinds())
			}
			tt.check(t, w.recs[0])
		})
	}
}
