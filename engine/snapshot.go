package engine

import (
	"cmp"
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

	"github.com/ahp-opa/ahp-opa/bundles"
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

	query rego.PreparedEvalQuery
	vars  []string // the query variable bound to each of Rules
	pkgs  []string // the package of each of Rules
}

// Compile builds a snapshot from p. Compilation errors carry file:line.
func Compile(ctx context.Context, p *bundles.Policy, caps *ast.Capabilities) (*Snapshot, error) {
	if caps == nil {
		caps = DefaultCapabilities()
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
	s := &Snapshot{Revision: p.Revision, Compiler: c, Built: time.Now()}
	body := make(ast.Body, 0, len(refs))
	for i, ref := range refs {
		v := fmt.Sprintf("deny%d", i)
		body = append(body, ast.Equality.Expr(ast.VarTerm(v), ast.NewTerm(ref)))
		s.vars = append(s.vars, v)
		pkg := ref[:len(ref)-1]
		s.pkgs = append(s.pkgs, strings.TrimPrefix(pkg.String(), "data."))
		s.Rules = append(s.Rules, strings.TrimPrefix(ref.String(), "data."))
	}
	data := p.Data
	if data == nil {
		data = map[string]any{}
	}
	r := rego.New(
		rego.ParsedQuery(body),
		rego.Compiler(c),
		rego.Store(inmem.NewFromObject(data)),
		rego.StrictBuiltinErrors(true),
		// Keep results as AST terms: the decision reads them directly,
		// with no round trip through Go maps.
		rego.GenerateJSON(func(t *ast.Term, _ *rego.EvalContext) (any, error) { return t, nil }),
	)
	s.query, err = r.PrepareForEval(ctx)
	if err != nil {
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
		return nil, ErrNoDenyRules
	}
	refs := make([]ast.Ref, 0, len(seen))
	for _, k := range slices.Sorted(maps.Keys(seen)) {
		refs = append(refs, seen[k])
	}
	return refs, nil
}

// Decide evaluates input, the tool.before event as an AST value.
func (s *Snapshot) Decide(ctx context.Context, input ast.Value) (Decision, error) {
	d := Decision{Revision: s.Revision}
	rs, err := s.query.Eval(ctx, rego.EvalParsedInput(input))
	if err != nil {
		switch {
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			return d, ErrTimeout
		case ctx.Err() != nil:
			return d, fmt.Errorf("evaluation abandoned: %w", ctx.Err()) // the caller went away
		}
		return d, &EvalError{Err: err}
	}
	if len(rs) != 1 {
		return d, &EvalError{Err: fmt.Errorf("query returned %d results, want 1", len(rs))}
	}
	for i, v := range s.vars {
		t, _ := rs[0].Bindings[v].(*ast.Term)
		set, ok := t.Value.(ast.Set)
		if !ok {
			return d, &EvalError{Err: fmt.Errorf("%s is not a set", s.Rules[i])}
		}
		set.Foreach(func(el *ast.Term) {
			d.Matches = append(d.Matches, newMatch(s.pkgs[i], el.Value))
		})
	}
	slices.SortFunc(d.Matches, func(a, b Match) int {
		return cmp.Or(cmp.Compare(a.Package, b.Package), cmp.Compare(a.Code, b.Code), cmp.Compare(a.Reason, b.Reason))
	})
	return d, nil
}

// EvalError is a failure raised while evaluating the policy, such as a
// builtin error under strict mode. Its text may quote input values: log it
// only where inputs may be logged.
type EvalError struct{ Err error }

func (e *EvalError) Error() string { return "evaluating policy: " + e.Err.Error() }
func (e *EvalError) Unwrap() error { return e.Err }
