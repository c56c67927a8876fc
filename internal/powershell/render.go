package powershell

import (
	"strings"
)

// quote single-quotes a word for a POSIX shell.
func quote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// quotePath quotes a path, leaving a leading ~ bare so that it still
// means the home directory, and with Windows separators made POSIX.
func quotePath(p string) string {
	p = posixPath(strings.ReplaceAll(p, `\`, "/"))
	if rest, ok := strings.CutPrefix(p, "~"); ok && (rest == "" || rest[0] == '/') {
		if rest == "" {
			return "~"
		}
		return "~" + quote(rest)
	}
	return quote(p)
}

// posixPath reads a Windows path as the POSIX one the rules know: a
// user's profile (C:/Users/NAME) is the home directory, a drive's root
// the root.
func posixPath(p string) string {
	if len(p) < 3 || p[1] != ':' || p[2] != '/' || !(p[0] >= 'a' && p[0] <= 'z' || p[0] >= 'A' && p[0] <= 'Z') {
		return p
	}
	rest := p[2:]
	if r, ok := cutPrefixFold(rest, "/users/"); ok {
		if i := strings.IndexByte(r, '/'); i >= 0 {
			return "~" + r[i:]
		}
		return "~"
	}
	return rest
}

// pathWord renders a word that names a path.
func (t *translator) pathWord(w Word, depth int) string {
	if w.Expand && !w.Group {
		return t.expand(strings.ReplaceAll(w.Text, `\`, "/"), depth)
	}
	if w.Group {
		return t.render(w, depth)
	}
	return quotePath(w.Text)
}

// render renders a word for a POSIX shell: a literal quoted, a word with
// variables double-quoted with the variables in POSIX form, a group as
// the command substitution of its translation.
func (t *translator) render(w Word, depth int) string {
	switch {
	case w.Group && strings.HasPrefix(w.Text, "{"):
		return quote(t.translate(inner(w.Text), depth+1))
	case w.Group:
		if x := t.groupPosix(w.Text, depth); x != "" {
			return "\"$(" + x + ")\""
		}
		return quote(w.Text)
	case w.Expand:
		return t.expand(w.Text, depth)
	}
	return quote(w.Text)
}

// homeVars are the variables that name the user's home directory.
var homeVars = map[string]bool{"home": true, "userprofile": true, "homepath": true}

// expand renders text with PowerShell variables as a double-quoted POSIX
// word: $env:NAME and ${env:NAME} become ${NAME}, $(…) the substitution
// of its translation.
func (t *translator) expand(s string, depth int) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '$' {
			if c == '"' || c == '\\' || c == '`' {
				b.WriteByte('\\')
			}
			b.WriteByte(c)
			continue
		}
		rest := s[i+1:]
		switch {
		case strings.HasPrefix(rest, "("):
			r := reader{src: rest}
			r.balanced()
			b.WriteString("$(" + t.translate(groupBody(rest[:r.pos]), depth+1) + ")")
			i += r.pos
		case strings.HasPrefix(rest, "{"):
			end := strings.IndexByte(rest, '}')
			if end < 0 {
				b.WriteString(`\$`)
				continue
			}
			b.WriteString(variable(rest[1:end]))
			i += end + 1
		default:
			j := 0
			for j < len(rest) && (rest[j] == '_' || rest[j] == ':' || rest[j] >= 'a' && rest[j] <= 'z' || rest[j] >= 'A' && rest[j] <= 'Z' || j > 0 && rest[j] >= '0' && rest[j] <= '9') {
				j++
			}
			if j == 0 {
				b.WriteString(`\$`)
				continue
			}
			b.WriteString(variable(rest[:j]))
			i += j
		}
	}
	b.WriteByte('"')
	return b.String()
}

// variable renders a PowerShell variable name as a POSIX expansion.
func variable(name string) string {
	lower := strings.ToLower(name)
	switch lower {
	case "true", "false", "null":
		return "\\$" + lower
	}
	if v, ok := cutPrefixFold(name, "env:"); ok {
		name, lower = v, strings.ToLower(v)
	}
	name = strings.TrimPrefix(name, "script:")
	name = strings.TrimPrefix(name, "global:")
	if homeVars[lower] {
		return "${HOME}"
	}
	if lower == "profile" {
		// The current user's PowerShell profile, run at every start.
		return "${HOME}/Documents/PowerShell/Microsoft.PowerShell_profile.ps1"
	}
	if !shellName(name) {
		return "${PS_VALUE}" // a scope or a provider path: its value is unknown
	}
	return "${" + name + "}"
}

// cutPrefixFold cuts an ASCII prefix matched without regard to case.
// (Lower-casing first would shift byte offsets: some letters change
// length.)
func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}
