package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/topdown"

	"github.com/ahp-opa/ahp-opa/bundles"
	"github.com/ahp-opa/ahp-opa/internal/effects"
	"github.com/ahp-opa/ahp-opa/internal/enrich"
	"github.com/ahp-opa/ahp-opa/internal/suggest"
)

// DecisionRoot is where decision rules live: the event type tool.before read
// as a package path. Every `deny` set rule in this package or below it
// contributes to the decision.
var DecisionRoot = ast.MustParseRef("data.ahp.tool.before")

// ErrNoDenyRules is returned for a policy that could never deny: most likely
// its package name is misspelt, and serving it would let everything through.
var ErrNoDenyRules = errors.New("policy defines no deny rule in or below package ahp.tool.before")

// Snapshot is one compiled policy, immutable once built.
type Snapshot struct {
	Revision string
	// Rules are the deny rules the decision collects, e.g.
	// "ahp.tool.before.builtin.deny", in evaluation order.
	Rules    []string
	Compiler *ast.Compiler
	Built    time.Time

	// query evaluates every deny rule set at once, with builtin errors
	// collected rather than fatal: the fast path when nothing fails.
	query   rego.PreparedEvalQuery
	domains []domain // one per deny rule set, in the order of Rules
	shadow  shadowSet
	spans   map[string][]codeSpan // the rules with a code, by file
	// onRuleError is what a failed rule means for the event.
	onRuleError OnRuleError
	// needs are the parts of input.ahp the policy reads: the only ones
	// an event is enriched with.
	needs enrich.Parts
	// effects is the built-in effects table extended by the policy's
	// data.ahp_opa.config.effects; nil when the policy has no team rows.
	effects *effects.Matcher
	// approvable holds the codes whose rules say, in METADATA
	// custom.approvable, that a human may approve what they deny.
	approvable map[string]bool
}

// Needs returns the parts of input.ahp the policy reads.
func (s *Snapshot) Needs() enrich.Parts { return s.needs }

// domain is one failure domain: a deny rule set (all `deny` rules of one
// package) with queries of its own, so that when one set fails the others
// still decide. They are prepared with the snapshot (about 1 ms a set),
// not on first failure, which would spend the event's deadline on it.
type domain struct {
	rule     string                 // e.g. ahp.tool.before.myteam.deny
	pkg      string                 // e.g. ahp.tool.before.myteam
	variable string                 // its variable in the combined query
	strict   rego.PreparedEvalQuery // any error fails it
	lenient  rego.PreparedEvalQuery // builtin errors leave expressions undefined
}

// CompileOptions configure Compile.
type CompileOptions struct {
	// Capabilities limits the builtins policies may call; nil means
	// DefaultCapabilities.
	Capabilities *ast.Capabilities
	// OnRuleError is what a deny rule that fails to evaluate means for
	// the event; "" means RuleErrorDeny.
	OnRuleError OnRuleError
	// Shadow lists rules in shadow mode: deny codes and packages. They are
	// evaluated but never answered. METADATA `custom: {mode: shadow}` adds
	// to them.
	Shadow []string
}

// Compile builds a snapshot from p with opts. Compilation errors carry
// file:line.
func Compile(ctx context.Context, p *bundles.Policy, opts CompileOptions) (*Snapshot, error) {
	caps := opts.Capabilities
	if caps == nil {
		caps = DefaultCapabilities()
	}
	onErr, err := ParseOnRuleError(string(opts.OnRuleError))
	if err != nil {
		return nil, err
	}
	c := ast.NewCompiler().WithCapabilities(caps).WithEnablePrintStatements(false)
	c.Compile(p.Modules)
	if c.Failed() {
		return nil, fmt.Errorf("compiling policy: %w", c.Errors)
	}
	refs, err := denyRules(c)
	if err != nil {
		return nil, err
	}
	s := &Snapshot{Revision: p.Revision, Compiler: c, Built: time.Now(), onRuleError: onErr, needs: enrich.Needed(c.Modules)}
	data := p.Data
	if data == nil {
		data = map[string]any{}
	}
	// A team's rows are compiled with the snapshot, so one with a typo
	// fails the load with a message rather than protect nothing. Without
	// them s.effects stays nil and enrich uses the built-in table,
	// compiled once per process when an event first needs it: a policy
	// that never reads input.ahp.effects no longer pays for it at every
	// start (it was a third of a per_event start's CPU).
	if team := teamEffects(data); team != nil {
		if s.effects, err = effects.WithTeam(team); err != nil {
			return nil, err
		}
	}
	s.approvable = approvableCodes(c)
	store := inmem.NewFromObject(data)
	prepare := func(body ast.Body, strict bool) (rego.PreparedEvalQuery, error) {
		return rego.New(
			rego.ParsedQuery(body),
			rego.Compiler(c),
			rego.Store(store),
			rego.StrictBuiltinErrors(strict),
			// Keep results as AST terms: the decision reads them directly,
			// with no round trip through Go maps.
			rego.GenerateJSON(func(t *ast.Term, _ *rego.EvalContext) (any, error) { return t, nil }),
		).PrepareForEval(ctx)
	}
	body := make(ast.Body, 0, len(refs))
	for i, ref := range refs {
		d := domain{
			rule:     strings.TrimPrefix(ref.String(), "data."),
			pkg:      strings.TrimPrefix(ref[:len(ref)-1].String(), "data."),
			variable: fmt.Sprintf("deny%d", i),
		}
		one := ast.NewBody(ast.Equality.Expr(ast.VarTerm("deny"), ast.NewTerm(ref)))
		if d.strict, err = prepare(one, true); err != nil {
			return nil, fmt.Errorf("preparing %s: %w", d.rule, err)
		}
		if d.lenient, err = prepare(one, false); err != nil {
			return nil, fmt.Errorf("preparing %s: %w", d.rule, err)
		}
		body = append(body, ast.Equality.Expr(ast.VarTerm(d.variable), ast.NewTerm(ref)))
		s.domains = append(s.domains, d)
		s.Rules = append(s.Rules, d.rule)
	}
	s.spans = codeSpans(c)
	if s.shadow, err = buildShadow(c, s.domains, opts.Shadow); err != nil {
		return nil, fmt.Errorf("shadow: %w", err)
	}
	if s.query, err = prepare(body, false); err != nil {
		return nil, fmt.Errorf("preparing policy query: %w", err)
	}
	return s, nil
}

// denyRules returns the refs of every deny rule at or below DecisionRoot,
// sorted, and rejects a deny that is not a set rule: only `deny contains`
// can collect several reasons, and only it is defined when nothing matches.
func denyRules(c *ast.Compiler) ([]ast.Ref, error) {
	seen := map[string]ast.Ref{}
	var errs ast.Errors
	for _, name := range slices.Sorted(maps.Keys(c.Modules)) {
		for _, rule := range c.Modules[name].Rules {
			path := rule.Path()
			if !path.HasPrefix(DecisionRoot) || !path[len(path)-1].Equal(ast.StringTerm("deny")) {
				continue
			}
			if rule.Head.RuleKind() != ast.MultiValue {
				errs = append(errs, ast.NewError(ast.CompileErr, rule.Location,
					"deny must be a set rule (`deny contains reason if { ... }`)"))
				continue
			}
			seen[path.String()] = path
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("compiling policy: %w", errs)
	}
	if len(seen) == 0 {
		return nil, noDenyRules(c)
	}
	refs := make([]ast.Ref, 0, len(seen))
	for _, k := range slices.Sorted(maps.Keys(seen)) {
		refs = append(refs, seen[k])
	}
	return refs, nil
}

// noDenyRules is ErrNoDenyRules naming the packages the policy does
// define, with the likely intended one: a misspelt package is the usual
// cause, and the bare error leaves the user to find which.
func noDenyRules(c *ast.Compiler) error {
	withDeny, others := map[string]bool{}, map[string]bool{}
	for _, m := range c.Modules {
		pkg := strings.TrimPrefix(m.Package.Path.String(), "data.")
		others[pkg] = true
		for _, r := range m.Rules {
			if path := r.Path(); path[len(path)-1].Equal(ast.StringTerm("deny")) {
				withDeny[pkg] = true
			}
		}
	}
	root := strings.TrimPrefix(DecisionRoot.String(), "data.")
	list := func(pkgs map[string]bool) string {
		names := slices.Sorted(maps.Keys(pkgs))
		if len(names) > 5 {
			names = append(names[:5], fmt.Sprintf("and %d more", len(names)-5))
		}
		return strings.Join(names, ", ")
	}
	if len(withDeny) == 0 {
		return fmt.Errorf("%w: no rule is named deny (packages found: %s)", ErrNoDenyRules, list(others))
	}
	hint := ""
	n := len(DecisionRoot) - 1 // the root's segments, without data
	for _, pkg := range slices.Sorted(maps.Keys(withDeny)) {
		// Compare the segments that should have been the root (as many,
		// one fewer for a lost dot, one more for an extra one): a typo
		// there is what moved the package out of it.
		segs := strings.Split(pkg, ".")
		for _, k := range []int{n, n - 1, n + 1} {
			if k > len(segs) || hint != "" {
				continue
			}
			if suggest.Nearest(strings.Join(segs[:k], "."), []string{root}) != "" {
				hint = fmt.Sprintf("; did you mean package %s?", strings.Join(append([]string{root}, segs[k:]...), "."))
			}
		}
	}
	return fmt.Errorf("%w: deny is defined in %s%s", ErrNoDenyRules, list(withDeny), hint)
}

// Decide evaluates input, the tool.before event as an AST value.
//
// One query evaluates every deny rule set. When a builtin fails in it, or
// it halts (a conflict: a complete rule or object key with two values),
// each rule set is evaluated again on its own: strictly, to learn which
// one failed, and for a failed one leniently too, so that the denies its
// other rules make still count. A lenient pass can only add denies (a
// `not` over a failed expression succeeds), never hide one from another
// rule set, which is the safe direction.
func (s *Snapshot) Decide(ctx context.Context, input ast.Value) (Decision, error) {
	d := Decision{Revision: s.Revision}
	var failed []topdown.Error
	rs, err := s.query.Eval(ctx, rego.EvalParsedInput(input), rego.EvalBuiltinErrorList(&failed))
	switch {
	case err == nil && len(failed) == 0:
		if len(rs) != 1 {
			return d, &EvalError{Err: fmt.Errorf("query returned %d results, want 1", len(rs))}
		}
		for i := range s.domains {
			if err := s.collect(&d, i, rs[0].Bindings[s.domains[i].variable]); err != nil {
				return d, err
			}
		}
	case ctx.Err() != nil:
		return d, contextError(ctx)
	default:
		if err := s.isolate(ctx, input, &d); err != nil {
			return d, err
		}
	}
	slices.SortFunc(d.Matches, compareMatches)
	return d, s.settle(&d)
}

// isolate evaluates each deny rule set on its own, recording the ones
// that fail in d.Errors.
func (s *Snapshot) isolate(ctx context.Context, input ast.Value, d *Decision) error {
	for i := range s.domains {
		dom := &s.domains[i]
		rs, err := dom.strict.Eval(ctx, rego.EvalParsedInput(input))
		if err == nil && len(rs) == 1 {
			if err := s.collect(d, i, rs[0].Bindings["deny"]); err != nil {
				return err
			}
			continue
		}
		if ctx.Err() != nil {
			return contextError(ctx)
		}
		if err == nil {
			err = fmt.Errorf("query returned %d results, want 1", len(rs))
		}
		d.Errors = append(d.Errors, s.ruleError(dom, err))
		var ignored []topdown.Error
		rs, err = dom.lenient.Eval(ctx, rego.EvalParsedInput(input), rego.EvalBuiltinErrorList(&ignored))
		switch {
		case err == nil && len(rs) == 1:
			if err := s.collect(d, i, rs[0].Bindings["deny"]); err != nil {
				return err
			}
		case ctx.Err() != nil:
			return contextError(ctx)
		}
	}
	return nil
}

// collect adds the elements of domain i's deny set, v, to d.
func (s *Snapshot) collect(d *Decision, i int, v any) error {
	t, _ := v.(*ast.Term)
	if t == nil {
		return &EvalError{Err: fmt.Errorf("%s has no value", s.domains[i].rule)}
	}
	set, ok := t.Value.(ast.Set)
	if !ok {
		return &EvalError{Err: fmt.Errorf("%s is not a set", s.domains[i].rule)}
	}
	set.Foreach(func(el *ast.Term) {
		m := newMatch(s.domains[i].pkg, el.Value)
		m.Approvable = m.Approvable || m.Code != "" && s.approvable[m.Code]
		d.Matches = append(d.Matches, m)
	})
	return nil
}

// contextError is the error for an evaluation its context stopped.
func contextError(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return ErrTimeout
	}
	return fmt.Errorf("evaluation abandoned: %w", ctx.Err()) // the caller went away
}

// EvalError is a failure raised while evaluating the policy, such as a
// builtin error under strict mode. Its text may quote input values: log it
// only where inputs may be logged.
type EvalError struct{ Err error }

func (e *EvalError) Error() string { return "evaluating policy: " + e.Err.Error() }
func (e *EvalError) Unwrap() error { return e.Err }

// teamEffects returns the policy's data.ahp_opa.config.effects, nil when
// it has none.
func teamEffects(data map[string]any) any {
	var doc any = data
	for _, k := range append(slices.Clone(bundles.LibraryConfigPath), "effects") {
		m, ok := doc.(map[string]any)
		if !ok {
			return nil
		}
		doc = m[k]
	}
	return doc
}

// approvableCodes returns the codes of the deny rules annotated with
// METADATA `custom: {approvable: true}`.
func approvableCodes(c *ast.Compiler) map[string]bool {
	out := map[string]bool{}
	as := c.GetAnnotationSet()
	if as == nil {
		return out
	}
	for _, ar := range as.Flatten() {
		if ok, _ := ar.Annotations.Custom["approvable"].(bool); !ok {
			continue
		}
		if r := ar.GetRule(); r != nil {
			if code := ruleCode(c, r); code != "" {
				out[code] = true
			}
		}
	}
	return out
}
