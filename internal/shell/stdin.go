package shell

import (
	"path"
	"slices"
	"strings"
)

// stdinText returns what the commands piped into the statement being
// walked print, or what a here-document or here-string of the command
// holds; ok is false when some of it is unknown.
func (a *analyzer) stdinText(redirs []Redirect) (string, bool) {
	for _, r := range redirs {
		if r.Op == "<<" || r.Op == "<<-" || r.Op == "<<<" {
			if r.Op == "<<<" {
				return r.Body + "\n", true
			}
			return r.Body, true
		}
	}
	if len(a.stdin) == 0 {
		return "", false
	}
	var b strings.Builder
	for _, i := range a.stdin {
		text, ok := a.output(i)
		if !ok {
			return "", false
		}
		b.WriteString(text)
	}
	return b.String(), true
}

// stdinItems splits what is piped into a command (xargs, parallel) into
// its items: separated by sep (a line, or the NUL of xargs -0), or
// blank-separated words when sep is "".
func (a *analyzer) stdinItems(redirs []Redirect, sep string) ([]string, bool) {
	text, ok := a.stdinText(redirs)
	if !ok {
		return nil, false
	}
	if sep == "" {
		return strings.Fields(text), true
	}
	var out []string
	for _, l := range strings.Split(text, sep) {
		if sep == "\n" {
			l = strings.TrimSpace(l)
		}
		if l != "" {
			out = append(out, l)
		}
	}
	return out, true
}

// output returns what command i prints when it can be known: a literal
// echo or printf, cat of a here-document, or the paths find lists.
func (a *analyzer) output(i int) (string, bool) {
	if text, ok := a.printedText(i); ok {
		return text, true
	}
	c := &a.out.Commands[i]
	switch c.Name {
	case "find":
		words := make([]field, len(c.Argv)-1)
		for j, s := range c.Argv[1:] {
			words[j] = field{text: s, dynamic: c.Dynamic[j+1]}
		}
		if outs, ok := findOutputs(words); ok {
			sep := "\n"
			if slices.Contains(c.Argv, "-print0") {
				sep = "\x00" // for xargs -0
			}
			return strings.Join(outs, sep) + sep, true
		}
	case "ls":
		// ls -d lists its operands themselves: ls -d ~/* | xargs rm.
		var ops []string
		listsSelf := false
		for j, s := range c.Argv[1:] {
			switch {
			case strings.HasPrefix(s, "-") && len(s) > 1:
				listsSelf = listsSelf || !strings.HasPrefix(s, "--") && strings.Contains(s, "d") || s == "--directory"
			case c.Dynamic[j+1]:
				return "", false
			default:
				ops = append(ops, s)
			}
		}
		if listsSelf && len(ops) > 0 {
			return strings.Join(ops, "\n") + "\n", true
		}
	}
	return "", false
}

// findOutputs returns the paths find prints, as patterns: each root, or
// root/NAME when -name selects entries, or root/* with -mindepth 1 or a
// -type other than directories. ok is false when a root is unknown.
func findOutputs(args []field) ([]string, bool) {
	var roots []string
	i := 0
	for ; i < len(args); i++ {
		s := args[i].text
		if strings.HasPrefix(s, "-") || s == "(" || s == "!" {
			break
		}
		if args[i].dynamic {
			return nil, false
		}
		roots = append(roots, s)
	}
	if len(roots) == 0 {
		roots = []string{"."}
	}
	name, deep := "", false
	for ; i < len(args); i++ {
		switch args[i].text {
		case "-name", "-iname", "-path", "-ipath", "-wholename", "-regex", "-iregex", "-lname":
			if i+1 < len(args) && name == "" {
				name = args[i+1].text
				if t := args[i].text; strings.Contains(t, "path") || strings.Contains(t, "regex") {
					name = "*" // a path pattern: some entry below the root
				}
			}
		case "-mindepth":
			if i+1 < len(args) && args[i+1].text != "0" {
				deep = true
			}
		case "-type":
			// Only entries of another type than a directory: never the
			// root itself, always something below it.
			if i+1 < len(args) && !strings.Contains(args[i+1].text, "d") {
				deep = true
			}
		}
	}
	out := make([]string, 0, len(roots))
	for _, r := range roots {
		switch {
		case name != "":
			out = append(out, strings.TrimSuffix(r, "/")+"/"+name)
		case deep:
			out = append(out, strings.TrimSuffix(r, "/")+"/*")
		default:
			out = append(out, r)
		}
	}
	return out, true
}

// cleanName is the key under which the text of a file written earlier in
// the script is kept.
func cleanName(name string) string {
	if strings.HasPrefix(name, "<(") {
		return name
	}
	return path.Clean(name)
}
