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
	lines := false
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
			lines = true
			i++
		case strings.HasPrefix(s, "--replace="):
			repl, lines = strings.TrimPrefix(s, "--replace="), true
		case s == "-i":
			repl, lines = "{}", true
		case strings.HasPrefix(s, "-I"):
			repl, lines = s[2:], true
		case s == "-0" || s == "--null" || s == "-d" || strings.HasPrefix(s, "--delimiter"):
			lines = true
			if s == "-d" {
				i++
			}
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
	items, known := a.stdinItems(redirs, lines)
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
