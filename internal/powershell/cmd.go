package powershell

import (
	"strings"
)

// Windows hands command lines to cmd.exe as often as to PowerShell
// (cmd /c "rd /s /q dir", and PowerShell scripts call it too), so the
// same reading is done for its built-in commands.

// CmdScript returns the command line cmd.exe runs: the text after /c or
// /k (with /s, its outer quotes removed); false without one.
func CmdScript(args []string) (string, bool) {
	strip := false
	for i, a := range args {
		if len(a) < 2 || a[0] != '/' {
			return "", false
		}
		switch strings.ToLower(a) {
		case "/c", "/k", "/r":
			line := strings.Join(args[i+1:], " ")
			if strip || strings.Count(line, `"`) == 2 && strings.HasPrefix(line, `"`) && strings.HasSuffix(line, `"`) {
				line = strings.TrimSuffix(strings.TrimPrefix(line, `"`), `"`)
			}
			return line, true
		case "/s":
			strip = true
		}
	}
	return "", false
}

// TranslateCmd returns the POSIX shell script a cmd.exe command line
// amounts to: rd /s /q P reads as rm -r -f P, type P as cat P, set as
// env, certutil -urlcache -f URL F as curl -o F URL. Other commands pass
// through by their name.
func TranslateCmd(src string) string {
	var out strings.Builder
	var words []string
	var word strings.Builder
	inWord := false
	flushWord := func() {
		if inWord {
			words = append(words, word.String())
		}
		word.Reset()
		inWord = false
	}
	flush := func(op string) {
		flushWord()
		if line := cmdLine(words); line != "" {
			out.WriteString(line)
		} else if len(words) > 0 {
			out.WriteString("true")
		}
		if op != "" && len(words) > 0 {
			out.WriteString(" " + op + " ")
		}
		words = nil
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '^' && i+1 < len(src):
			i++
			word.WriteByte(src[i])
			inWord = true
		case c == '"':
			inWord = true
			for i++; i < len(src) && src[i] != '"'; i++ {
				word.WriteByte(src[i])
			}
		case c == '&' && i+1 < len(src) && src[i+1] == '&', c == '|' && i+1 < len(src) && src[i+1] == '|':
			flush(src[i : i+2])
			i++
		case c == '&' || c == '\n':
			flush(";")
		case c == '|':
			flush("|")
		case c == '>':
			flushWord()
			op := ">"
			if i+1 < len(src) && src[i+1] == '>' {
				op, i = ">>", i+1
			}
			words = append(words, op)
		case c == ' ' || c == '\t' || c == '\r':
			flushWord()
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	flush("")
	return strings.TrimSuffix(strings.TrimSpace(out.String()), ";")
}

// cmdLine translates one cmd.exe command.
func cmdLine(words []string) string {
	var redirs string
	for i := 0; i+1 < len(words); i++ {
		if words[i] == ">" || words[i] == ">>" {
			redirs += " " + words[i] + " " + cmdPath(words[i+1])
			words = append(words[:i:i], words[i+2:]...)
			i--
		}
	}
	if len(words) == 0 {
		return ""
	}
	name := strings.TrimSuffix(strings.ToLower(words[0]), ".exe")
	var flags, ops []string
	for _, w := range words[1:] {
		if len(w) == 2 && w[0] == '/' || len(w) > 2 && w[0] == '/' && w[2] == ':' {
			flags = append(flags, strings.ToLower(w[1:2]))
			continue
		}
		ops = append(ops, w)
	}
	has := func(f string) bool {
		for _, x := range flags {
			if x == f {
				return true
			}
		}
		return false
	}
	paths := func() string {
		var b []string
		for _, o := range ops {
			b = append(b, cmdPath(o))
		}
		return strings.Join(b, " ")
	}
	var line string
	switch name {
	case "rd", "rmdir":
		line = "rmdir " + paths()
		if has("s") {
			line = "rm -r -f " + paths()
		}
	case "del", "erase":
		line = "rm -f " + paths()
		if has("s") {
			line = "rm -r -f " + paths()
		}
	case "type":
		line = "cat " + paths()
	case "copy", "xcopy", "robocopy":
		line = "cp -r " + paths()
	case "move":
		line = "mv " + paths()
	case "cd", "chdir", "pushd":
		line = "cd " + paths()
	case "set":
		switch {
		case len(words) == 1:
			line = "env"
		case strings.Contains(words[1], "="):
			n, v, _ := strings.Cut(strings.Join(words[1:], " "), "=")
			if !shellName(n) {
				return "true"
			}
			line = "export " + n + "=" + quote(cmdVars(v))
		default:
			line = "printenv " + quote(words[1])
		}
	case "echo":
		var b []string
		for _, w := range words[1:] {
			b = append(b, expandCmd(w))
		}
		line = strings.TrimSpace("echo " + strings.Join(b, " "))
	case "certutil":
		// certutil -urlcache -split -f URL [FILE] downloads.
		var url, file string
		for _, w := range words[1:] {
			switch {
			case strings.Contains(w, "://"):
				url = w
			case !strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "/") && url != "":
				file = w
			}
		}
		if url == "" {
			break
		}
		line = "curl " + quote(url)
		if file != "" {
			line = "curl -o " + cmdPath(file) + " " + quote(url)
		}
	case "bitsadmin":
		for i, w := range words {
			if strings.Contains(w, "://") && i+1 < len(words) {
				line = "curl -o " + cmdPath(words[i+1]) + " " + quote(w)
			}
		}
	case "start", "call":
		rest := words[1:]
		if name == "start" && len(rest) > 0 && rest[0] == "" {
			rest = rest[1:] // start "" prog: the window title
		}
		for len(rest) > 0 && strings.HasPrefix(rest[0], "/") {
			rest = rest[1:]
		}
		return cmdLine(rest)
	}
	if line == "" {
		b := []string{cmdPath(words[0])}
		for _, w := range words[1:] {
			b = append(b, expandCmd(w))
		}
		line = strings.Join(b, " ")
	}
	return line + redirs
}

// cmdVars replaces %USERPROFILE% and the like with the home directory
// and other %NAME% with $NAME, for a path.
func cmdVars(s string) string {
	for _, h := range []string{"%USERPROFILE%", "%HOMEPATH%", "%HOME%"} {
		if v, ok := cutPrefixFold(s, h); ok {
			s = "~" + v
		}
	}
	return s
}

// cmdPath renders a word that names a path, or a program: POSIX
// separators, the home directory for %USERPROFILE%, $NAME for %NAME%.
func cmdPath(w string) string {
	w = cmdVars(w)
	if strings.Count(w, "%") >= 2 {
		return expandCmd(strings.ReplaceAll(w, `\`, "/"))
	}
	return quotePath(w)
}

// expandCmd renders a word with %NAME% expansions as a double-quoted
// POSIX word, and a word without them quoted.
func expandCmd(w string) string {
	if strings.Count(w, "%") < 2 {
		return quote(w)
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c == '%' {
			if end := strings.IndexByte(w[i+1:], '%'); end > 0 && shellName(w[i+1:i+1+end]) {
				b.WriteString(variable(w[i+1 : i+1+end]))
				i += end + 1
				continue
			}
		}
		if c == '"' || c == '\\' || c == '`' || c == '$' {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	b.WriteByte('"')
	return b.String()
}
