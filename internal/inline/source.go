package inline

import (
	"strings"

	"github.com/ahp-opa/ahp-opa/internal/shell"
)

// interpreter describes how a program takes inline code on its command
// line.
type interpreter struct {
	lang *language
	// code lists the short options whose value is code (-c, -e), and
	// codeLong the long ones (--eval).
	code     string
	codeLong []string
	// values lists the short options that take a value (-W, -I), and
	// valuesLong the long ones.
	values     string
	valuesLong []string
	// stops lists the short options after which no inline code follows
	// (python -m module).
	stops string
	// repeat is set when several code options add up (perl -e … -e …).
	repeat bool
	// subcommand is a word after which the code follows (deno eval).
	subcommand string
	// operand is set for awk: the first operand is the program.
	operand bool
}

var interpreters = map[string]*interpreter{
	"python":  {lang: python, code: "c", values: "WXQ", stops: "m"},
	"pypy":    {lang: python, code: "c", values: "WXQ", stops: "m"},
	"node":    {lang: javascript, code: "ep", codeLong: []string{"--eval", "--print"}, values: "r", valuesLong: []string{"--require", "--import", "--input-type", "--loader"}},
	"nodejs":  {lang: javascript, code: "ep", codeLong: []string{"--eval", "--print"}, values: "r", valuesLong: []string{"--require", "--import", "--input-type"}},
	"bun":     {lang: javascript, code: "ep", codeLong: []string{"--eval", "--print"}},
	"deno":    {lang: javascript, subcommand: "eval"},
	"perl":    {lang: perl, code: "eE", values: "MImxiIl0dD", repeat: true},
	"ruby":    {lang: ruby, code: "e", values: "rIECFx", repeat: true},
	"jruby":   {lang: ruby, code: "e", values: "rIECFx", repeat: true},
	"php":     {lang: php, code: "r", values: "dcz", stops: "fS"},
	"lua":     {lang: lua, code: "e", values: "l", repeat: true},
	"luajit":  {lang: lua, code: "e", values: "lbj", repeat: true},
	"rscript": {lang: rlang, code: "e", repeat: true},
	"r":       {lang: rlang, code: "e", values: "f", repeat: true},
	"awk":     {lang: awk, values: "vFf", valuesLong: []string{"--assign", "--field-separator"}, operand: true, stops: "f"},
	"osascript": {
		lang: applescript, code: "e", values: "ls", repeat: true,
	},
}

// interpreterOf finds the interpreter a program name runs: python3.12 is
// python, gawk is awk.
func interpreterOf(name string) *interpreter {
	if it, ok := interpreters[name]; ok {
		return it
	}
	base := strings.TrimRight(name, "0123456789.")
	switch base {
	case "python", "pypy", "perl", "ruby", "php", "lua", "luajit", "node":
		return interpreters[base]
	case "gawk", "mawk", "nawk", "busybox-awk":
		return interpreters["awk"]
	}
	return nil
}

// programOf returns the language and inline code of command i, where the
// code was found, and the indices of the arguments that hold it; nil when
// the command runs no inline code.
func programOf(a *shell.Analysis, i int) (*language, string, []string, []int) {
	c := &a.Commands[i]
	it := interpreterOf(c.Name)
	if it == nil {
		return nil, "", nil, nil
	}
	args := c.Args()
	codes, at, how, stdin := it.parse(args)
	l := it.lang
	if it.lang == applescript && optionIs(args, "-l", "javascript") {
		l = javascript
	}
	if len(codes) > 0 {
		return l, how, codes, at
	}
	if !stdin {
		return nil, "", nil, nil
	}
	for _, r := range c.Redirects {
		if r.Op == "<<" || r.Op == "<<-" || r.Op == "<<<" {
			codes = append(codes, r.Body)
		}
	}
	// Code echoed or cat'ed into the interpreter: echo '…' | python3.
	for _, j := range c.Inputs {
		if j < 0 || j >= len(a.Commands) || a.Commands[j].Parent == i {
			continue
		}
		in := &a.Commands[j]
		switch in.Name {
		case "echo", "printf":
			codes = append(codes, strings.Join(nonOptions(in.Args()), " "))
		case "cat":
			for _, r := range in.Redirects {
				if r.Op == "<<" || r.Op == "<<-" || r.Op == "<<<" {
					codes = append(codes, r.Body)
				}
			}
		}
	}
	return l, "stdin", codes, nil
}

func nonOptions(args []string) []string {
	out := make([]string, 0, len(args))
	for _, a := range args {
		if len(a) > 1 && a[0] == '-' && len(out) == 0 {
			continue
		}
		out = append(out, a)
	}
	return out
}

func optionIs(args []string, opt, value string) bool {
	for i, a := range args {
		if a == opt && i+1 < len(args) && strings.EqualFold(args[i+1], value) {
			return true
		}
	}
	return false
}

// parse reads an interpreter's options. It returns the inline code, the
// option it came from, and whether the code comes from standard input.
func (it *interpreter) parse(args []string) (codes []string, at []int, how string, stdin bool) {
	i := 0
	for i < len(args) {
		s := args[i]
		if it.subcommand != "" {
			if s == it.subcommand && i+1 < len(args) {
				return []string{strings.Join(args[i+1:], " ")}, indexes(i+1, len(args)), s, false
			}
			if !strings.HasPrefix(s, "-") {
				return nil, nil, "", false
			}
			i++
			continue
		}
		if s == "--" {
			i++
			break
		}
		if s == "-" {
			return nil, nil, "", true
		}
		if len(s) < 2 || s[0] != '-' {
			break
		}
		if strings.HasPrefix(s, "--") {
			name, value, has := strings.Cut(s, "=")
			switch {
			case contains(it.codeLong, name):
				if !has && i+1 < len(args) {
					i++
					value = args[i]
				}
				codes, at = append(codes, value), append(at, i)
				how = name
				if !it.repeat {
					return codes, at, how, false
				}
			case contains(it.valuesLong, name) && !has:
				i++
			}
			i++
			continue
		}
		for j := 1; j < len(s); j++ {
			c := s[j]
			if strings.IndexByte(it.stops, c) >= 0 {
				return codes, at, how, false
			}
			if strings.IndexByte(it.code, c) >= 0 {
				value := s[j+1:]
				if value == "" && i+1 < len(args) {
					i++
					value = args[i]
				}
				codes, at = append(codes, value), append(at, i)
				how = "-" + string(c)
				if !it.repeat {
					return codes, at, how, false
				}
				break
			}
			if strings.IndexByte(it.values, c) >= 0 {
				if j == len(s)-1 {
					i++
				}
				break
			}
		}
		i++
	}
	if len(codes) > 0 {
		return codes, at, how, false
	}
	if it.operand {
		if i < len(args) {
			return []string{args[i]}, []int{i}, "program", false
		}
		return nil, nil, "", false
	}
	return nil, nil, "", i >= len(args)
}

func indexes(from, to int) []int {
	out := make([]int, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
