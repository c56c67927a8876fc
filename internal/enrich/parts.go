package enrich

import (
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
)

// Parts is a set of the keys of input.ahp. A policy pays only for the
// parts it reads: Needed finds them in the compiled modules.
type Parts uint16

// The parts of input.ahp, one per key.
const (
	Version   Parts = 1 << iota // input.ahp.version
	Tool                        // input.ahp.tool: name, family, mcp, paths, urls
	Workspace                   // input.ahp.workspace
	Shell                       // input.ahp.shell: the parsed command
	Secrets                     // input.ahp.secrets
	Sensitive                   // input.ahp.sensitive
	Writes                      // input.ahp.writes
	Agent                       // input.ahp.agent
	// Session is input.ahp.session, which the engine fills from session
	// facts rather than from the event.
	Session
	// Effects is input.ahp.effects: what the call does (package effects).
	Effects

	// All is every part: what a policy that reads input.ahp as a whole,
	// or with a key it computes, gets.
	All = Version | Tool | Workspace | Shell | Secrets | Sensitive | Writes | Agent | Session | Effects
	// Describe is what a description of the call (the tool, the paths and
	// hosts it touches) reads.
	Describe = Tool | Shell
)

var partKeys = map[string]Parts{
	"version": Version, "tool": Tool, "workspace": Workspace, "shell": Shell,
	"secrets": Secrets, "sensitive": Sensitive, "writes": Writes, "agent": Agent,
	"session": Session, "effects": Effects, "effect_index": Effects,
}

// partNames lists the parts in the order String names them.
var partNames = []struct {
	p    Parts
	name string
}{
	{Version, "version"}, {Tool, "tool"}, {Workspace, "workspace"}, {Shell, "shell"},
	{Secrets, "secrets"}, {Sensitive, "sensitive"}, {Writes, "writes"}, {Agent, "agent"},
	{Session, "session"}, {Effects, "effects"},
}

// Has reports whether p holds every part of q.
func (p Parts) Has(q Parts) bool { return p&q == q }

// String names the parts, e.g. "shell, tool", or "none".
func (p Parts) String() string {
	if p == 0 {
		return "none"
	}
	var names []string
	for _, n := range partNames {
		if p&n.p != 0 {
			names = append(names, n.name)
		}
	}
	return strings.Join(names, ", ")
}

// Needed returns the parts of input.ahp that the compiled modules can read.
//
// It follows input and input.ahp through the idioms policies use: refs with
// constant keys (input["ahp"].shell), local variables (a := input.ahp;
// a.shell), object.get with a constant path or key, iteration and walk over
// a sub-tree, and user functions called with input or input.ahp as an
// argument (into their bodies, with the parameter bound). Any other use of
// input or input.ahp as a whole, or a key it cannot pin, reads everything,
// which is always safe. Keys that are not parts read nothing:
// input.ahp.nonesuch is undefined either way, and input.tool is the event.
//
// The modules must be compiled: the analysis relies on the compiler's
// renaming of local variables and on bodies being in evaluation order.
func Needed(modules map[string]*ast.Module) Parts {
	a := &analysis{funcs: map[string][]*ast.Rule{}, followed: map[string]bool{}}
	for _, m := range modules {
		for _, r := range m.Rules {
			if len(r.Head.Args) > 0 {
				k := r.Ref().String()
				a.funcs[k] = append(a.funcs[k], r)
			}
		}
	}
	for _, m := range modules {
		for _, r := range m.Rules {
			a.rule(r, nil, 0)
			if a.need == All {
				return All
			}
		}
	}
	return a.need
}

// reach says which tracked values a term may hold: input as a whole, or
// input.ahp as a whole. Every other value derived from input is resolved
// at once to the part it reads, so nothing deeper needs tracking.
type reach uint8

const (
	atInput reach = 1 << iota // input
	atAHP                     // input.ahp
)

// The operators the analysis knows.
var (
	refEq        = ast.Equality.Ref()
	refAssign    = ast.Assign.Ref()
	refObjectGet = ast.ObjectGet.Ref()
)

// maxCallDepth bounds how deep Needed follows input through nested
// function calls; past it, the argument counts as read whole.
const maxCallDepth = 8

// analysis is the state of one Needed.
type analysis struct {
	funcs map[string][]*ast.Rule // user functions by path
	// followed are the function calls already analysed, by path and the
	// reach of each argument: a second visit cannot add parts.
	followed map[string]bool
	need     Parts
}

// scope holds the variables of one rule body (with its closures, whose
// locals the compiler named apart).
type scope struct {
	bound map[ast.Var]reach
	// seen are the variables met so far in evaluation order: a variable's
	// first occurrence is where it is bound.
	seen  map[ast.Var]bool
	depth int
}

// rule analyses r, its else chain included; args binds its parameters.
func (a *analysis) rule(r *ast.Rule, args []reach, depth int) {
	for ; r != nil; r = r.Else {
		s := &scope{bound: map[ast.Var]reach{}, seen: map[ast.Var]bool{}, depth: depth}
		params := r.Head.Args
		for i, p := range params {
			var m reach
			if i < len(args) {
				m = args[i]
			}
			if v, ok := p.Value.(ast.Var); ok {
				s.bound[v] |= m
			} else if m != 0 {
				a.need = All // a pattern for a parameter: unified whole
			}
			ast.WalkVars(p, func(v ast.Var) bool { s.seen[v] = true; return false })
		}
		a.body(s, r.Body)
		for _, t := range []*ast.Term{r.Head.Key, r.Head.Value} {
			if t != nil {
				a.term(s, t)
			}
		}
		for _, t := range r.Head.Reference[1:] {
			a.term(s, t)
		}
	}
}

// body analyses the expressions of a body in order.
func (a *analysis) body(s *scope, body ast.Body) {
	for _, e := range body {
		a.expr(s, e)
		ast.WalkVars(e, func(v ast.Var) bool { s.seen[v] = true; return false })
	}
}

func (a *analysis) expr(s *scope, e *ast.Expr) {
	for _, w := range e.With {
		a.term(s, w.Value) // the target is replaced, not read
	}
	switch t := e.Terms.(type) {
	case *ast.Term:
		a.term(s, t)
	case *ast.SomeDecl:
		for _, x := range t.Symbols {
			a.term(s, x)
		}
	case *ast.Every:
		a.term(s, t.Domain)
		for _, x := range []*ast.Term{t.Key, t.Value} {
			if x != nil {
				ast.WalkVars(x, func(v ast.Var) bool { s.seen[v] = true; return false })
			}
		}
		a.body(s, t.Body)
	case []*ast.Term:
		a.call(s, t)
	}
}

// call analyses a call: terms[0] is the operator, then the arguments and
// maybe an output.
func (a *analysis) call(s *scope, terms []*ast.Term) {
	op, _ := terms[0].Value.(ast.Ref)
	args := terms[1:]
	switch {
	case (op.Equal(refEq) || op.Equal(refAssign)) && len(args) == 2:
		// x = input.ahp, with x met here first, binds x rather than read.
		for i, fresh := range args {
			v, ok := fresh.Value.(ast.Var)
			if !ok || s.seen[v] || v.IsWildcard() {
				continue
			}
			if m := a.resolve(s, args[1-i]); m != 0 {
				s.bound[v] |= m
				return
			}
		}
	case op.Equal(refObjectGet) && len(args) >= 3:
		if a.objectGet(s, args) {
			return
		}
	default:
		if fns := a.function(op); len(fns) > 0 {
			a.userCall(s, fns, args)
			return
		}
	}
	for _, t := range args {
		a.term(s, t)
	}
}

// objectGet analyses object.get(obj, path, default[, out]) and reports
// whether it did; false leaves the call to be read as any other.
func (a *analysis) objectGet(s *scope, args []*ast.Term) bool {
	m := a.resolve(s, args[0])
	if m == 0 {
		return false
	}
	var keys []*ast.Term
	switch p := args[1].Value.(type) {
	case ast.String:
		keys = []*ast.Term{args[1]}
	case *ast.Array:
		for i := range p.Len() {
			keys = append(keys, p.Elem(i))
		}
	default:
		a.need = All // a path computed at run time
		return true
	}
	for _, k := range keys {
		if _, ok := k.Value.(ast.String); !ok {
			a.need = All
			return true
		}
	}
	got, read := follow(m, keys)
	a.need |= read
	a.term(s, args[2])
	if len(args) == 4 {
		if v, ok := args[3].Value.(ast.Var); ok && !s.seen[v] {
			s.bound[v] |= got // the result may be input or input.ahp itself
			return true
		}
		a.term(s, args[3])
	}
	if got != 0 {
		a.need = All
	}
	return true
}

// function returns the rules of the user function op names, if it is one:
// user functions live under data, builtins do not.
func (a *analysis) function(op ast.Ref) []*ast.Rule {
	if len(op) == 0 || !op[0].Equal(ast.DefaultRootDocument) {
		return nil
	}
	return a.funcs[op.String()]
}

// userCall follows input and input.ahp into the user function fns (all
// the rules of one function) through the parameters they are passed to.
func (a *analysis) userCall(s *scope, fns []*ast.Rule, args []*ast.Term) {
	n := len(fns[0].Head.Args)
	bound := make([]reach, min(n, len(args)))
	var key strings.Builder
	key.WriteString(fns[0].Ref().String())
	tracked := false
	for i, t := range args {
		if i >= n {
			a.term(s, t) // the output
			continue
		}
		bound[i] = a.resolve(s, t)
		if bound[i] == 0 {
			a.term(s, t)
		}
		key.WriteByte('0' + byte(bound[i]))
		tracked = tracked || bound[i] != 0
	}
	if !tracked || a.followed[key.String()] {
		return
	}
	if s.depth >= maxCallDepth {
		a.need = All
		return
	}
	a.followed[key.String()] = true
	for _, r := range fns {
		a.rule(r, bound, s.depth+1)
	}
}

// resolve returns which tracked values t may hold, and accounts for the
// parts it reads when it holds something else of input.
func (a *analysis) resolve(s *scope, t *ast.Term) reach {
	switch v := t.Value.(type) {
	case ast.Var:
		if v.Equal(ast.InputRootDocument.Value) {
			return atInput
		}
		return s.bound[v]
	case ast.Ref:
		head, ok := v[0].Value.(ast.Var)
		if !ok {
			return 0
		}
		m := a.resolve(s, ast.NewTerm(head))
		if m == 0 {
			return 0
		}
		for _, k := range v[1:] {
			a.term(s, k) // a computed key may read input too
		}
		got, read := follow(m, v[1:])
		a.need |= read
		return got
	}
	return 0
}

// term accounts for t read as a value: what it holds of input is read
// whole.
func (a *analysis) term(s *scope, t *ast.Term) {
	switch v := t.Value.(type) {
	case ast.Var:
		if a.resolve(s, t) != 0 {
			a.need = All
		}
	case ast.Ref:
		if !isTrackedHead(s, v) {
			for _, k := range v {
				a.term(s, k)
			}
		} else if a.resolve(s, t) != 0 {
			a.need = All
		}
	case ast.Call:
		if op, ok := v[0].Value.(ast.Ref); ok && len(a.function(op)) > 0 {
			fns := a.function(op)
			a.userCall(s, fns, v[1:])
			return
		}
		for _, x := range v[1:] {
			a.term(s, x)
		}
	case *ast.Array:
		v.Foreach(func(x *ast.Term) { a.term(s, x) })
	case ast.Set:
		v.Foreach(func(x *ast.Term) { a.term(s, x) })
	case ast.Object:
		v.Foreach(func(k, x *ast.Term) { a.term(s, k); a.term(s, x) })
	case *ast.ArrayComprehension:
		a.body(s, v.Body)
		a.term(s, v.Term)
	case *ast.SetComprehension:
		a.body(s, v.Body)
		a.term(s, v.Term)
	case *ast.ObjectComprehension:
		a.body(s, v.Body)
		a.term(s, v.Key)
		a.term(s, v.Value)
	}
}

// isTrackedHead reports whether r starts at input or at a variable bound
// to input or input.ahp.
func isTrackedHead(s *scope, r ast.Ref) bool {
	v, ok := r[0].Value.(ast.Var)
	return ok && (v.Equal(ast.InputRootDocument.Value) || s.bound[v] != 0)
}

// follow returns where the constant keys lead from the tracked values in
// m: the tracked values they still are, and the parts they read. A key
// that is not a constant string reads the whole value it indexes.
func follow(m reach, keys []*ast.Term) (reach, Parts) {
	var got reach
	var read Parts
	if m&atInput != 0 {
		switch {
		case len(keys) == 0:
			got |= atInput
		case !isKey(keys[0], ""):
			read = All // input[x]
		case isKey(keys[0], InputKey):
			g, r := follow(atAHP, keys[1:])
			got, read = got|g, read|r
		} // any other key is the event, not input.ahp
	}
	if m&atAHP != 0 {
		switch {
		case len(keys) == 0:
			got |= atAHP
		case !isKey(keys[0], ""):
			read = All // input.ahp[x]
		default:
			read |= partKeys[string(keys[0].Value.(ast.String))]
		}
	}
	return got, read
}

// isKey reports whether t is a constant string, and name when name is
// not "".
func isKey(t *ast.Term, name string) bool {
	s, ok := t.Value.(ast.String)
	return ok && (name == "" || string(s) == name)
}
