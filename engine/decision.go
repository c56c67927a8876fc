package engine

import (
	"fmt"
	"unicode/utf8"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/transport"
)

// ExtensionKey is the reverse-DNS key under which a deny effect carries the
// matched rules and the policy revision.
const ExtensionKey = "dev.ahp-opa"

// MaxReasonBytes bounds a deny reason: it is shown to a model and a user,
// and a policy that interpolates input must not flood them.
const MaxReasonBytes = 1024

// Decision is what the policy said about one event.
type Decision struct {
	// Matches holds every deny, in deterministic order: by package, then
	// code, then reason. The first one speaks for the decision.
	Matches  []Match
	Revision string
}

// Denied reports whether any rule denied the event.
func (d Decision) Denied() bool { return len(d.Matches) > 0 }

// Match is one element of a deny set.
type Match struct {
	Package string `json:"package"`
	Code    string `json:"code,omitempty"`
	Reason  string `json:"-"`
	// Malformed says what was wrong with the element, if anything. A
	// malformed deny still denies: a typo in a rule must not turn into an
	// allow at a fail-open harness.
	Malformed string `json:"-"`
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
	default:
		m.Malformed = "deny element is neither a string nor an object"
	}
	if m.Reason == "" {
		if m.Malformed == "" {
			m.Malformed = "deny reason is empty"
		}
		m.Reason = fmt.Sprintf("Blocked by policy %s.", pkg)
	}
	m.Reason = truncate(m.Reason, MaxReasonBytes)
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
}

// Effect returns the deny effect for a decision that denies: the first
// match's reason and code, with every match and the revision in its
// extensions (B-EFF-5: one deny, whatever the number of matches).
func (d Decision) Effect() transport.Effect {
	first := d.Matches[0]
	return transport.Effect{
		Type:   transport.EffectDeny,
		Reason: first.Reason,
		Code:   first.Code,
		Extensions: map[string]any{
			ExtensionKey: denyDetails{Revision: d.Revision, Rules: d.Matches},
		},
	}
}
