package engine

import (
	"cmp"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/internal/redact"
	"github.com/ahp-opa/ahp-opa/transport"
	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// ExtensionKey is the reverse-DNS key under which a deny effect carries the
// matched rules and the policy revision.
const ExtensionKey = "dev.ahp-opa"

// MaxReasonBytes bounds a deny reason: it is shown to a model and a user,
// and a policy that interpolates input must not flood them.
const MaxReasonBytes = 1024

// Decision is what the policy said about one event.
type Decision struct {
	// Matches holds every deny, in deterministic order: a team's own
	// packages before the built-in library's, then by package, code and
	// reason. The first one speaks for the decision.
	Matches  []Match
	Revision string
	// Errors are the deny rule sets that failed for this event, shadowed
	// ones included; on_rule_error decided what they mean for Matches.
	Errors []RuleError
	// Shadowed holds the denies of rules in shadow mode: what the policy
	// would deny, never answered.
	Shadowed []Match
}

// MaxListedMatches bounds the matches a deny effect lists in its
// extensions, and the codes an audit record keeps: a rule that returns
// thousands of elements must not flood the harness or the log.
const MaxListedMatches = 32

// Denied reports whether any rule denied the event.
func (d Decision) Denied() bool { return len(d.Matches) > 0 }

// Approvable reports whether a human may approve the call: it is denied,
// and by approvable matches only. One forbidding match, a malformed one
// or a rule error keeps it a plain deny.
func (d Decision) Approvable() bool {
	if len(d.Matches) == 0 {
		return false
	}
	for _, m := range d.Matches {
		if !m.Approvable || m.Malformed != "" {
			return false
		}
	}
	return true
}

// ApprovalNote ends the reason of an approvable deny where the agent has
// no prompt of its own to ask the user with.
const ApprovalNote = "A person may approve this: ask the user to run it or to allow it."

// Match is one element of a deny set.
type Match struct {
	Package string `json:"package"`
	Code    string `json:"code,omitempty"`
	Reason  string `json:"-"`
	// Malformed says what was wrong with the element, if anything. A
	// malformed deny still denies: a typo in a rule must not turn into an
	// allow at a fail-open harness.
	Malformed string `json:"-"`
	// Approvable marks an act a human may approve rather than a forbidden
	// one: the element's "approvable": true, or its rule's METADATA
	// custom.approvable.
	Approvable bool `json:"approvable,omitempty"`
}

// newMatch reads a deny element: a reason string, or an object with a
// reason and an optional reverse-DNS code.
func newMatch(pkg string, v ast.Value) Match {
	m := Match{Package: pkg}
	switch v := v.(type) {
	case ast.String:
		m.Reason = string(v)
	case ast.Object:
		if r, ok := termString(v.Get(ast.InternedTerm("reason"))); ok {
			m.Reason = r
		} else {
			m.Malformed = "deny object has no string reason"
		}
		if t := v.Get(ast.InternedTerm("code")); t != nil {
			c, ok := termString(t)
			if ok && transport.IsReverseDNS(c) {
				m.Code = c
			} else {
				m.Malformed = "deny code is not a reverse-DNS string"
			}
		}
		if t := v.Get(ast.InternedTerm("approvable")); t != nil {
			b, ok := t.Value.(ast.Boolean)
			m.Approvable = ok && bool(b)
		}
	default:
		m.Malformed = "deny element is neither a string nor an object"
	}
	if m.Reason == "" {
		if m.Malformed == "" {
			m.Malformed = "deny reason is empty"
		}
		m.Reason = fmt.Sprintf("Blocked by policy %s.", pkg)
	}
	// Reasons name what triggered a rule; a secret in it is masked
	// before the reason reaches the agent, a log or an audit record.
	m.Reason = truncate(redact.Default().String(m.Reason), MaxReasonBytes)
	return m
}

func termString(t *ast.Term) (string, bool) {
	if t == nil {
		return "", false
	}
	s, ok := t.Value.(ast.String)
	return string(s), ok
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const ellipsis = "…"
	cut := n - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}

// denyDetails is the extension a deny effect carries.
type denyDetails struct {
	Revision string  `json:"revision"`
	Rules    []Match `json:"rules"`
	// Truncated counts the matches left out of Rules.
	Truncated int `json:"truncated,omitempty"`
	// RuleErrors names the rules that failed (file:row and builtin).
	RuleErrors []string `json:"rule_errors,omitempty"`
	// Approvable says a human may approve the call (Decision.Approvable).
	Approvable bool `json:"approvable,omitempty"`
}

// Effect returns the deny effect for a decision that denies: the first
// match's reason and code, with every match and the revision in its
// extensions (B-EFF-5: one deny, whatever the number of matches).
func (d Decision) Effect() transport.Effect {
	first := d.Matches[0]
	details := denyDetails{Revision: d.Revision, Rules: d.Matches}
	if n := len(d.Matches); n > MaxListedMatches {
		details.Rules, details.Truncated = d.Matches[:MaxListedMatches], n-MaxListedMatches
	}
	for _, e := range d.Errors {
		if !e.Shadow && len(details.RuleErrors) < MaxListedMatches {
			details.RuleErrors = append(details.RuleErrors, e.Where())
		}
	}
	ext := map[string]any{ExtensionKey: details}
	reason := first.Reason
	if d.Approvable() {
		details.Approvable = true
		ext[ExtensionKey] = details
		ext[ahp.ExtensionApprovable] = true
		reason = truncate(reason, MaxReasonBytes-len(ApprovalNote)-1) + " " + ApprovalNote
	}
	return transport.Effect{
		Type:       ahp.EffectDeny,
		Reason:     reason,
		Code:       first.Code,
		Extensions: ext,
	}
}

// compareMatches orders matches so that a team's own rules speak before
// the built-in library: a rule a team wrote for its case says more than
// the library's general one about the same call.
func compareMatches(a, b Match) int {
	return cmp.Or(
		cmp.Compare(fromLibrary(a.Package), fromLibrary(b.Package)),
		cmp.Compare(a.Package, b.Package),
		cmp.Compare(a.Code, b.Code),
		cmp.Compare(a.Reason, b.Reason),
	)
}

// libraryPackage is the package path, without "data.", of the built-in
// library's deny set.
const libraryPackage = "ahp.tool.before.builtin"

// fromLibrary gives 1 for a package of the built-in library, 0 otherwise,
// so that it sorts after every other.
func fromLibrary(pkg string) int {
	if pkg == libraryPackage || strings.HasPrefix(pkg, libraryPackage+".") {
		return 1
	}
	return 0
}
