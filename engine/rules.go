package engine

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"

	"github.com/ahp-opa/ahp-opa/internal/redact"
	"github.com/ahp-opa/ahp-opa/internal/suggest"
)

// This file is the layer between what the rules produced and what the
// event is answered: which rule failed, which rule only watches (shadow
// mode), and what both mean for the answer. Evaluation (snapshot.go)
// reports; settle decides.

// OnRuleError says what a deny rule that fails to evaluate means for the
// event. Whatever it says, the other rules still decide and their denies
// stand.
type OnRuleError string

const (
	// RuleErrorDeny denies the event with a reason that names the failing
	// rule: the safe default, since the failing rule might have denied.
	RuleErrorDeny OnRuleError = "deny"
	// RuleErrorIgnore lets the failing rule contribute nothing.
	RuleErrorIgnore OnRuleError = "ignore"
	// RuleErrorFail answers the request with an internal error (-32004),
	// and the harness applies its own failure policy.
	RuleErrorFail OnRuleError = "error"
)

// ParseOnRuleError reads an on_rule_error value; "" is the default, deny.
func ParseOnRuleError(s string) (OnRuleError, error) {
	switch v := OnRuleError(s); v {
	case "":
		return RuleErrorDeny, nil
	case RuleErrorDeny, RuleErrorIgnore, RuleErrorFail:
		return v, nil
	}
	return "", fmt.Errorf("on_rule_error %q: want deny, ignore or error", s)
}

// CodeRuleError is the code of the deny that on_rule_error=deny adds.
const CodeRuleError = "dev.ahp-opa.policy-error"

// maxErrorMessage bounds the text kept from one evaluation error.
const maxErrorMessage = 512

// RuleError is a failure domain (one deny rule set: one package's deny)
// that could not be evaluated for an event.
type RuleError struct {
	// Rule is the failing deny rule set, e.g. ahp.tool.before.myteam.deny.
	Rule    string `json:"rule"`
	Package string `json:"-"`
	// Location is file:row of the expression that failed, when known.
	Location string `json:"location,omitempty"`
	// Builtin is the builtin that failed (to_number), or the OPA error
	// code for a failure that is not a builtin's (eval_conflict_error).
	Builtin string `json:"builtin,omitempty"`
	// Message is OPA's message, secrets masked. It may quote other input.
	Message string `json:"message"`
	// Code is the code of the rule whose body failed, when that rule has
	// one: a shadowed code shadows its errors too.
	Code string `json:"code,omitempty"`
	// Shadow is set when the failing rule is in shadow mode: the error is
	// reported but does not change the answer.
	Shadow bool `json:"shadow,omitempty"`
}

// Where names the failure for a reason or a log: "team.rego:12 (to_number)".
func (e RuleError) Where() string {
	at := e.Location
	if at == "" {
		at = e.Rule
	}
	if e.Builtin == "" {
		return at
	}
	return at + " (" + e.Builtin + ")"
}

// DenyReason is the reason of the deny on_rule_error=deny adds. It names
// the rule and never quotes the input.
func (e RuleError) DenyReason() string {
	return "policy error in " + e.Where() + ": denied by on_rule_error=deny"
}

func (e RuleError) Error() string { return "policy error in " + e.Where() + ": " + e.Message }

// ruleError describes err, raised while evaluating domain d.
func (s *Snapshot) ruleError(d *domain, err error) RuleError {
	re := RuleError{Rule: d.rule, Package: d.pkg, Message: err.Error()}
	var te *topdown.Error
	if errors.As(err, &te) {
		re.Message = te.Message
		if loc := te.Location; loc != nil {
			re.Location = fmt.Sprintf("%s:%d", loc.File, loc.Row)
			for _, sp := range s.spans[loc.File] {
				if sp.from <= loc.Row && loc.Row <= sp.to {
					re.Code = sp.code
				}
			}
		}
		re.Builtin = te.Code
		if te.Code == topdown.BuiltinErr || te.Code == topdown.TypeErr {
			if name, _, ok := strings.Cut(te.Message, ": "); ok && !strings.ContainsAny(name, " \t") {
				re.Builtin = name
			}
		}
	}
	re.Message = truncate(redact.Default().String(re.Message), maxErrorMessage)
	return re
}

// shadowSet is what runs in shadow mode: deny codes and the packages of
// deny rule sets (a package shadows the packages below it).
type shadowSet struct {
	codes map[string]bool
	pkgs  map[string]bool // domain packages, already expanded
}

func (s shadowSet) match(m Match) bool {
	return s.pkgs[m.Package] || m.Code != "" && s.codes[m.Code]
}

// settle turns what the rules produced into the decision: shadowed
// matches become would-deny, and failed rules get the treatment
// on_rule_error asks for. Real denies always come first, so the deny a
// rule made speaks before a policy error.
func (s *Snapshot) settle(d *Decision) error {
	if len(s.shadow.codes)+len(s.shadow.pkgs) > 0 {
		kept := d.Matches[:0]
		for _, m := range d.Matches {
			if s.shadow.match(m) {
				d.Shadowed = append(d.Shadowed, m)
			} else {
				kept = append(kept, m)
			}
		}
		d.Matches = kept
	}
	var live []RuleError
	for i := range d.Errors {
		e := &d.Errors[i]
		e.Shadow = s.shadow.pkgs[e.Package] || e.Code != "" && s.shadow.codes[e.Code]
		if !d.Errors[i].Shadow {
			live = append(live, d.Errors[i])
		}
	}
	if len(live) == 0 {
		return nil
	}
	switch s.onRuleError {
	case RuleErrorFail:
		return &EvalError{Err: live[0]}
	case RuleErrorDeny:
		for _, e := range live {
			d.Matches = append(d.Matches, Match{Package: e.Package, Code: CodeRuleError, Reason: e.DenyReason()})
		}
	}
	return nil
}

// ruleIDs lists what the policy offers to shadow: deny codes (from rule
// heads and METADATA custom.code) and the packages at or above a deny
// rule set, below DecisionRoot.
func ruleIDs(c *ast.Compiler, domains []domain) (codes, pkgs map[string]bool) {
	codes, pkgs = map[string]bool{}, map[string]bool{}
	root := strings.TrimPrefix(DecisionRoot.String(), "data.")
	for _, d := range domains {
		for p := d.pkg; p != root && strings.HasPrefix(p, root); p = p[:strings.LastIndexByte(p, '.')] {
			pkgs[p] = true
		}
	}
	for _, mod := range c.Modules {
		for _, r := range mod.Rules {
			if r.Module != nil && r.Module.Package.Path.HasPrefix(DecisionRoot) {
				if code := ruleCode(c, r); code != "" {
					codes[code] = true
				}
			}
		}
	}
	return codes, pkgs
}

// codeSpan is the rows of a rule that denies with a code.
type codeSpan struct {
	from, to int
	code     string
}

// codeSpans maps each file to the rows of its rules that have a code, so
// that an error's location names the rule it happened in.
func codeSpans(c *ast.Compiler) map[string][]codeSpan {
	spans := map[string][]codeSpan{}
	for _, mod := range c.Modules {
		if !mod.Package.Path.HasPrefix(DecisionRoot) {
			continue
		}
		for _, r := range mod.Rules {
			code := ruleCode(c, r)
			if code == "" || r.Location == nil {
				continue
			}
			loc := r.Location
			spans[loc.File] = append(spans[loc.File], codeSpan{from: loc.Row, to: loc.Row + bytes.Count(loc.Text, []byte("\n")), code: code})
		}
	}
	return spans
}

// ruleCode is the code a rule denies with: the literal "code" of its head
// object, or its METADATA custom.code.
func ruleCode(c *ast.Compiler, r *ast.Rule) string {
	if r.Head.Key != nil {
		if obj, ok := r.Head.Key.Value.(ast.Object); ok {
			if code, ok := termString(obj.Get(ast.InternedTerm("code"))); ok {
				return code
			}
		}
	}
	if as := c.GetAnnotationSet(); as != nil {
		for _, a := range as.GetRuleScope(r) {
			if code, ok := a.Custom["code"].(string); ok {
				return code
			}
		}
	}
	return ""
}

// buildShadow resolves the configured shadow ids and the METADATA
// `custom: {mode: shadow}` annotations into the set settle uses. An id
// the policy does not know is an error naming the nearest known one: a
// typo must not leave a rule enforced that its author meant to watch.
func buildShadow(c *ast.Compiler, domains []domain, ids []string) (shadowSet, error) {
	codes, pkgs := ruleIDs(c, domains)
	want := map[string]bool{}
	var errs []string
	for _, id := range ids {
		id = strings.TrimPrefix(strings.TrimSpace(id), "data.")
		if !codes[id] && !pkgs[id] {
			known := slices.Sorted(maps.Keys(codes))
			known = append(known, slices.Sorted(maps.Keys(pkgs))...)
			msg := fmt.Sprintf("unknown shadow id %q: not a deny code or a package of the policy", id)
			errs = append(errs, msg+suggest.DidYouMean(id, known))
			continue
		}
		want[id] = true
	}
	if as := c.GetAnnotationSet(); as != nil {
		for _, ar := range as.Flatten() {
			if mode, _ := ar.Annotations.Custom["mode"].(string); mode != "shadow" {
				continue
			}
			if r := ar.GetRule(); r != nil {
				code := ruleCode(c, r)
				if code == "" {
					errs = append(errs, fmt.Sprintf("%s: a rule in shadow mode needs a code (in its head or custom.code); or annotate its package", r.Location))
					continue
				}
				want[code] = true
				continue
			}
			if p := ar.GetPackage(); p != nil {
				want[strings.TrimPrefix(p.Path.String(), "data.")] = true
			}
		}
	}
	if len(errs) > 0 {
		return shadowSet{}, errors.New(strings.Join(errs, "; "))
	}
	s := shadowSet{codes: map[string]bool{}, pkgs: map[string]bool{}}
	for id := range want {
		if codes[id] {
			s.codes[id] = true
		}
	}
	for _, d := range domains {
		for id := range want {
			if d.pkg == id || strings.HasPrefix(d.pkg, id+".") {
				s.pkgs[d.pkg] = true
			}
		}
	}
	return s, nil
}

// maxLoggedErrors bounds the distinct rule errors logged per policy: the
// messages quote input, so a rule failing on every event would otherwise
// log every event. The metric keeps counting past it.
const maxLoggedErrors = 256

// errorLog remembers which rule errors were logged, so each rule and
// distinct message is logged once per active policy.
type errorLog struct {
	mu   sync.Mutex
	seen map[string]bool
	full bool
}

// first reports whether key is new, and whether the table just filled.
func (l *errorLog) first(key string) (isNew, filled bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen[key] || l.full {
		return false, false
	}
	if len(l.seen) >= maxLoggedErrors {
		l.full = true
		return false, true
	}
	if l.seen == nil {
		l.seen = map[string]bool{}
	}
	l.seen[key] = true
	return true, false
}

func (l *errorLog) reset() {
	l.mu.Lock()
	l.seen, l.full = nil, false
	l.mu.Unlock()
}

// report makes what the rule layer found visible: each rule error (logged
// once per rule and message, always counted) and each shadowed deny
// (logged at info as would_deny, counted).
func (e *Engine) report(ctx context.Context, log *slog.Logger, d Decision) {
	for _, re := range d.Errors {
		if e.opts.Counter != nil {
			e.opts.Counter.RuleError(re.Rule)
		}
		isNew, filled := e.reported.first(re.Rule + "\x00" + re.Where() + "\x00" + re.Message)
		switch {
		case isNew:
			log.WarnContext(ctx, "policy rule failed", "rule", re.Rule, "at", re.Where(),
				"err", re.Message, "shadow", re.Shadow, "on_rule_error", string(e.currentOnRuleError()))
		case filled:
			log.WarnContext(ctx, "too many distinct policy rule errors: further ones are only counted", "limit", maxLoggedErrors)
		}
	}
	for _, m := range d.Shadowed {
		rule := cmp.Or(m.Code, m.Package)
		if e.opts.Counter != nil {
			e.opts.Counter.ShadowDeny(rule)
		}
		log.InfoContext(ctx, "would_deny", "rule", rule, "package", m.Package, "reason", m.Reason)
	}
}

func (e *Engine) currentOnRuleError() OnRuleError {
	if s := e.current.Load(); s != nil {
		return s.onRuleError
	}
	return e.opts.OnRuleError
}
