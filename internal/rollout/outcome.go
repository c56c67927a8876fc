// Package rollout compares a candidate policy with the one that decided
// real traffic, before the candidate is enforced: Replay re-decides the
// tool.before events of an audit log, and Canary evaluates a second policy
// beside the live one in a running server. Both compare what a policy
// answers (its deny matches), so anything a future decision carries beside
// them, such as shadowed matches or rule errors, stays out of the diff.
package rollout

import (
	"context"
	"errors"
	"slices"

	"github.com/ahp-opa/ahp-opa/engine"
	"github.com/ahp-opa/ahp-opa/internal/audit"
	"github.com/ahp-opa/ahp-opa/transport"
)

// Judge decides one request and returns the whole verdict; *engine.Engine
// is one.
type Judge interface {
	Judge(ctx context.Context, req *transport.InterceptRequest) engine.Verdict
}

// Outcome is what a policy answered about one event, in the terms an audit
// record keeps.
type Outcome struct {
	Decision string   // audit.DecisionAllow, audit.DecisionDeny or audit.DecisionError
	Reason   string   // the reason sent, for a deny
	Codes    []string // every matched code, in match order, each once
	// Rule names the match that speaks for a deny: its code, or its
	// package when it has none; empty when nothing is known.
	Rule     string
	Revision string
}

// noCode stands for a deny whose first match carries no code; noRule for
// a change no rule made (an evaluation that failed as a whole).
const (
	noCode = "(no code)"
	noRule = "(none)"
)

// OutcomeOf reads the outcome of an evaluation. A JSON-RPC error with no
// match (an evaluation error, a deadline, no policy) is an error; a deny
// the request could not carry still counts as the policy's deny, since the
// policy is what is compared.
func OutcomeOf(d engine.Decision, err error) Outcome {
	o := Outcome{Revision: d.Revision}
	switch {
	case d.Denied():
		first := d.Matches[0]
		o.Decision, o.Reason, o.Rule = audit.DecisionDeny, first.Reason, first.Code
		if o.Rule == "" {
			o.Rule = first.Package
		}
		for _, m := range d.Matches {
			if m.Code != "" && !slices.Contains(o.Codes, m.Code) {
				o.Codes = append(o.Codes, m.Code)
			}
		}
	case err != nil:
		o.Decision = audit.DecisionError
	default:
		o.Decision = audit.DecisionAllow
	}
	return o
}

// verdictOutcome reads the outcome of a verdict.
func verdictOutcome(v engine.Verdict) Outcome {
	var err error
	if v.Err != nil {
		err = v.Err
	}
	return OutcomeOf(v.Decision, err)
}

// RecordOutcome reads what a decision record says was answered.
func RecordOutcome(r *audit.Record) Outcome {
	o := Outcome{Decision: r.Decision, Reason: r.Reason, Codes: r.Codes, Revision: r.Revision}
	if r.Decision == audit.DecisionDeny {
		o.Rule = noCode
		if len(r.Codes) > 0 {
			o.Rule = r.Codes[0]
		}
	}
	return o
}

// Change says how an outcome differs from an earlier one.
type Change string

// Changes, from the earlier outcome to the later one.
const (
	Unchanged     Change = ""
	NewlyDenied   Change = "newly_denied"    // allow or error → deny
	NewlyAllowed  Change = "newly_allowed"   // deny → allow
	ReasonChanged Change = "reason_changed"  // deny → deny with other codes or reason
	NowError      Change = "now_error"       // allow or deny → error
	NoLongerError Change = "no_longer_error" // error → allow
)

// Compare says how after differs from before.
func Compare(before, after Outcome) Change {
	switch {
	case before.Decision == after.Decision:
		if after.Decision == audit.DecisionDeny &&
			(before.Reason != after.Reason || !slices.Equal(before.Codes, after.Codes)) {
			return ReasonChanged
		}
		return Unchanged
	case after.Decision == audit.DecisionDeny:
		return NewlyDenied
	case after.Decision == audit.DecisionError:
		return NowError
	case before.Decision == audit.DecisionDeny:
		return NewlyAllowed
	default:
		return NoLongerError
	}
}

// ruleOf names the rule a change is about: the one that now denies, or
// the one that no longer does.
func ruleOf(c Change, before, after Outcome) string {
	switch c {
	case NewlyDenied, ReasonChanged:
		return after.Rule
	case NewlyAllowed:
		return before.Rule
	case NowError:
		return before.Rule
	}
	return ""
}

// reasonOf is the reason a change shows: the new one when the candidate
// denies, else the one that was sent.
func reasonOf(before, after Outcome) string {
	if after.Decision == audit.DecisionDeny {
		return after.Reason
	}
	return before.Reason
}

var errNotReady = errors.New("the candidate policy is not active yet")
