package indirect

import (
	"path"
	"strings"
)

// Bounds of a make resolution: prerequisites are followed to this many
// targets, and variables expanded to this depth.
const (
	maxTargets     = 64
	maxExpandDepth = 8
	// maxExpanded caps the text one expansion yields: variables that
	// refer to each other several times would otherwise grow it
	// exponentially with the depth.
	maxExpanded = 64 << 10
)

// makefile is what is read of a Makefile: its explicit rules and the
// variables set with =, :=, ::=, ?= or +=.
type makefile struct {
	rules map[string]*makeRule
	first string
	vars  map[string]string
}

type makeRule struct {
	prereqs []string
	recipe  []string
}

func parseMakefile(b []byte) any {
	mf := &makefile{rules: map[string]*makeRule{}, vars: map[string]string{}}
	var cur []*makeRule // the rules the recipe lines being read belong to
	lines := logicalLines(string(b))
	for _, line := range lines {
		if strings.HasPrefix(line, "\t") {
			if cur != nil {
				for _, r := range cur {
					r.recipe = append(r.recipe, line[1:])
				}
			}
			continue
		}
		trimmed := strings.TrimSpace(stripComment(line))
		if trimmed == "" {
			continue
		}
		if name, op, value, ok := makeAssign(trimmed); ok {
			cur = nil
			switch op {
			case "?=":
				if _, set := mf.vars[name]; !set {
					mf.vars[name] = value
				}
			case "+=":
				mf.vars[name] = strings.TrimSpace(mf.vars[name] + " " + value)
			default:
				mf.vars[name] = value
			}
			continue
		}
		colon := strings.Index(trimmed, ":")
		if colon <= 0 || strings.HasPrefix(trimmed, "include ") || strings.HasPrefix(trimmed, "-include ") ||
			strings.HasPrefix(trimmed, "define ") || strings.HasPrefix(trimmed, "export ") {
			cur = nil
			continue
		}
		targets := strings.Fields(trimmed[:colon])
		rest := strings.TrimLeft(trimmed[colon+1:], ":") // a :: rule
		var inline string
		if semi := strings.Index(rest, ";"); semi >= 0 {
			rest, inline = rest[:semi], strings.TrimSpace(rest[semi+1:])
		}
		if bar := strings.Index(rest, "|"); bar >= 0 {
			rest = rest[:bar] + " " + rest[bar+1:] // order-only prerequisites run too
		}
		cur = cur[:0:0]
		for _, t := range targets {
			if strings.HasPrefix(t, ".") || strings.Contains(t, "%") {
				continue // .PHONY, pattern rules
			}
			r := mf.rules[t]
			if r == nil {
				r = &makeRule{}
				mf.rules[t] = r
				if mf.first == "" {
					mf.first = t
				}
			}
			r.prereqs = append(r.prereqs, strings.Fields(rest)...)
			if inline != "" {
				r.recipe = append(r.recipe, inline)
			}
			cur = append(cur, r)
		}
	}
	return mf
}

// logicalLines joins lines continued with a backslash.
func logicalLines(s string) []string {
	raw := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	var out []string
	var b strings.Builder
	for _, l := range raw {
		if strings.HasSuffix(l, "\\") {
			b.WriteString(strings.TrimSuffix(l, "\\"))
			b.WriteByte(' ')
			continue
		}
		b.WriteString(l)
		out = append(out, b.String())
		b.Reset()
	}
	if b.Len() > 0 {
		out = append(out, b.String())
	}
	return out
}

func stripComment(line string) string {
	if i := strings.Index(line, "#"); i >= 0 {
		return line[:i]
	}
	return line
}

// makeAssign reads NAME = value and its variants (also with export or
// override before it).
func makeAssign(line string) (name, op, value string, ok bool) {
	for _, p := range []string{"export ", "override "} {
		line = strings.TrimPrefix(line, p)
	}
	eq := strings.Index(line, "=")
	if eq <= 0 {
		return "", "", "", false
	}
	if c := strings.Index(line, ":"); c >= 0 && c < eq-2 {
		return "", "", "", false // a rule with = in its prerequisites
	}
	left := line[:eq]
	op = "="
	for _, p := range []string{"::", ":", "?", "+", "!"} {
		if strings.HasSuffix(left, p) {
			op = p + "="
			left = strings.TrimSuffix(left, p)
			break
		}
	}
	name = strings.TrimSpace(left)
	if name == "" || strings.ContainsAny(name, " \t$") {
		return "", "", "", false
	}
	return name, op, strings.TrimSpace(line[eq+1:]), true
}

// expand replaces $(VAR), ${VAR}, $X, the automatic variables and $$ in s.
// Functions ($(shell …), $(wildcard …)) are left as a shell would see
// them: $(shell cmd) becomes a command substitution.
func (mf *makefile) expand(s string, vars map[string]string, target string, prereqs []string, depth int) string {
	if depth > maxExpandDepth || !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if b.Len() > maxExpanded {
			return b.String()
		}
		c := s[i]
		if c != '$' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		n := s[i+1]
		switch {
		case n == '$':
			b.WriteByte('$')
			i++
		case n == '(' || n == '{':
			closer := byte(')')
			if n == '{' {
				closer = '}'
			}
			end := matching(s, i+1, n, closer)
			if end < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			inner := s[i+2 : end]
			i = end
			if fn, arg, ok := strings.Cut(inner, " "); ok {
				if fn == "shell" {
					b.WriteString("$(" + mf.expand(arg, vars, target, prereqs, depth+1) + ")")
				} else {
					b.WriteString("$(" + fn + " " + arg + ")")
				}
				continue
			}
			b.WriteString(mf.variable(inner, vars, target, prereqs, depth))
		default:
			i++
			b.WriteString(mf.variable(string(n), vars, target, prereqs, depth))
		}
	}
	return b.String()
}

func (mf *makefile) variable(name string, vars map[string]string, target string, prereqs []string, depth int) string {
	switch name {
	case "@":
		return target
	case "<":
		if len(prereqs) > 0 {
			return prereqs[0]
		}
		return ""
	case "^", "+", "?":
		return strings.Join(prereqs, " ")
	case "MAKE":
		return "make"
	}
	if v, ok := vars[name]; ok {
		return mf.expand(v, vars, target, prereqs, depth+1)
	}
	if v, ok := mf.vars[name]; ok {
		return mf.expand(v, vars, target, prereqs, depth+1)
	}
	// Unknown: the environment may set it; leave it for the shell.
	return "${" + name + "}"
}

func matching(s string, open int, o, c byte) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case o:
			depth++
		case c:
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// make resolves make [options] [VAR=value…] [targets…].
func (r *reader) make(args []string, dynamic []bool) (Result, bool) {
	dir := r.ws.Dir
	file := ""
	var targets []string
	vars := map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(dynamic) > i+1 && dynamic[i+1] {
			return Result{Kind: "make", Why: "the target or its options are not known"}, true
		}
		switch {
		case a == "-C" || a == "--directory":
			if i+1 < len(args) {
				dir = r.absFrom(dir, args[i+1])
				i++
			}
		case strings.HasPrefix(a, "-C") && len(a) > 2:
			dir = r.absFrom(dir, a[2:])
		case strings.HasPrefix(a, "--directory="):
			dir = r.absFrom(dir, strings.TrimPrefix(a, "--directory="))
		case a == "-f" || a == "--file" || a == "--makefile":
			if i+1 < len(args) {
				file = args[i+1]
				i++
			}
		case strings.HasPrefix(a, "--file=") || strings.HasPrefix(a, "--makefile="):
			_, file, _ = strings.Cut(a, "=")
		case a == "-j" || a == "-l" || a == "-o" || a == "-W" || a == "-I":
			i++ // options with a separate value
		case a == "-n" || a == "--dry-run" || a == "--just-print" || a == "--recon" || a == "-q" || a == "--question":
			return Result{}, false // prints or checks, runs nothing
		case strings.HasPrefix(a, "-"):
		case strings.Contains(a, "="):
			k, v, _ := strings.Cut(a, "=")
			vars[strings.TrimRight(k, ":?+")] = v
		default:
			targets = append(targets, a)
		}
	}
	var abs, why string
	if file != "" {
		abs = r.absFrom(dir, file)
	} else if abs, why = r.find(dir, "GNUmakefile", "makefile", "Makefile"); why != "" {
		return Result{Kind: "make", Why: "no Makefile in " + dir}, true
	}
	v, why, _ := r.parsed("make", abs, parseMakefile)
	if why != "" {
		return Result{Kind: "make", Why: why}, true
	}
	mf := v.(*makefile)
	name := r.rel(abs)
	if len(targets) == 0 {
		if mf.first == "" {
			return Result{Kind: "make", Why: name + " has no target"}, true
		}
		targets = []string{mf.first}
	}
	res := Result{Kind: "make", From: name + "#" + targets[0]}
	fileDir := path.Dir(abs)
	if file == "" {
		fileDir = dir
	}
	why = walkGraph(targets, "targets", func(t string, depth int, walk func(string) string) string {
		rule, ok := mf.rules[t]
		if !ok {
			if depth == 0 {
				return "no rule for target " + quote(t) + " in " + name
			}
			return "" // a file prerequisite
		}
		for _, p := range rule.prereqs {
			if why := walk(mf.expand(p, vars, t, nil, 0)); why != "" {
				return why
			}
		}
		if len(rule.recipe) == 0 {
			return ""
		}
		lines := make([]string, 0, len(rule.recipe))
		for _, l := range rule.recipe {
			l = strings.TrimLeft(mf.expand(l, vars, t, rule.prereqs, 0), " \t")
			l = strings.TrimLeft(l, "@-+ \t") // echo off, ignore errors, always run
			if l != "" {
				lines = append(lines, l)
			}
		}
		res.Steps = append(res.Steps, Step{From: name + "#" + t, Script: strings.Join(lines, "\n"), Dir: fileDir, File: abs})
		return ""
	})
	if why != "" {
		return Result{Kind: "make", Why: why}, true
	}
	return res, true
}
