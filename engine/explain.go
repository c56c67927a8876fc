package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// Fired is a decision rule that produced a value while an input was
// decided: a deny rule, or a built-in library violation rule.
type Fired struct {
	// Rule is the rule's path, e.g. ahp.tool.before.builtin.violation.
	Rule     string
	Location *ast.Location
	// Title is the rule's METADATA title, if any.
	Title string
	// Value is what the rule added, e.g. {"code": …, "reason": …}.
	Value *ast.Term
	// Code is the value's code, if it has one.
	Code string
	// Suppressed is set for a violation that did not become a denial:
	// its code is disabled or the tool is exempted by configuration.
	Suppressed bool
	// Shadowed is set for a rule in shadow mode: it would deny, but is
	// not answered.
	Shadowed bool
}

// Explain decides input like Decide and also reports which decision rules
// fired, with their file and line. It traces the evaluation, which is much
// slower than Decide: it is for `ahp-opa eval --explain`, not for serving.
func (s *Snapshot) Explain(ctx context.Context, input ast.Value) (Decision, []Fired, error) {
	d, err := s.Decide(ctx, input)
	if err != nil && len(d.Errors) == 0 {
		return d, nil, err // on_rule_error=error still gets its errors explained
	}
	tr := &firedTracer{}
	if _, err := s.query.Eval(ctx, rego.EvalParsedInput(input), rego.EvalQueryTracer(tr)); err != nil {
		if len(d.Errors) > 0 {
			return d, nil, nil // a rule set halted: d.Errors says which
		}
		return d, nil, &EvalError{Err: err}
	}
	annotations := s.Compiler.GetAnnotationSet()
	denied := map[string]bool{}
	for _, m := range d.Matches {
		denied[m.Code] = true
	}
	for _, m := range d.Shadowed {
		denied[m.Code] = true // shadowed, not suppressed
	}
	var fired []Fired
	seen := map[string]bool{}
	for _, ev := range tr.exits() {
		f := Fired{
			Rule:     strings.TrimPrefix(ev.rule.Ref().String(), "data."),
			Location: ev.rule.Location,
			Value:    ev.value,
		}
		if ev.rule.Module != nil {
			f.Rule = strings.TrimPrefix(ev.rule.Module.Package.Path.Extend(ev.rule.Head.Ref()).String(), "data.")
		}
		if obj, ok := ev.value.Value.(ast.Object); ok {
			f.Code, _ = termString(obj.Get(ast.InternedTerm("code")))
		}
		if annotations != nil {
			for _, a := range annotations.GetRuleScope(ev.rule) {
				f.Title = a.Title
			}
		}
		f.Suppressed = strings.HasSuffix(f.Rule, ".violation") && !denied[f.Code]
		if pkg, _, ok := strings.Cut(f.Rule, "."+ev.rule.Head.Name.String()); ok {
			f.Shadowed = s.shadow.match(Match{Package: pkg, Code: f.Code})
		}
		key := fmt.Sprintf("%s\x00%s", f.Location, f.Value)
		if seen[key] {
			continue
		}
		seen[key] = true
		fired = append(fired, f)
	}
	slices.SortFunc(fired, func(a, b Fired) int {
		if c := strings.Compare(a.Location.File, b.Location.File); c != 0 {
			return c
		}
		return a.Location.Row - b.Location.Row
	})
	return d, fired, nil
}

// builtinPackage is the package of the built-in library's rules.
var builtinPackage = ast.MustParseRef("data.ahp.tool.before.builtin")

type exit struct {
	rule  *ast.Rule
	value *ast.Term
}

// firedTracer records the rules at or below DecisionRoot named deny or
// violation each time one of their bodies succeeds, with the value the
// body gave the rule's head.
type firedTracer struct {
	mu    sync.Mutex
	found []exit
}

func (t *firedTracer) Enabled() bool { return true }

func (t *firedTracer) Config() topdown.TraceConfig {
	return topdown.TraceConfig{PlugLocalVars: true}
}

func (t *firedTracer) TraceEvent(ev topdown.Event) {
	if ev.Op != topdown.ExitOp {
		return
	}
	rule, ok := ev.Node.(*ast.Rule)
	if !ok || rule.Module == nil || rule.Head.Key == nil {
		return
	}
	path := rule.Module.Package.Path
	name := rule.Head.Name.String()
	if !path.HasPrefix(DecisionRoot) || (name != "deny" && name != "violation") {
		return
	}
	if name == "deny" && path.Equal(builtinPackage) {
		return // the library's collector: its violations are listed instead
	}
	value := plug(rule.Head.Key, ev.Locals)
	t.mu.Lock()
	t.found = append(t.found, exit{rule: rule, value: value})
	t.mu.Unlock()
}

func (t *firedTracer) exits() []exit {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.found)
}

// plug replaces the variables of a rule head with their values.
func plug(term *ast.Term, locals *ast.ValueMap) *ast.Term {
	if locals == nil {
		return term
	}
	out, err := ast.TransformVars(term.Copy(), func(v ast.Var) (ast.Value, error) {
		if val := locals.Get(v); val != nil {
			return val, nil
		}
		return v, nil
	})
	if err != nil {
		return term
	}
	if t, ok := out.(*ast.Term); ok {
		return t
	}
	return term
}
