package shell

import (
	"regexp"
	"strings"
)

// ViaExpect marks a command an expect script starts (spawn) or types into
// a program it started (send).
const ViaExpect = "expect"

// lookupSubst matches a command substitution that only looks a program up
// ("$(which git)", `command -v rm`): the program it prints is the one run.
var lookupSubst = regexp.MustCompile("^(?:\\$\\(|`)\\s*(?:which|command\\s+-[vV]|type\\s+-[pP]|whence\\s+-p|whereis\\s+-b|hash\\s+-t)\\s+([A-Za-z0-9_.+-]+)\\s*(?:\\)|`)$")

// plainRef matches one variable reference or ~, with a literal path
// after it: $HOME, ${HOME}/.ssh, ~/x. Defaults and other operators
// (${A:-/usr/x}) are left unknown.
var plainRef = regexp.MustCompile(`^(~|\$[A-Za-z_][A-Za-z0-9_]*|\$\{[A-Za-z_][A-Za-z0-9_]*\})(/[^$` + "`" + `]*)?$`)

func plainReference(s string) bool { return plainRef.MatchString(s) }

// lookedUp returns the program a first word names when it is a lookup
// substitution, so that "$(which rm)" -rf / is read as rm -rf /.
func lookedUp(f field) (field, bool) {
	if !f.dynamic || !f.subst {
		return f, false
	}
	m := lookupSubst.FindStringSubmatch(f.text)
	if m == nil {
		return f, false
	}
	return field{text: m[1]}, true
}

// expandAlias runs the text an alias defined earlier in the script stands
// for, with the words after it, as a shell given aliases would (bash -c
// expands them only with expand_aliases set; the analysis errs on the
// side of finding too much).
func (a *analyzer) expandAlias(idx int, words []field, sc scope) {
	if len(words) == 0 || words[0].dynamic || a.aliases == nil {
		return
	}
	name := words[0].text
	value, ok := a.aliases[name]
	if !ok || a.expanding[name] {
		return
	}
	var b strings.Builder
	b.WriteString(value)
	for _, w := range words[1:] {
		b.WriteByte(' ')
		if w.dynamic {
			b.WriteString(w.text) // as written: $x stays an expansion
		} else {
			b.WriteString(shellQuote(w.text))
		}
	}
	if a.expanding == nil {
		a.expanding = map[string]bool{}
	}
	a.expanding[name] = true // alias ls='ls -F' does not expand again
	a.script(b.String(), sc.nested(ViaAlias, idx), false)
	delete(a.expanding, name)
}

func (a *analyzer) defineAlias(name, value string) {
	if a.aliases == nil {
		a.aliases = map[string]string{}
	}
	a.aliases[name] = value
}

func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`;&|<>()*?[]{}~#!") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// expect reads an expect script: what spawn starts runs, and what send
// types into a started program runs there too when that program is a
// shell or a remote login.
func (a *analyzer) expect(idx int, args []field, redirs []Redirect, sc scope) {
	var script string
	if s, ok := optionValue(args, 'c', ""); ok {
		if s.dynamic {
			a.out.Commands[idx].DynamicCode = true
			return
		}
		script = s.text
	}
	for _, r := range redirs {
		if r.Op == "<<" || r.Op == "<<-" || r.Op == "<<<" {
			script += "\n" + r.Body
		}
	}
	if script == "" {
		return
	}
	for _, line := range tclCommands(script) {
		verb, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
		switch verb {
		case "spawn":
			a.script(tclWords(rest), sc.nested(ViaExpect, idx), true)
		case "send", "exp_send":
			text := strings.TrimSpace(rest)
			for strings.HasPrefix(text, "-") { // send -- "…", send -s
				_, text, _ = strings.Cut(text, " ")
				text = strings.TrimSpace(text)
			}
			a.script(tclString(text), sc.nested(ViaExpect, idx), true)
		}
	}
}

// tclCommands splits a Tcl script at newlines and semicolons outside
// quotes and braces.
func tclCommands(s string) []string {
	var out []string
	var b strings.Builder
	quote, braces := false, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			b.WriteByte(c)
			b.WriteByte(s[i+1])
			i++
			continue
		case c == '"' && braces == 0:
			quote = !quote
		case c == '{' && !quote:
			braces++
		case c == '}' && !quote && braces > 0:
			braces--
		case (c == '\n' || c == ';') && !quote && braces == 0:
			out = append(out, b.String())
			b.Reset()
			continue
		}
		b.WriteByte(c)
	}
	return append(out, b.String())
}

// tclString reads one Tcl word: "…" with \r \n escapes, {…} verbatim.
func tclString(s string) string {
	s = strings.TrimSpace(s)
	switch {
	case strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}"):
		return s[1 : len(s)-1]
	case strings.HasPrefix(s, `"`):
		s = strings.TrimSuffix(s[1:], `"`)
	}
	r := strings.NewReplacer(`\r`, "\n", `\n`, "\n", `\t`, "\t", `\"`, `"`, `\$`, "$", `\\`, `\`)
	return r.Replace(s)
}

// tclWords turns the words of a spawn line into shell text.
func tclWords(s string) string {
	return tclString(strings.Join(strings.Fields(s), " "))
}
