package shell

import "strings"

// xargsValues are the xargs options that take a separate value.
const xargsValues = "adEILnPs"

// xargs unwraps xargs: it returns the command xargs runs with the items
// xargs reads appended, or put in place of the -I replacement string, when
// what is piped into it is known (echo / | xargs rm -rf runs rm -rf /).
// Further items with -I become commands of their own. ok is false when
// xargs runs no command given on its line.
func (a *analyzer) xargs(idx int, words []field, env []Assign, redirs []Redirect, sc scope, bg bool) ([]field, bool) {
	args := words[1:]
	repl := ""
	sep := "" // blanks; "\n" for lines, NUL for -0, -d's delimiter
	i := 0
	for i < len(args) {
		s := args[i].text
		if s == "--" {
			i++
			break
		}
		if len(s) < 2 || s[0] != '-' {
			break
		}
		switch {
		case s == "-I" || s == "--replace":
			if i+1 < len(args) {
				repl = args[i+1].text
			}
			sep = lineSep(sep)
			i++
		case strings.HasPrefix(s, "--replace="):
			repl, sep = strings.TrimPrefix(s, "--replace="), lineSep(sep)
		case s == "-i":
			repl, sep = "{}", lineSep(sep)
		case strings.HasPrefix(s, "-I"):
			repl, sep = s[2:], lineSep(sep)
		case s == "-0" || s == "--null":
			sep = "\x00"
		case strings.HasPrefix(s, "-d") || strings.HasPrefix(s, "--delimiter"):
			d := strings.TrimPrefix(strings.TrimPrefix(s, "--delimiter"), "=")
			if !strings.HasPrefix(s, "--") {
				d = s[2:] // -d: or -d ':'
			}
			if s == "-d" || s == "--delimiter" {
				if i+1 < len(args) {
					d = args[i+1].text
				}
				i++
			}
			sep = xargsDelimiter(d)
		case strings.HasPrefix(s, "--"):
			if contains([]string{"--arg-file", "--max-lines", "--max-args", "--max-procs", "--max-chars", "--process-slot-var", "--eof"}, s) {
				i++
			}
		case len(s) == 2 && strings.IndexByte(xargsValues, s[1]) >= 0:
			i++
		}
		i++
	}
	cmd := args[i:]
	if len(cmd) == 0 {
		return nil, false // xargs alone runs echo
	}
	items, known := a.stdinItems(redirs, sep)
	if !known && repl == "" {
		// printf '%s\0' "$HOME" | xargs -0 rm -rf: the words printed
		// are the items, as written when their value is unknown.
		if words, ok := a.printedWords(sep); ok {
			out := make([]field, 0, len(cmd)+len(words))
			out = append(out, cmd...)
			return append(out, words...), true
		}
	}
	if !known {
		if repl != "" && shellTemplate(joinTexts(cmd)) && strings.Contains(joinTexts(cmd), repl) {
			a.out.Commands[idx].DynamicCode = true
		}
		return cmd, true
	}
	if len(items) == 0 {
		return cmd, true
	}
	if len(items) > maxItems {
		a.limit("xargs reads more than %d items", maxItems)
		items = items[:maxItems]
	}
	if repl == "" {
		out := make([]field, 0, len(cmd)+len(items))
		out = append(out, cmd...)
		for _, it := range items {
			out = append(out, field{text: it})
		}
		return out, true
	}
	for _, it := range items[1:] {
		c := a.reserve(sc)
		if c < 0 {
			break
		}
		a.exec(c, replaceIn(cmd, repl, it), env, redirs, sc, bg)
		a.out.Commands[c].Wrappers = append([]string{"xargs"}, a.out.Commands[c].Wrappers...)
		a.inputs[c] = append(a.inputs[c], a.stdin...)
	}
	return replaceIn(cmd, repl, items[0]), true
}

// lineSep is the separator -I implies: lines, unless -0 or -d chose one.
func lineSep(sep string) string {
	if sep == "" {
		return "\n"
	}
	return sep
}

// xargsDelimiter reads the character of xargs -d: one character or an
// escape (\n, \t, \0, \x0a).
func xargsDelimiter(d string) string {
	if strings.HasPrefix(d, `\`) {
		if d == `\0` {
			return "\x00"
		}
		d = ansiC(d)
	}
	if d == "" {
		return "\n"
	}
	return d[:1]
}

// printedWords returns the words of the one command piped in when it
// prints each as one item (printf '%s\n' or '%s\0' with its separator,
// echo with blank separation), keeping the dynamic mark of each word.
func (a *analyzer) printedWords(sep string) ([]field, bool) {
	if len(a.stdin) != 1 {
		return nil, false
	}
	c := &a.out.Commands[a.stdin[0]]
	var from int
	switch {
	case c.Name == "echo" && sep == "" && len(c.Argv) > 1 && !strings.HasPrefix(c.Argv[1], "-"):
		from = 1
	case c.Name == "printf" && len(c.Argv) > 2 && !c.Dynamic[1] &&
		(ansiC(c.Argv[1]) == "%s"+sep || sep == "" && ansiC(c.Argv[1]) == "%s\n"):
		from = 2
	default:
		return nil, false
	}
	words := make([]field, 0, len(c.Argv)-from)
	for j := from; j < len(c.Argv); j++ {
		words = append(words, field{text: c.Argv[j], dynamic: c.Dynamic[j]})
	}
	return words, true
}

func joinTexts(fs []field) string {
	return strings.Join(textsOf(fs), " ")
}

// replaceIn puts item in place of repl in each word.
func replaceIn(words []field, repl, item string) []field {
	out := make([]field, len(words))
	for i, f := range words {
		out[i] = f
		if strings.Contains(f.text, repl) {
			out[i].text = strings.ReplaceAll(f.text, repl, item)
		}
	}
	return out
}
