package shell

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// scope is where a statement sits: how deep, how it was reached, and which
// command runs it. src is the text being parsed, to quote substitutions.
type scope struct {
	depth  int
	via    string
	parent int
	src    string
	where  []string // where its commands run, outermost first: Command.Where
}

func (s scope) nested(via string, parent int) scope {
	return scope{depth: s.depth + 1, via: via, parent: parent, where: s.where}
}

// at returns the scope with one more place its commands run in; the
// slice is copied, as sibling scopes share the outer one.
func (s scope) at(where string) scope {
	if where == "" || (len(s.where) > 0 && s.where[len(s.where)-1] == where) {
		return s
	}
	s.where = append(slices.Clip(s.where), where)
	return s
}

// variable is what the analysis knows of a shell variable.
type variable struct {
	value   string
	known   bool
	sources []int    // commands whose output the value holds
	written string   // an unknown value as written ($HOME), for loop items
	ref     string   // the variable a nameref (declare -n) stands for
	array   bool     // an indexed array, whose elements are items
	items   []string // the elements of an array
}

type analyzer struct {
	lim    Limits
	out    Analysis
	inputs [][]int // direct inputs, parallel to out.Commands
	vars   map[string]variable
	budget int // bytes of nested scripts left to parse
	parser *syntax.Parser
	dir    string // where cd went, as written; "" for the start directory
	halted bool   // a limit was hit that makes going on pointless

	params      []string           // positional parameters ($1 …), when known
	paramsKnown bool               // set -- or a function call gave them
	arg0        *field             // $0 of sh -c 'script' arg0 …, when given
	funcs       map[string]funcDef // functions defined so far
	funcOrder   []string           // their names, in the order defined
	calling     map[string]bool    // functions being walked, to stop recursion
	async       int                // > 0 inside a pipeline or a background job
	stage       [2]int             // commands of the last pipeline stage walked
	stdin       []int              // commands piped into the statement being walked
	texts       map[string]string  // known text of files written and of <(…)
	aliases     map[string]string  // aliases defined so far
	expanding   map[string]bool    // aliases being expanded
}

// funcDef is a function definition and where it was made.
type funcDef struct {
	body   *syntax.Stmt
	sc     scope
	called bool
}

var parsers = sync.Pool{New: func() any {
	return syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(false))
}}

func newAnalyzer(lim Limits) *analyzer {
	if lim.MaxBytes <= 0 {
		lim.MaxBytes = DefaultLimits.MaxBytes
	}
	if lim.MaxDepth <= 0 {
		lim.MaxDepth = DefaultLimits.MaxDepth
	}
	if lim.MaxCommands <= 0 {
		lim.MaxCommands = DefaultLimits.MaxCommands
	}
	if lim.MaxFields <= 0 {
		lim.MaxFields = DefaultLimits.MaxFields
	}
	return &analyzer{
		lim:    lim,
		vars:   map[string]variable{},
		budget: 4 * lim.MaxBytes,
		parser: parsers.Get().(*syntax.Parser),
	}
}

func (a *analyzer) release() {
	parsers.Put(a.parser)
	a.parser = nil
}

// limit records the first limit hit. The analysis goes on with the rest
// of the script: a command after a too-deep one must still be seen.
func (a *analyzer) limit(format string, args ...any) {
	if a.out.Incomplete == "" {
		a.out.Incomplete = fmt.Sprintf(format, args...)
	}
}

// stop records a limit after which the analysis ends: too many commands,
// too many bytes.
func (a *analyzer) stop(format string, args ...any) {
	a.limit(format, args...)
	a.halted = true
}

func (a *analyzer) stopped() bool { return a.halted }

// script parses src and walks it. A tolerant parse (text echoed into a
// shell, which may be prose) drops syntax errors instead of reporting them.
func (a *analyzer) script(src string, sc scope, tolerant bool) {
	if a.stopped() {
		return
	}
	if sc.depth > a.lim.MaxDepth {
		a.limit("commands are nested deeper than %d levels", a.lim.MaxDepth)
		return
	}
	if sc.depth > 0 {
		a.budget -= len(src)
		if a.budget < 0 {
			a.stop("nested scripts are longer than %d bytes in all", 4*a.lim.MaxBytes)
			return
		}
	}
	f, err := a.parser.Parse(strings.NewReader(src), "")
	if err != nil && !tolerant && a.out.ParseError == "" {
		a.out.ParseError = parseError(err, sc.depth)
	}
	if f == nil {
		return
	}
	sc.src = src
	saved := a.stdin
	a.stdin = nil
	// A shell runs each complete command before it reads the next, so the
	// statements before a syntax error still run: analyse them.
	a.stmts(f.Stmts, sc)
	a.stdin = saved
}

func parseError(err error, depth int) string {
	msg := err.Error()
	if depth > 0 {
		return "in a nested script: " + msg
	}
	return msg
}

func (a *analyzer) stmts(list []*syntax.Stmt, sc scope) {
	for _, s := range list {
		if a.stopped() {
			return
		}
		a.stmt(s, sc)
	}
}

// stmt walks one statement and returns the range of command indices it
// created, nested ones included.
func (a *analyzer) stmt(s *syntax.Stmt, sc scope) (int, int) {
	start := len(a.out.Commands)
	if s == nil || a.stopped() {
		return start, start
	}
	if s.Background {
		a.async++
		defer func() { a.async-- }()
	}
	switch c := s.Cmd.(type) {
	case *syntax.CallExpr:
		a.call(c, s, sc)
	case nil:
		// Only redirections: "> file" truncates file.
		idx := a.reserve(sc)
		if idx >= 0 {
			redirs, _ := a.redirects(s.Redirs, idx, sc)
			a.out.Commands[idx].Redirects = redirs
		}
	case *syntax.BinaryCmd:
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			a.pipe(c, sc)
		} else {
			a.stmt(c.X, sc)
			a.stmt(c.Y, sc)
		}
		a.compoundRedirects(s, start, sc)
	case *syntax.DeclClause:
		a.decl(c, s, sc)
	case *syntax.WhileClause:
		if !a.readLoop(c, s, sc) {
			a.compound(s.Cmd, sc)
		}
		a.compoundRedirects(s, start, sc)
	default:
		a.compound(s.Cmd, sc)
		a.compoundRedirects(s, start, sc)
	}
	end := len(a.out.Commands)
	if s.Background {
		for i := start; i < end; i++ {
			a.out.Commands[i].Background = true
		}
	}
	return start, end
}

// compound walks the statements of a compound command.
func (a *analyzer) compound(cmd syntax.Command, sc scope) {
	switch c := cmd.(type) {
	case *syntax.Subshell:
		a.stmts(c.Stmts, sc)
	case *syntax.Block:
		a.stmts(c.Stmts, sc)
	case *syntax.IfClause:
		for ; c != nil; c = c.Else {
			a.stmts(c.Cond, sc)
			a.stmts(c.Then, sc)
		}
	case *syntax.WhileClause:
		start := len(a.out.Commands)
		a.stmts(c.Cond, sc)
		a.stmts(c.Do, sc)
		if endless(c) || sleepLoop(c) {
			for i := start; i < len(a.out.Commands); i++ {
				a.out.Commands[i].Repeats = true
			}
		}
		if endless(c) {
			// A job started in the background on each turn of a loop
			// that never ends piles up without bound.
			for i := start; i < len(a.out.Commands); i++ {
				if a.out.Commands[i].Background {
					a.out.Commands[i].Unbounded = true
				}
			}
		}
	case *syntax.ForClause:
		if it, ok := c.Loop.(*syntax.WordIter); ok {
			a.forLoop(it, c.Do, sc)
		} else {
			a.substitutions(c.Loop, sc)
			a.stmts(c.Do, sc)
		}
	case *syntax.CaseClause:
		a.words([]*syntax.Word{c.Word}, sc.parent, sc)
		for _, item := range c.Items {
			a.stmts(item.Stmts, sc)
		}
	case *syntax.FuncDecl:
		// The body runs where the function is called, with its
		// arguments; bodies never called are walked at the end.
		if c.Name != nil {
			if a.funcs == nil {
				a.funcs = map[string]funcDef{}
			}
			if _, seen := a.funcs[c.Name.Value]; !seen {
				a.funcOrder = append(a.funcOrder, c.Name.Value)
			}
			a.funcs[c.Name.Value] = funcDef{body: c.Body, sc: sc}
		}
	case *syntax.TimeClause:
		a.stmt(c.Stmt, sc)
	case *syntax.CoprocClause:
		a.stmt(c.Stmt, sc)
	default:
		// [[ … ]], (( … )), let and anything newer: they run no program
		// themselves, but substitutions inside them do.
		a.substitutions(cmd, sc)
	}
}

// substitutions walks node for command and process substitutions and
// analyses them as commands of their own.
func (a *analyzer) substitutions(node syntax.Node, sc scope) []int {
	var created []int
	syntax.Walk(node, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst:
			created = append(created, a.subst(n.Stmts, sc.nested(ViaCommandSubst, sc.parent), sc.src)...)
			return false
		case *syntax.ProcSubst:
			created = append(created, a.subst(n.Stmts, sc.nested(ViaProcessSubst, sc.parent), sc.src)...)
			return false
		}
		return true
	})
	return created
}

// subst analyses the statements of a substitution and returns the indices
// of the commands it created.
func (a *analyzer) subst(list []*syntax.Stmt, sc scope, src string) []int {
	if sc.depth > a.lim.MaxDepth {
		a.limit("commands are nested deeper than %d levels", a.lim.MaxDepth)
		return nil
	}
	sc.src = src
	start := len(a.out.Commands)
	a.stmts(list, sc)
	return indexRange(start, len(a.out.Commands))
}

func indexRange(start, end int) []int {
	if end <= start {
		return nil
	}
	r := make([]int, 0, end-start)
	for i := start; i < end; i++ {
		r = append(r, i)
	}
	return r
}

// compoundRedirects applies the redirections of a compound statement
// ({ …; } > f, while …; done < <(…)) to every command inside it.
func (a *analyzer) compoundRedirects(s *syntax.Stmt, start int, sc scope) {
	if len(s.Redirs) == 0 {
		return
	}
	end := len(a.out.Commands)
	redirs, inputs := a.redirects(s.Redirs, sc.parent, sc)
	for i := start; i < end; i++ {
		c := &a.out.Commands[i]
		if c.Depth != sc.depth {
			continue
		}
		c.Redirects = append(c.Redirects, redirs...)
		a.inputs[i] = append(a.inputs[i], inputs...)
	}
}

// pipe walks a | b: every command on the left can feed every command on
// the right.
func (a *analyzer) pipe(c *syntax.BinaryCmd, sc scope) {
	a.async++
	defer func() { a.async-- }()
	xs, xe := a.stmt(c.X, sc)
	// What the last stage on the left prints is what the right reads.
	ps, pe := xs, xe
	if inner, ok := c.X.Cmd.(*syntax.BinaryCmd); ok && (inner.Op == syntax.Pipe || inner.Op == syntax.PipeAll) {
		ps, pe = a.stage[0], a.stage[1]
	}
	saved := a.stdin
	a.stdin = nil
	for i := ps; i < pe; i++ {
		if a.out.Commands[i].Depth == sc.depth {
			a.stdin = append(a.stdin, i)
		}
	}
	ys, ye := a.stmt(c.Y, sc)
	a.stdin = saved
	a.stage = [2]int{ys, ye}
	for j := ys; j < ye; j++ {
		for i := xs; i < xe; i++ {
			a.inputs[j] = append(a.inputs[j], i)
		}
	}
	// Text echoed into a shell is a script: echo 'rm -rf /' | sh.
	if ys < ye && a.readsScriptFromStdin(ys) {
		for i := xs; i < xe; i++ {
			if text, ok := a.printedText(i); ok {
				if text, ok = a.decodedOnTheWay(text, i, xs, xe); ok {
					a.script(text, a.readerScope(sc, ys), true)
				}
			}
		}
	}
}

// decodedOnTheWay returns text as it reaches the end of the stage
// [xs, xe) that printed it at i: decoded when a base64 -d of the stage
// reads it (echo B64 | base64 -d | sh runs the decoded script, whoever
// wrote it), and not at all when it cannot be decoded.
func (a *analyzer) decodedOnTheWay(text string, i, xs, xe int) (string, bool) {
	for j := i + 1; j < xe; j++ {
		if isBase64Decode(&a.out.Commands[j]) && hasInput(a.inputs[j], i) {
			return decodeBase64(text)
		}
	}
	return text, true
}

// reserve appends an empty command and returns its index, or -1 when the
// command limit is reached.
func (a *analyzer) reserve(sc scope) int {
	if len(a.out.Commands) >= a.lim.MaxCommands {
		a.stop("the command runs more than %d commands", a.lim.MaxCommands)
		return -1
	}
	a.out.Commands = append(a.out.Commands, Command{Depth: sc.depth, Via: sc.via, Parent: sc.parent, Where: sc.where})
	a.inputs = append(a.inputs, nil)
	return len(a.out.Commands) - 1
}

// call walks a simple command.
func (a *analyzer) call(c *syntax.CallExpr, s *syntax.Stmt, sc scope) {
	if len(c.Args) == 0 {
		// Assignments only: they set shell variables.
		for _, as := range c.Assigns {
			a.assign(as, sc, true)
		}
		if len(s.Redirs) > 0 {
			if idx := a.reserve(sc); idx >= 0 {
				redirs, in := a.redirects(s.Redirs, idx, sc)
				a.out.Commands[idx].Redirects = redirs
				a.inputs[idx] = append(a.inputs[idx], in...)
			}
		}
		return
	}
	idx := a.reserve(sc)
	if idx < 0 {
		return
	}
	var env []Assign
	for _, as := range c.Assigns {
		if as.Name == nil {
			continue
		}
		v, in := a.assignValue(as, idx, sc)
		env = append(env, Assign{Name: as.Name.Value, Value: v.value})
		a.inputs[idx] = append(a.inputs[idx], in...)
	}
	words, in := a.words(c.Args, idx, sc)
	a.inputs[idx] = append(a.inputs[idx], in...)
	redirs, in := a.redirects(s.Redirs, idx, sc)
	a.inputs[idx] = append(a.inputs[idx], in...)
	a.exec(idx, words, env, redirs, sc, s.Background)
}

// decl walks declare, export, local, readonly, typeset and nameref: it sets
// variables and lists the builtin as a command (export -p dumps the
// environment).
func (a *analyzer) decl(c *syntax.DeclClause, s *syntax.Stmt, sc scope) {
	idx := a.reserve(sc)
	if idx < 0 {
		return
	}
	argv := []string{c.Variant.Value}
	dyn := []bool{false}
	for _, as := range c.Args {
		switch {
		case as.Naked && as.Name == nil && as.Value != nil:
			fs, in := a.words([]*syntax.Word{as.Value}, idx, sc)
			a.inputs[idx] = append(a.inputs[idx], in...)
			for _, f := range fs {
				argv = append(argv, f.text)
				dyn = append(dyn, f.dynamic)
			}
		case as.Name != nil:
			v, in := a.assignValue(as, idx, sc)
			a.inputs[idx] = append(a.inputs[idx], in...)
			if nameref(argv) && v.known {
				// declare -n r=x: $r reads x from now on.
				v = variable{ref: v.value}
			}
			a.vars[as.Name.Value] = v
			if as.Naked {
				argv = append(argv, as.Name.Value)
			} else {
				argv = append(argv, as.Name.Value+"="+v.value)
			}
			dyn = append(dyn, !v.known)
		}
	}
	redirs, in := a.redirects(s.Redirs, idx, sc)
	a.inputs[idx] = append(a.inputs[idx], in...)
	cmd := &a.out.Commands[idx]
	cmd.Name = Normalize(argv[0])
	cmd.Argv, cmd.Dynamic, cmd.Redirects = argv, dyn, redirs
}

// nameref reports whether the declaration so far has -n.
func nameref(argv []string) bool {
	for _, a := range argv[1:] {
		if strings.HasPrefix(a, "-") && strings.Contains(a, "n") && !strings.HasPrefix(a, "--") {
			return true
		}
	}
	return false
}

// assign records a shell variable set by NAME=value.
func (a *analyzer) assign(as *syntax.Assign, sc scope, global bool) {
	if as.Name == nil {
		return
	}
	v, _ := a.assignValue(as, sc.parent, sc)
	if global {
		a.vars[as.Name.Value] = v
	}
}

func (a *analyzer) assignValue(as *syntax.Assign, parent int, sc scope) (variable, []int) {
	switch {
	case as.Array != nil:
		var in []int
		v := variable{array: true, known: true}
		if as.Append {
			if old := a.vars[as.Name.Value]; old.array {
				v = old
				v.items = slices.Clip(v.items)
			}
		}
		for _, el := range as.Array.Elems {
			if el.Value == nil {
				continue
			}
			if el.Index != nil {
				v.known = false // [3]=x: sparse, not followed
			}
			fs, i := a.words([]*syntax.Word{el.Value}, parent, sc)
			in = append(in, i...)
			for _, f := range fs {
				v.items = append(v.items, f.text)
				v.known = v.known && !f.dynamic
			}
		}
		v.sources = append(v.sources, in...)
		return v, in
	case as.Index != nil && as.Value != nil:
		// a[i]=x: set one element of the array.
		f, in := a.word(as.Value, parent, sc)
		old := a.vars[as.Name.Value]
		v := variable{array: true, known: !f.dynamic && (old.array || old.value == "") && (old.known || len(old.items) == 0), items: slices.Clone(old.items), sources: append(slices.Clip(old.sources), in...)}
		if n, err := strconv.Atoi(subscript(as.Index)); err == nil && n >= 0 && n < maxItems {
			for len(v.items) <= n {
				v.items = append(v.items, "")
			}
			v.items[n] = f.text
		} else {
			v.known = false
		}
		return v, in
	case as.Value == nil:
		return variable{known: true}, nil
	}
	f, in := a.word(as.Value, parent, sc)
	if l, ok := lookedUp(f); ok {
		// G=$(which git): $G runs git wherever it is used as a program.
		f = l
	}
	v := variable{value: f.text, known: !f.dynamic, sources: in}
	if f.dynamic && !f.subst && plainReference(f.text) {
		// d=$HOME: the value is not known, but as written it still
		// names the home directory where $d is used.
		v.written = f.text
	}
	if as.Append {
		old := a.vars[as.Name.Value]
		v.value = old.value + v.value
		v.known = v.known && old.known
		v.sources = append(slices.Clip(old.sources), in...)
	}
	return v, in
}

// redirects resolves redirection targets. Descriptor duplications (2>&1)
// are left out; process substitutions in targets feed the command.
func (a *analyzer) redirects(list []*syntax.Redirect, parent int, sc scope) ([]Redirect, []int) {
	var out []Redirect
	var inputs []int
	for _, r := range list {
		op := r.Op.String()
		rd := Redirect{Op: op}
		if r.N != nil {
			rd.Fd = r.N.Value
		}
		switch r.Op {
		case syntax.DplIn, syntax.DplOut:
			if r.Word != nil {
				if w := r.Word.Lit(); w == "-" || isDigits(w) {
					continue
				}
				// >&file is &>file in bash.
				f, in := a.word(r.Word, parent, sc)
				inputs = append(inputs, in...)
				rd.Op, rd.Target = "&>", f.text
			}
		case syntax.Hdoc, syntax.DashHdoc:
			if r.Hdoc != nil {
				body, in := a.heredoc(r, parent, sc)
				inputs = append(inputs, in...)
				rd.Body = body
			}
		case syntax.WordHdoc:
			f, in := a.word(r.Word, parent, sc)
			inputs = append(inputs, in...)
			rd.Body = f.text
		default:
			f, in := a.word(r.Word, parent, sc)
			inputs = append(inputs, in...)
			rd.Target = f.text
		}
		out = append(out, rd)
	}
	return out, inputs
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// finish computes transitive inputs and returns the analysis.
func (a *analyzer) finish() *Analysis {
	n := len(a.out.Commands)
	state := make([]uint8, n) // 0 new, 1 in progress, 2 done
	var visit func(i int)
	visit = func(i int) {
		if state[i] != 0 {
			return
		}
		state[i] = 1
		seen := map[int]bool{}
		var all []int
		for _, j := range a.inputs[i] {
			if j == i || j < 0 || j >= n {
				continue
			}
			if !seen[j] {
				seen[j] = true
				all = append(all, j)
			}
			visit(j)
			for _, k := range a.out.Commands[j].Inputs {
				if k != i && !seen[k] {
					seen[k] = true
					all = append(all, k)
				}
			}
		}
		slices.Sort(all)
		a.out.Commands[i].Inputs = all
		state[i] = 2
	}
	for i := range n {
		if len(a.inputs[i]) > 0 {
			visit(i)
		}
	}
	return &a.out
}

// heredoc returns the body of a here-document. With a quoted delimiter
// (<<'EOF') the body is literal; otherwise it is expanded like a
// double-quoted string.
func (a *analyzer) heredoc(r *syntax.Redirect, parent int, sc scope) (string, []int) {
	quoted := false
	if r.Word != nil {
		for _, p := range r.Word.Parts {
			if lit, ok := p.(*syntax.Lit); !ok || strings.Contains(lit.Value, `\`) {
				quoted = true
			}
		}
	}
	if quoted {
		var b strings.Builder
		for _, p := range r.Hdoc.Parts {
			if lit, ok := p.(*syntax.Lit); ok {
				b.WriteString(lit.Value)
			} else {
				b.WriteString(source(sc.src, p))
			}
		}
		return b.String(), nil
	}
	b := fieldBuilder{}
	in := a.parts(&b, r.Hdoc.Parts, parent, sc, true)
	return b.cur.String(), in
}
