package indirect

import (
	"path"
	"strconv"
	"strings"
)

// justfile is what is read of a justfile.
type justfile struct {
	recipes map[string]*justRecipe
	first   string
	vars    map[string]string
	aliases map[string]string
}

type justRecipe struct {
	params []string // parameter names, in order (a *rest or +rest last)
	deps   []string
	body   []string
}

func parseJustfile(b []byte) any {
	jf := &justfile{recipes: map[string]*justRecipe{}, vars: map[string]string{}, aliases: map[string]string{}}
	var cur *justRecipe
	for _, line := range logicalLines(string(b)) {
		if line != "" && (line[0] == ' ' || line[0] == '\t') {
			if cur != nil {
				cur.body = append(cur.body, strings.TrimSpace(line))
			}
			continue
		}
		t := strings.TrimSpace(line)
		if t == "" {
			continue
		}
		cur = nil
		switch {
		case t[0] == '#' || t[0] == '[' || strings.HasPrefix(t, "set ") || strings.HasPrefix(t, "import ") ||
			strings.HasPrefix(t, "mod ") || strings.HasPrefix(t, "!include"):
			continue
		case strings.HasPrefix(t, "alias "):
			if n, v, ok := strings.Cut(strings.TrimPrefix(t, "alias "), ":="); ok {
				jf.aliases[strings.TrimSpace(n)] = strings.TrimSpace(v)
			}
			continue
		}
		if n, v, ok := strings.Cut(strings.TrimPrefix(t, "export "), ":="); ok && !strings.ContainsAny(strings.TrimSpace(n), " :") {
			jf.vars[strings.TrimSpace(n)] = unquote(strings.TrimSpace(v))
			continue
		}
		head, deps, ok := strings.Cut(t, ":")
		if !ok {
			continue
		}
		fields := strings.Fields(head)
		if len(fields) == 0 {
			continue
		}
		name := strings.TrimPrefix(fields[0], "@")
		r := &justRecipe{}
		for _, p := range fields[1:] {
			p = strings.TrimLeft(p, "*+$")
			p, _, _ = strings.Cut(p, "=")
			if p != "" {
				r.params = append(r.params, p)
			}
		}
		for _, d := range strings.Fields(deps) {
			if d == "&&" {
				continue
			}
			if strings.HasPrefix(d, "(") {
				d = strings.TrimPrefix(d, "(")
			} else if strings.HasPrefix(d, "\"") || strings.HasPrefix(d, "'") || strings.HasSuffix(d, ")") {
				continue // an argument of a dependency
			}
			d = strings.TrimRight(d, ")")
			if d != "" {
				r.deps = append(r.deps, d)
			}
		}
		jf.recipes[name] = r
		if jf.first == "" && !strings.HasPrefix(name, "_") {
			jf.first = name
		}
		cur = r
	}
	return jf
}

func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

// interpolate replaces {{ name }} with the value of a variable or a
// parameter; an expression it cannot evaluate is left to the shell as
// an unknown variable.
func (jf *justfile) interpolate(s string, params map[string]string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "{{")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := strings.Index(s[i:], "}}")
		if j < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		expr := strings.TrimSpace(s[i+2 : i+j])
		switch v, ok := params[expr]; {
		case ok:
			b.WriteString(v)
		default:
			if v, ok := jf.vars[expr]; ok {
				b.WriteString(v)
			} else {
				b.WriteString("${JUST_EXPR}")
			}
		}
		s = s[i+j+2:]
	}
}

// just resolves just [options] [recipe [arguments…]] [recipe…].
func (r *reader) just(args []string, dynamic []bool) (Result, bool) {
	dir := r.ws.Dir
	file := ""
	var words []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(dynamic) > i+1 && dynamic[i+1] && len(words) == 0 {
			return Result{Kind: "just", Why: "the recipe is not known"}, true
		}
		switch {
		case a == "-f" || a == "--justfile":
			if i+1 < len(args) {
				file = args[i+1]
				i++
			}
		case a == "-d" || a == "--working-directory":
			if i+1 < len(args) {
				dir = r.absFrom(dir, args[i+1])
				i++
			}
		case a == "-n" || a == "--dry-run" || a == "-l" || a == "--list" || a == "--summary" || a == "--show" || a == "-s" ||
			a == "--evaluate" || a == "--dump" || a == "--fmt" || a == "--choose" || a == "--edit" || a == "--variables":
			return Result{}, false
		case strings.HasPrefix(a, "-"):
		default:
			words = append(words, args[i:]...)
			i = len(args)
		}
	}
	v, abs, name, why := r.definition("just", dir, file, []string{"justfile", "Justfile", ".justfile", "JUSTFILE"}, parseJustfile)
	if why != "" {
		return Result{Kind: "just", Why: why}, true
	}
	jf := v.(*justfile)
	if len(words) == 0 {
		if _, ok := jf.recipes["default"]; ok {
			words = []string{"default"}
		} else if jf.first != "" {
			words = []string{jf.first}
		} else {
			return Result{Kind: "just", Why: name + " has no recipe"}, true
		}
	}
	res := Result{Kind: "just"}
	seen := map[string]bool{}
	fileDir := path.Dir(abs)
	var run func(recipe string, argv []string, depth int) (int, string)
	run = func(recipe string, argv []string, depth int) (int, string) {
		if a, ok := jf.aliases[recipe]; ok {
			recipe = a
		}
		rec, ok := jf.recipes[recipe]
		if !ok {
			if depth == 0 {
				return 0, "no recipe " + quote(recipe) + " in " + name
			}
			return 0, ""
		}
		if res.From == "" {
			res.From = name + "#" + recipe
		}
		used := min(len(rec.params), len(argv))
		if seen[recipe] {
			return used, ""
		}
		seen[recipe] = true
		if len(seen) > maxTargets {
			return used, "more than " + strconv.Itoa(maxTargets) + " recipes"
		}
		for _, d := range rec.deps {
			if _, why := run(d, nil, depth+1); why != "" {
				return used, why
			}
		}
		params := map[string]string{}
		for i, p := range rec.params {
			if i < len(argv) {
				params[p] = argv[i]
			}
		}
		if len(rec.params) > 0 && len(argv) > len(rec.params) {
			params[rec.params[len(rec.params)-1]] = strings.Join(argv[len(rec.params)-1:], " ")
			used = len(argv)
		}
		body := make([]string, 0, len(rec.body))
		for _, l := range rec.body {
			body = append(body, jf.interpolate(l, params))
		}
		script := bodyScript(body, true)
		if script == "" {
			return used, ""
		}
		res.Steps = append(res.Steps, Step{From: name + "#" + recipe, Script: script, Dir: fileDir, File: abs})
		return used, ""
	}
	for len(words) > 0 {
		used, why := run(words[0], words[1:], 0)
		if why != "" {
			return Result{Kind: "just", Why: why}, true
		}
		words = words[1+used:]
	}
	return res, true
}

// bodyScript turns recipe lines into shell text: a body starting with a
// shebang runs under that interpreter; otherwise each line is a command,
// with just's and make's @ and - prefixes removed when prefixes is set.
func bodyScript(lines []string, prefixes bool) string {
	if len(lines) > 0 && strings.HasPrefix(lines[0], "#!") {
		return interpreterScript(lines[0], strings.Join(lines[1:], "\n"))
	}
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		if prefixes {
			l = strings.TrimLeft(l, "@-")
		}
		if l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// interpreterScript is shell text that runs body the way its shebang
// line says: a shell script as itself, an interpreter's code as that
// interpreter's inline code, so its analysis applies.
func interpreterScript(shebang, body string) string {
	f := strings.Fields(strings.TrimPrefix(shebang, "#!"))
	if len(f) > 0 && program(f[0]) == "env" {
		f = f[1:]
		for len(f) > 0 && strings.HasPrefix(f[0], "-") {
			f = f[1:] // env -S
		}
	}
	if len(f) == 0 {
		return body
	}
	interp := program(f[0])
	switch {
	case interp == "sh" || interp == "bash" || interp == "zsh" || interp == "dash" || interp == "ksh":
		return body
	case strings.HasPrefix(interp, "python"):
		return interp + " -c " + quote(body)
	case interp == "perl" || interp == "ruby":
		return interp + " -e " + quote(body)
	case interp == "node" || interp == "deno" || interp == "bun":
		return "node -e " + quote(body)
	}
	return interp + " -c " + quote(body)
}
