package indirect

import (
	"regexp"
	"strings"
)

// A JavaScript build file often dispatches on its first argument to one
// member of a table of functions (target.lint = function () {…}, the
// convention of shelljs/make; tasks.build = () => {…}): node Makefile.js
// lint runs the lint member and what it calls, not the release member
// beside it. selectTarget keeps what such a run reaches and blanks the
// bodies of the functions it does not, so that the file is judged as the
// program runs it.

var (
	memberDef = regexp.MustCompile(`(?m)^[ \t]*([A-Za-z_$][\w$]*)\.([A-Za-z_$][\w$]*)[ \t]*=[ \t]*(?:async\s+)?(function\b|\(|[A-Za-z_$][\w$]*\s*=>)`)
	// memberAlias is a member set to a function defined elsewhere:
	// target.publishRelease = publishRelease;
	memberAlias = regexp.MustCompile(`(?m)^[ \t]*([A-Za-z_$][\w$]*)\.([A-Za-z_$][\w$]*)[ \t]*=[ \t]*([A-Za-z_$][\w$]*)[ \t]*;?[ \t]*$`)
	funcDef     = regexp.MustCompile(`(?m)^[ \t]*(?:export\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)\s*\(`)
	constDef    = regexp.MustCompile(`(?m)^[ \t]*(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s+)?(function\b|\(|[A-Za-z_$][\w$]*\s*=>)`)
	ident       = regexp.MustCompile(`[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)?`)
)

// jsDef is one function definition of a file: its name (a member's as
// obj.member) and the span of its body.
type jsDef struct {
	name       string
	obj        string // the table a member belongs to; "" for a function
	head       int    // where the definition starts, its name included
	start, end int    // the body, code[start:end]
}

// maxDefs bounds the definitions a file is split into.
const maxDefs = 512

// selectTarget returns code with the bodies of the definitions a run of
// target cannot reach replaced by {}, and whether target named a member
// of a dispatch table (at least two members of one object).
func selectTarget(code, target string) (string, bool) {
	defs := jsDefs(code)
	tables := map[string]int{}
	table := ""
	for _, d := range defs {
		if d.obj != "" {
			tables[d.obj]++
			if d.name == d.obj+"."+target {
				table = d.obj
			}
		}
	}
	if table == "" || tables[table] < 2 {
		return code, false
	}
	// What runs: the file outside every body, and the target's body.
	reached := make([]bool, len(defs))
	var text strings.Builder
	last := 0
	for i, d := range defs {
		if d.head < last {
			continue // nested in a body already cut out
		}
		// The definition's own name is no use of it: leave the head out.
		text.WriteString(code[last:d.head])
		last = d.end
		if d.name == table+"."+target {
			reached[i] = true
		}
	}
	text.WriteString(code[last:])
	names := map[string]bool{}
	addNames := func(s string) {
		for _, w := range ident.FindAllString(s, -1) {
			names[w] = true
			if obj, member, ok := strings.Cut(w, "."); ok {
				names[obj] = true
				names[member] = true
			}
		}
	}
	addNames(text.String())
	for i, d := range defs {
		if reached[i] {
			addNames(code[d.start:d.end])
		}
	}
	for changed := true; changed; {
		changed = false
		for i, d := range defs {
			if reached[i] {
				continue
			}
			// A member runs when it is called by its full name; a function
			// when its name appears.
			if d.obj != "" && !names[d.name] || d.obj == "" && !names[d.name] {
				continue
			}
			reached[i] = true
			changed = true
			addNames(code[d.start:d.end])
		}
	}
	var out strings.Builder
	last = 0
	for i, d := range defs {
		if reached[i] || d.start < last {
			continue
		}
		out.WriteString(code[last:d.start])
		out.WriteString("{}")
		last = d.end
	}
	out.WriteString(code[last:])
	return out.String(), true
}

// jsDefs finds the function definitions of code, ordered by position, with
// their bodies: a block, or for an arrow the expression up to the end of
// its statement. A definition whose body cannot be delimited is left out.
func jsDefs(code string) []jsDef {
	var defs []jsDef
	add := func(name, obj string, head, from int) {
		if len(defs) >= maxDefs {
			return
		}
		if start, end, ok := body(code, from); ok {
			defs = append(defs, jsDef{name: name, obj: obj, head: head, start: start, end: end})
		}
	}
	for _, m := range memberDef.FindAllStringSubmatchIndex(code, -1) {
		obj, member := code[m[2]:m[3]], code[m[4]:m[5]]
		add(obj+"."+member, obj, m[0], m[6])
	}
	for _, m := range memberAlias.FindAllStringSubmatchIndex(code, -1) {
		if len(defs) < maxDefs {
			obj, member := code[m[2]:m[3]], code[m[4]:m[5]]
			defs = append(defs, jsDef{name: obj + "." + member, obj: obj, head: m[0], start: m[6], end: m[7]})
		}
	}
	for _, m := range funcDef.FindAllStringSubmatchIndex(code, -1) {
		add(code[m[2]:m[3]], "", m[0], m[3])
	}
	for _, m := range constDef.FindAllStringSubmatchIndex(code, -1) {
		add(code[m[2]:m[3]], "", m[0], m[4])
	}
	// Order by position; insertion sort keeps this free of a dependency
	// and the lists are short.
	for i := 1; i < len(defs); i++ {
		for j := i; j > 0 && defs[j].start < defs[j-1].start; j-- {
			defs[j], defs[j-1] = defs[j-1], defs[j]
		}
	}
	return defs
}

// body finds the body of the function whose definition continues at
// from (at `function`, at the parameters' `(`, or at a lone parameter
// before =>): the span of its block, or of an arrow's expression.
func body(code string, from int) (start, end int, ok bool) {
	i := from
	if strings.HasPrefix(code[i:], "function") {
		i += len("function")
	}
	// The parameters' ( follows at once, or after a generator's * or the
	// function's own name.
	p := strings.IndexByte(code[i:], '(')
	before := ""
	if p >= 0 {
		before = strings.TrimSpace(strings.TrimLeft(code[i:i+p], "*"))
	}
	if p >= 0 && (before == "" || isIdent(before)) {
		close := match(code, i+p)
		if close < 0 {
			return 0, 0, false
		}
		i = close + 1
	} else if a := strings.Index(code[i:], "=>"); a >= 0 && isIdent(strings.TrimSpace(code[i:i+a])) {
		i += a // x => …
	} else {
		return 0, 0, false
	}
	j := skipSpace(code, i)
	if strings.HasPrefix(code[j:], "=>") {
		j = skipSpace(code, j+2)
		if j < len(code) && code[j] != '{' {
			return j, exprEnd(code, j), true
		}
	}
	if j >= len(code) || code[j] != '{' {
		return 0, 0, false
	}
	close := match(code, j)
	if close < 0 {
		return 0, 0, false
	}
	return j, close + 1, true
}

func isIdent(s string) bool {
	return s != "" && ident.FindString(s) == s && !strings.Contains(s, ".")
}

func skipSpace(code string, i int) int {
	for i < len(code) && strings.IndexByte(" \t\r\n", code[i]) >= 0 {
		i++
	}
	return i
}

// match returns the index of the bracket that closes the one at open,
// past strings, template literals and comments; -1 when there is none.
func match(code string, open int) int {
	depth := 0
	for i := open; i < len(code); i++ {
		switch c := code[i]; c {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
			if depth == 0 {
				return i
			}
		case '\'', '"', '`':
			i = stringEnd(code, i)
			if i < 0 {
				return -1
			}
		case '/':
			if i+1 < len(code) && code[i+1] == '/' {
				nl := strings.IndexByte(code[i:], '\n')
				if nl < 0 {
					return -1
				}
				i += nl
			} else if i+1 < len(code) && code[i+1] == '*' {
				e := strings.Index(code[i+2:], "*/")
				if e < 0 {
					return -1
				}
				i += e + 3
			}
		}
	}
	return -1
}

// stringEnd returns the index of the quote that ends the string starting
// at i; a template literal's ${…} are matched as code.
func stringEnd(code string, i int) int {
	q := code[i]
	for j := i + 1; j < len(code); j++ {
		switch {
		case code[j] == '\\':
			j++
		case code[j] == q:
			return j
		case q == '`' && code[j] == '$' && j+1 < len(code) && code[j+1] == '{':
			e := match(code, j+1)
			if e < 0 {
				return -1
			}
			j = e
		case q != '`' && code[j] == '\n':
			return j // an unterminated string ends its line
		}
	}
	return -1
}

// exprEnd returns where the expression starting at i ends: a ; or a line
// break outside brackets, or a closing bracket of an enclosing one.
func exprEnd(code string, i int) int {
	for ; i < len(code); i++ {
		switch c := code[i]; c {
		case ';', '\n':
			return i
		case ')', ']', '}':
			return i
		case '(', '[', '{':
			e := match(code, i)
			if e < 0 {
				return len(code)
			}
			i = e
		case '\'', '"', '`':
			e := stringEnd(code, i)
			if e < 0 {
				return len(code)
			}
			i = e
		}
	}
	return len(code)
}
