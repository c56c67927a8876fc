package shell

import (
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// expanded is the value of a parameter expansion.
type expanded struct {
	vals   []string
	fields bool // each value is a field of its own: "$@", "${a[@]}"
	known  bool
	in     []int
}

// defaultIFS is the value a shell gives IFS at start; shells do not take
// it from the environment.
const defaultIFS = " \t\n"

// ifs returns the characters unquoted expansions are split at.
func (a *analyzer) ifs() string {
	if v, ok := a.vars["IFS"]; ok {
		if v.known {
			return v.value
		}
		return defaultIFS
	}
	return defaultIFS
}

// paramValue expands $NAME, ${NAME…}, positional parameters and arrays.
// Values assigned a literal earlier in the script are known; the rest stay
// as written and are marked unknown.
func (a *analyzer) paramValue(p *syntax.ParamExp, parent int, sc scope) expanded {
	unknown := func(in []int) expanded {
		return expanded{vals: []string{source(sc.src, p)}, in: in}
	}
	if p.Param == nil || p.Excl || p.Names != 0 || p.Width || p.Length || p.Flags != nil ||
		p.NestedParam != nil || len(p.Modifiers) > 0 || p.Slice != nil || p.Repl != nil {
		var in []int
		if p.Param != nil {
			in = a.vars[p.Param.Value].sources
		}
		return unknown(in)
	}
	name := p.Param.Value
	v, set := a.lookup(name, p.Index)
	if p.Exp == nil {
		if !v.known && len(v.vals) == 0 {
			if p.Index == nil {
				v.vals = []string{"$" + name}
			} else {
				v.vals = []string{source(sc.src, p)}
			}
		}
		return v
	}
	switch op := p.Exp.Op; op {
	case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AssignUnset, syntax.AssignUnsetOrNull:
		if set && v.known && strings.Join(v.vals, "") != "" {
			return v
		}
		f, in := a.word(p.Exp.Word, parent, sc)
		if op == syntax.AssignUnset || op == syntax.AssignUnsetOrNull {
			a.vars[name] = variable{value: f.text, known: !f.dynamic, sources: in}
		}
		// Known only if the variable is certainly unset, which it is not
		// when the environment may set it.
		return expanded{vals: []string{f.text}, in: append(in, v.in...)}
	case syntax.AlternateUnset, syntax.AlternateUnsetOrNull:
		f, in := a.word(p.Exp.Word, parent, sc)
		if set && v.known && (op == syntax.AlternateUnset || strings.Join(v.vals, "") != "") {
			return expanded{vals: []string{f.text}, known: !f.dynamic, in: in}
		}
		if set && v.known {
			return expanded{vals: []string{""}, known: true}
		}
		return expanded{vals: []string{f.text}, in: append(in, v.in...)}
	case syntax.ErrorUnset, syntax.ErrorUnsetOrNull:
		if !v.known {
			v.vals = []string{"$" + name}
		}
		return v
	case syntax.RemSmallSuffix, syntax.RemLargeSuffix, syntax.RemSmallPrefix, syntax.RemLargePrefix:
		f, in := a.word(p.Exp.Word, parent, sc)
		if !v.known || f.dynamic {
			// Trimming an unknown value: keep the variable, which is
			// what ${HOME%/} and the like are used for.
			return expanded{vals: []string{"$" + name}, in: append(in, v.in...)}
		}
		out := make([]string, len(v.vals))
		for i, s := range v.vals {
			out[i] = trimPattern(s, f.text, op)
		}
		v.vals = out
		return v
	}
	return unknown(v.in)
}

func isSpecial(name string) bool {
	switch name {
	case "@", "*", "#", "?", "$", "!", "-", "0":
		return true
	}
	return isDigits(name)
}

// lookup returns the value of a variable, positional parameter or array
// element, and whether it is set.
func (a *analyzer) lookup(name string, index syntax.ArithmExpr) (expanded, bool) {
	switch {
	case name == "@" || name == "*":
		if !a.paramsKnown {
			return expanded{vals: []string{"$" + name}}, true
		}
		return expanded{vals: a.params, fields: name == "@", known: true}, len(a.params) > 0
	case name == "#":
		if !a.paramsKnown {
			return expanded{vals: []string{"$#"}}, true
		}
		return expanded{vals: []string{strconv.Itoa(len(a.params))}, known: true}, true
	case isDigits(name) && name != "0":
		if !a.paramsKnown {
			return expanded{vals: []string{"$" + name}}, true
		}
		n, _ := strconv.Atoi(name)
		if n <= len(a.params) {
			return expanded{vals: []string{a.params[n-1]}, known: true}, true
		}
		return expanded{vals: []string{""}, known: true}, false
	case name == "0" && a.arg0 != nil:
		return expanded{vals: []string{a.arg0.text}, known: !a.arg0.dynamic}, true
	case isSpecial(name):
		return expanded{vals: []string{"$" + name}}, true
	}
	v, set := a.vars[name]
	for hops := 0; v.ref != "" && hops < 8; hops++ {
		v, set = a.vars[v.ref]
	}
	if name == "IFS" && !set {
		return expanded{vals: []string{defaultIFS}, known: true}, true
	}
	e := expanded{known: set && v.known, in: v.sources}
	switch sub := subscript(index); {
	case index == nil && v.array:
		e.vals = []string{first(v.items)}
	case index == nil:
		e.vals = []string{v.value}
	case sub == "@" || sub == "*":
		e.vals, e.fields = v.items, sub == "@"
		if !v.array {
			e.vals = []string{v.value}
		}
	case isDigits(sub):
		n, _ := strconv.Atoi(sub)
		switch {
		case v.array && n < len(v.items):
			e.vals = []string{v.items[n]}
		case !v.array && n == 0:
			e.vals = []string{v.value}
		default:
			e.vals = []string{""}
		}
	default:
		e.known = false
	}
	if !e.known {
		e.vals = nil
		if v.written != "" && index == nil {
			e.vals = []string{v.written} // a loop item as written: $HOME
		}
	}
	return e, set
}

// subscript returns the literal text of an array subscript: @, *, 3.
func subscript(index syntax.ArithmExpr) string {
	if w, ok := index.(*syntax.Word); ok {
		return w.Lit()
	}
	return ""
}

func first(items []string) string {
	if len(items) == 0 {
		return ""
	}
	return items[0]
}

// trimPattern applies ${v%pat}, ${v%%pat}, ${v#pat} and ${v##pat}.
func trimPattern(v, pat string, op syntax.ParExpOperator) string {
	if len(v) > 4096 || len(pat) > 256 {
		return v
	}
	switch op {
	case syntax.RemSmallSuffix:
		for i := len(v); i >= 0; i-- {
			if globMatch(pat, v[i:]) {
				return v[:i]
			}
		}
	case syntax.RemLargeSuffix:
		for i := 0; i <= len(v); i++ {
			if globMatch(pat, v[i:]) {
				return v[:i]
			}
		}
	case syntax.RemSmallPrefix:
		for i := 0; i <= len(v); i++ {
			if globMatch(pat, v[:i]) {
				return v[i:]
			}
		}
	case syntax.RemLargePrefix:
		for i := len(v); i >= 0; i-- {
			if globMatch(pat, v[:i]) {
				return v[i:]
			}
		}
	}
	return v
}

// globMatch matches s against a shell pattern of *, ? and literals; a
// bracket expression matches any one character.
func globMatch(pat, s string) bool {
	px, sx := 0, 0
	star, next := -1, 0
	for sx < len(s) {
		if px < len(pat) {
			switch c := pat[px]; c {
			case '*':
				star, next = px, sx
				px++
				continue
			case '?':
				px++
				sx++
				continue
			case '[':
				if end := strings.IndexByte(pat[px:], ']'); end > 0 {
					px += end + 1
					sx++
					continue
				}
			case '\\':
				if px+1 < len(pat) {
					px++
				}
			}
			if pat[px] == s[sx] {
				px++
				sx++
				continue
			}
		}
		if star < 0 {
			return false
		}
		px, next = star+1, next+1
		sx = next
	}
	for px < len(pat) && pat[px] == '*' {
		px++
	}
	return px == len(pat)
}

// setParams follows set: set -- a b (or set a b) replaces the positional
// parameters; set -e and set -o pipefail leave them.
func (a *analyzer) setParams(args []field) {
	for i := 0; i < len(args); i++ {
		s := args[i].text
		if s == "--" {
			a.assignParams(args[i+1:])
			return
		}
		if s == "-o" || s == "+o" {
			i++
			continue
		}
		if len(s) > 1 && (s[0] == '-' || s[0] == '+') {
			continue
		}
		a.assignParams(args[i:])
		return
	}
}

func (a *analyzer) assignParams(args []field) {
	a.params = make([]string, len(args))
	a.paramsKnown = true
	for i, f := range args {
		a.params[i] = f.text
		if f.dynamic {
			a.paramsKnown = false
		}
	}
}

// shift follows shift [n].
func (a *analyzer) shift(args []field) {
	n := 1
	if len(args) > 0 {
		if v, err := strconv.Atoi(args[0].text); err == nil {
			n = v
		}
	}
	if a.paramsKnown && n >= 0 && n <= len(a.params) {
		a.params = a.params[n:]
	}
}

// read follows read [-r] [-a NAME] NAME…: the variables take the first
// line of its input when that input is known, and become unknown
// otherwise.
func (a *analyzer) read(idx int, args []field, redirs []Redirect) {
	var names []string
	array := ""
	for i := 0; i < len(args); i++ {
		s := args[i].text
		switch {
		case s == "-a" && i+1 < len(args):
			array = args[i+1].text
			i++
		case s == "-d" || s == "-n" || s == "-N" || s == "-p" || s == "-t" || s == "-u" || s == "-i":
			i++
		case strings.HasPrefix(s, "-"):
		default:
			names = append(names, s)
		}
	}
	if len(names) == 0 && array == "" {
		names = []string{"REPLY"}
	}
	text, known := a.stdinText(redirs)
	line, _, _ := strings.Cut(text, "\n")
	a.assignLine(names, array, line, known, a.inputs[idx])
}

// assignLine splits a line read by read into its variables.
func (a *analyzer) assignLine(names []string, array, line string, known bool, sources []int) {
	if !known {
		for i, n := range names {
			a.vars[n] = variable{sources: sources}
			if i == 0 && len(names) == 1 {
				a.vars[n] = variable{sources: sources, written: line}
			}
		}
		if array != "" {
			a.vars[array] = variable{array: true, sources: sources}
		}
		return
	}
	words := strings.FieldsFunc(line, func(r rune) bool { return strings.ContainsRune(a.ifs(), r) })
	if array != "" {
		a.vars[array] = variable{items: words, array: true, known: true}
	}
	for i, n := range names {
		v := ""
		switch {
		case i == len(names)-1 && i < len(words):
			v = strings.Join(words[i:], " ")
		case i < len(words):
			v = words[i]
		}
		a.vars[n] = variable{value: v, known: true}
	}
}

// printfVar follows printf -v NAME FORMAT ARGS….
func (a *analyzer) printfVar(args []field) {
	if len(args) < 3 || args[0].text != "-v" {
		return
	}
	name := args[1].text
	for _, f := range args[2:] {
		if f.dynamic {
			a.vars[name] = variable{}
			return
		}
	}
	out, ok := printf(args[2].text, textsOf(args[3:]))
	a.vars[name] = variable{value: out, known: ok}
}

func textsOf(fs []field) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.text
	}
	return out
}

// callFunction walks the body of a function where it is called, with its
// arguments as positional parameters. A function that calls itself is not
// walked again; a recursive call in a pipeline or in the background starts
// copies without bound (a fork bomb).
func (a *analyzer) callFunction(idx int, name string, args []field, sc scope) {
	def := a.funcs[name]
	if a.calling[name] {
		if a.async > 0 {
			a.out.Commands[idx].Unbounded = true
		}
		return
	}
	def.called = true
	a.funcs[name] = def
	if a.calling == nil {
		a.calling = map[string]bool{}
	}
	savedParams, savedKnown := a.params, a.paramsKnown
	a.assignParams(args)
	a.calling[name] = true
	a.stmt(def.body, sc)
	delete(a.calling, name)
	a.params, a.paramsKnown = savedParams, savedKnown
}

// uncalledFunctions walks the functions the script defines but does not
// call: a trap, an alias or a later command may still run them.
func (a *analyzer) uncalledFunctions() {
	for i := 0; i < 4; i++ {
		found := false
		for _, name := range a.funcOrder {
			def := a.funcs[name]
			if def.called || a.stopped() {
				continue
			}
			found = true
			def.called = true
			a.funcs[name] = def
			a.paramsKnown, a.params = false, nil
			if a.calling == nil {
				a.calling = map[string]bool{}
			}
			a.calling[name] = true
			a.stmt(def.body, def.sc)
			delete(a.calling, name)
		}
		if !found {
			return
		}
	}
}
