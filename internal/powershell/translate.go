package powershell

import (
	"encoding/base64"
	"regexp"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Translate returns the POSIX shell script a PowerShell command line
// amounts to, one command line per PowerShell command. Code PowerShell
// would run from a string, a script block or an encoded string is
// translated in turn, to a bounded depth.
//
// The translation is bounded: nested code is quoted once per level, so
// its size is kept within a budget of a few times the input's, and
// complete is false when the budget cut it short.
func Translate(src string) (script string, complete bool) {
	t := translator{budget: 8*len(src) + 64<<10}
	script = t.translate(src, 0)
	return script, !t.cut
}

// translator holds the bytes a translation may still produce, and
// whether a limit left code out.
type translator struct {
	budget int
	cut    bool
}

func (t *translator) translate(src string, depth int) string {
	if depth > maxDepth || t.budget < 0 {
		t.cut = true
		return ""
	}
	out := t.lines(src, depth)
	if t.budget -= len(out); t.budget < 0 {
		t.cut = true
		return ""
	}
	return out
}

// lines translates each pipeline of src onto a line of its own.
func (t *translator) lines(src string, depth int) string {
	var b strings.Builder
	for _, p := range Parse(src) {
		line := t.pipeline(p, depth)
		if line == "" {
			continue
		}
		if b.Len() > 0 {
			switch p.Op {
			case "&&", "||":
				b.WriteString(" " + p.Op + " ")
			default:
				b.WriteString("\n")
			}
		}
		b.WriteString(line)
		if p.Background {
			b.WriteString(" &")
		}
	}
	return b.String()
}

// pipeline translates one pipeline; the commands a stage needs run first
// (a script block's body, a download in an expression) come on lines
// before it.
func (t *translator) pipeline(p Pipeline, depth int) string {
	var stages, before []string
	for i, c := range p.Commands {
		line, extra := t.command(c, i > 0, depth)
		before = append(before, extra...)
		if line != "" {
			stages = append(stages, line)
		}
	}
	out := strings.Join(stages, " | ")
	if len(before) > 0 {
		pre := strings.Join(before, "\n")
		if out == "" {
			return pre
		}
		return pre + "\n" + out
	}
	return out
}

// aliases maps PowerShell's built-in aliases to their cmdlets.
var aliases = map[string]string{
	"rm": "remove-item", "ri": "remove-item", "del": "remove-item", "erase": "remove-item",
	"rd": "remove-item", "rmdir": "remove-item",
	"iwr": "invoke-webrequest", "irm": "invoke-restmethod", "iex": "invoke-expression",
	"gc": "get-content", "cat": "get-content", "type": "get-content",
	"sc": "set-content", "ac": "add-content",
	"saps": "start-process", "start": "start-process",
	"gci": "get-childitem", "ls": "get-childitem", "dir": "get-childitem", "gi": "get-item",
	"cp": "copy-item", "copy": "copy-item", "cpi": "copy-item",
	"mv": "move-item", "move": "move-item", "mi": "move-item",
	"echo": "write-output", "write": "write-output",
	"icm": "invoke-command", "sajb": "start-job",
	"%": "foreach-object", "foreach": "foreach-object", "?": "where-object", "where": "where-object",
	"cd": "set-location", "sl": "set-location", "chdir": "set-location",
	"ni": "new-item", "md": "new-item", "mkdir": "new-item", "sp": "set-itemproperty",
	"kill": "stop-process", "spps": "stop-process",
}

// cmdletName returns the lower-cased name a command word runs, without a
// module qualifier, directory or .exe suffix.
func cmdletName(s string) string {
	if i := strings.LastIndexAny(s, `/\`); i >= 0 {
		s = s[i+1:]
	}
	s = strings.TrimSuffix(strings.ToLower(s), ".exe")
	if c, ok := aliases[s]; ok {
		return c
	}
	return s
}

// command translates one command; inPipe is set when input is piped into
// it. It returns the POSIX command line and the lines that go before.
func (t *translator) command(c Command, inPipe bool, depth int) (string, []string) {
	if len(c.Words) == 0 {
		return "", nil
	}
	first := c.Words[0]
	if first.Group && strings.HasPrefix(first.Text, "{") {
		// & { … } and . { … } run the script block here.
		return t.translate(inner(first.Text), depth+1), nil
	}
	if !c.Call && (first.Group || first.Expand) {
		return t.expression(c.Words, depth)
	}
	if !c.Call && first.Quoted {
		// A string at the head of a pipeline is a value written out.
		line := "printf '%s\\n'"
		for _, w := range c.Words {
			line += " " + t.render(w, depth)
		}
		return line + redirects(c.Redirects), nil
	}
	if keywords[strings.ToLower(first.Text)] && !c.Call && !inPipe {
		return t.control(c.Words, depth), nil
	}
	name := cmdletName(first.Text)
	as := params(c.Words[1:])
	var argv []string
	var before []string
	switch name {
	case "remove-item":
		argv = []string{"rm"}
		flags := ""
		for _, a := range as {
			n := a.name
			if n != "" && (strings.HasPrefix("recurse", n) || n == "rf" || n == "fr") {
				flags += "r"
			}
			if n != "" && (strings.HasPrefix("force", n) || n == "rf" || n == "fr") {
				flags += "f"
			}
		}
		if strings.Contains(flags, "r") {
			argv = append(argv, "-r")
		}
		if strings.Contains(flags, "f") {
			argv = append(argv, "-f")
		}
		ps := t.paths(as, depth, "path", "literalpath")
		if len(ps) == 0 && inPipe {
			// The items piped in are removed: gci ~ | Remove-Item.
			argv = append([]string{"xargs"}, argv...)
		}
		argv = append(argv, ps...)
	case "invoke-webrequest", "invoke-restmethod":
		argv = []string{"curl"}
		if m, ok := named(as, "method", 2); ok {
			argv = append(argv, "-X", t.render(m, depth))
		}
		if v, ok := named(as, "body", 1); ok {
			argv = append(argv, "--data", t.render(v, depth))
		} else if inPipe {
			// What is piped in is the body: gc f | irm -Method Post u.
			argv = append(argv, "--data-binary", "@-")
		}
		if v, ok := named(as, "infile", 2); ok {
			argv = append(argv, "-T", t.pathWord(v, depth))
		}
		if v, ok := named(as, "outfile", 1); ok {
			argv = append(argv, "-o", t.pathWord(v, depth))
		}
		if v, ok := named(as, "uri", 2); ok {
			argv = append(argv, t.render(v, depth))
		} else if v, ok := positional(as, 0); ok {
			argv = append(argv, t.render(v, depth))
		}
	case "invoke-expression":
		return t.invokeExpression(as, inPipe, depth), nil
	case "get-content":
		argv = []string{"cat"}
		ps := t.paths(as, depth, "path", "literalpath")
		if len(ps) == 0 && inPipe {
			argv = []string{"xargs", "cat"}
		}
		argv = append(argv, ps...)
	case "set-content", "add-content", "out-file":
		return t.writeFile(name, as, depth), nil
	case "start-process":
		return t.startProcess(as, depth), nil
	case "get-childitem", "get-item":
		p, ok := named(as, "path", 1)
		if !ok {
			p, ok = positional(as, 0)
		}
		if ok {
			if v, isEnv := envDrive(p.Text); isEnv {
				if v == "" {
					return "env", nil
				}
				return "printenv " + quote(v), nil
			}
		}
		// Items are listed by their full path, as the objects
		// Get-ChildItem passes on name them: find, not ls.
		argv = append([]string{"find"}, t.paths(as, depth, "path", "literalpath")...)
		if len(argv) == 1 {
			argv = append(argv, ".")
		}
		recurse := false
		for _, a := range as {
			recurse = recurse || a.name != "" && strings.HasPrefix("recurse", a.name)
		}
		if !recurse {
			argv = append(argv, "-maxdepth", "1")
		}
	case "copy-item", "move-item":
		argv = []string{"cp", "-r"}
		if name == "move-item" {
			argv = []string{"mv"}
		}
		argv = append(argv, t.paths(as, depth, "path", "literalpath", "destination")...)
	case "write-output", "write-host":
		argv = []string{"echo"}
		for _, a := range as {
			if a.name == "" {
				argv = append(argv, t.render(a.val, depth))
			}
		}
	case "set-location":
		argv = append([]string{"cd"}, t.paths(as, depth, "path", "literalpath")...)
	case "new-item", "new-itemproperty", "set-itemproperty":
		return t.item(name, as, depth)
	case "remove-itemproperty":
		// A registry value deleted is what reg delete /v does.
		path, ok := named(as, "path", 1)
		if !ok {
			path, ok = positional(as, 0)
		}
		if !ok || !registry.MatchString(path.Text) {
			return "", nil
		}
		line := "reg delete " + quote(registryKey(path.Text))
		if n, ok := named(as, "name", 1); ok {
			line += " /v " + t.render(n, depth)
		}
		return line + " /f", nil
	case "new-scheduledtaskaction":
		// The program a scheduled task will run: read as a command.
		if x, ok := named(as, "execute", 1); ok {
			a, _ := named(as, "argument", 1)
			return t.commandLine(x, a.Text, depth), nil
		}
		return "", nil
	case "register-scheduledtask", "register-scheduledjob":
		n, _ := named(as, "taskname", 1)
		if n.Text == "" {
			n, _ = positional(as, 0)
		}
		line := "schtasks /create /tn " + quote(n.Text)
		var before []string
		for _, a := range as {
			if strings.HasPrefix(a.val.Text, "{") && a.val.Group {
				before = append(before, "sh -c "+quote(t.translate(inner(a.val.Text), depth+1)))
			}
		}
		return line, before
	case "new-service":
		n, _ := named(as, "name", 1)
		line := "sc create " + quote(n.Text)
		if b, ok := named(as, "binarypathname", 1); ok {
			line += " binPath= " + t.render(b, depth)
		}
		return line, nil
	case "invoke-command", "start-job", "foreach-object", "where-object":
		return t.block(name, as, depth)
	default:
		argv = []string{quote(first.Text)}
		for _, w := range c.Words[1:] {
			if strings.HasPrefix(w.Text, "{") && w.Group {
				// A script block given to any command runs, here or
				// elsewhere: its body is read as a script of its own.
				body := t.translate(inner(w.Text), depth+1)
				if body != "" {
					before = append(before, "sh -c "+quote(body))
				}
				argv = append(argv, quote(body))
				continue
			}
			argv = append(argv, t.render(w, depth))
		}
	}
	return strings.Join(argv, " ") + redirects(c.Redirects), before
}

func redirects(rs []Redirect) string {
	var b strings.Builder
	for _, r := range rs {
		b.WriteString(" " + r.Op + " " + quotePath(r.Target))
	}
	return b.String()
}

// arg is a named parameter with its value, or a positional argument.
type arg struct {
	name string // lower-cased, without the dash; "" for a positional
	val  Word
	has  bool
}

// switches are the common parameters that take no value.
var switches = []string{
	"recurse", "force", "confirm", "whatif", "verbose", "debug", "passthru", "raw", "append",
	"nonewline", "usebasicparsing", "wait", "nonewwindow", "asjob", "noclobber", "nologo",
	"noprofile", "noninteractive", "disablekeepalive", "skipcertificatecheck", "rf", "fr",
	"hidden", "directory", "file", "system", "readonly", "sta", "mta",
}

// isParam reports whether a word is a -Name parameter.
func isParam(w Word) bool {
	if w.Quoted || w.Group || w.Expand || len(w.Text) < 2 || w.Text[0] != '-' {
		return false
	}
	c := w.Text[1]
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// params splits a command's words into named parameters and positional
// arguments. A parameter takes the next word as its value unless it is a
// known switch or the next word is a parameter too.
func params(ws []Word) []arg {
	var out []arg
	for i := 0; i < len(ws); i++ {
		w := ws[i]
		if !isParam(w) {
			out = append(out, arg{val: w})
			continue
		}
		if n, v, ok := strings.Cut(w.Text[1:], ":"); ok {
			out = append(out, arg{name: strings.ToLower(n), val: Word{Text: v}, has: v != ""})
			continue
		}
		name := strings.ToLower(w.Text[1:])
		a := arg{name: name}
		if !isSwitch(name) && i+1 < len(ws) && !isParam(ws[i+1]) {
			a.val, a.has = ws[i+1], true
			i++
		}
		out = append(out, a)
		for a.has && i+1 < len(ws) && ws[i+1].Listed {
			// -ArgumentList '-c', 'x': the array's other elements.
			i++
			out = append(out, arg{name: name, val: ws[i], has: true})
		}
	}
	return out
}

// valued are parameters that take a value although a switch starts with
// their name (-Verb, not -Verbose).
var valued = []string{"verb", "path", "value", "name", "filter", "include", "exclude", "encoding", "uri", "method", "body", "outfile", "infile", "headers", "argumentlist", "filepath", "itemtype", "destination", "computername", "scriptblock", "scope", "credential", "propertytype", "source"}

func isSwitch(name string) bool {
	if contains(valued, name) {
		return false
	}
	for _, s := range switches {
		if strings.HasPrefix(s, name) {
			return true
		}
	}
	return false
}

// named returns the value of the parameter that canon abbreviates to at
// least min letters.
func named(as []arg, canon string, min int) (Word, bool) {
	for _, a := range as {
		if a.has && len(a.name) >= min && strings.HasPrefix(canon, a.name) {
			return a.val, true
		}
	}
	return Word{}, false
}

// positional returns the i-th positional argument.
func positional(as []arg, i int) (Word, bool) {
	for _, a := range as {
		if a.name == "" {
			if i == 0 {
				return a.val, true
			}
			i--
		}
	}
	return Word{}, false
}

// paths returns the rendered path arguments: the values of the named path
// parameters, then the positionals.
func (t *translator) paths(as []arg, depth int, names ...string) []string {
	var out []string
	for _, a := range as {
		if a.name == "" {
			out = append(out, t.pathWord(a.val, depth))
			continue
		}
		for _, n := range names {
			if a.has && strings.HasPrefix(n, a.name) && len(a.name) >= 2 {
				out = append(out, t.pathWord(a.val, depth))
				break
			}
		}
	}
	return out
}

// invokeExpression translates iex: code piped in runs as sh reads its
// standard input; code given as an argument is translated as a script.
func (t *translator) invokeExpression(as []arg, inPipe bool, depth int) string {
	w, ok := named(as, "command", 1)
	if !ok {
		w, ok = positional(as, 0)
	}
	if !ok {
		if inPipe {
			return "sh"
		}
		return ""
	}
	if w.Group {
		if code, ok := base64Code(w.Text); ok {
			// A string decoded from base64 and run: its decoded text is
			// the script.
			return "sh -c " + quote(t.translate(code, depth+1))
		}
		if x := t.groupPosix(w.Text, depth); x != "" {
			return "sh -c \"$(" + x + ")\""
		}
	}
	if w.Expand {
		return "sh -c " + t.render(w, depth)
	}
	return "sh -c " + quote(t.translate(w.Text, depth+1))
}

// writeFile translates Set-Content, Add-Content and Out-File.
func (t *translator) writeFile(name string, as []arg, depth int) string {
	op := ">"
	for _, a := range as {
		if a.name != "" && strings.HasPrefix("append", a.name) {
			op = ">>"
		}
	}
	if name == "add-content" {
		op = ">>"
	}
	path, ok := named(as, "path", 1)
	if !ok {
		path, ok = named(as, "filepath", 1)
	}
	if !ok {
		path, ok = named(as, "literalpath", 1)
	}
	valuePos := 1
	if !ok {
		path, ok = positional(as, 0)
	} else {
		valuePos = 0
	}
	if !ok {
		return ""
	}
	value, hasValue := named(as, "value", 1)
	if !hasValue {
		value, hasValue = named(as, "inputobject", 1)
	}
	if !hasValue && name != "out-file" {
		value, hasValue = positional(as, valuePos)
	}
	target := " " + op + " " + t.pathWord(path, depth)
	if hasValue {
		return "printf '%s\\n' " + t.render(value, depth) + target
	}
	return "cat" + target
}

// startProcess translates Start-Process FILE [-ArgumentList ARGS]; -Verb
// RunAs runs it as an administrator, as sudo does.
func (t *translator) startProcess(as []arg, depth int) string {
	file, ok := named(as, "filepath", 1)
	argPos := 0
	if !ok {
		file, ok = positional(as, 0)
		argPos = 1
	}
	if !ok {
		return ""
	}
	line := t.pathWord(file, depth)
	if v, ok := named(as, "verb", 1); ok && strings.EqualFold(v.Text, "runas") {
		line = "sudo " + line
	}
	var list []Word
	for _, a := range as {
		if a.has && (strings.HasPrefix("argumentlist", a.name) || a.name == "args") {
			list = append(list, a.val)
		}
	}
	if len(list) == 0 {
		if w, ok := positional(as, argPos); ok {
			list = append(list, w)
		}
	}
	if len(list) == 1 && !list[0].Group {
		// One string is the command line the process parses itself.
		return strings.Replace(line, t.pathWord(file, depth), t.commandLine(file, list[0].Text, depth), 1)
	}
	for _, w := range list {
		line += " " + t.render(w, depth)
	}
	return line
}

// registry matches a path in the Windows registry.
var registry = regexp.MustCompile(`(?i)^(Registry::)?(HK(CU|LM|CR|U|CC)|HKEY_[A-Z_]+):?[\\/]`)

// registryKey is a registry path as reg names it: HKCU:/Software/X is
// HKCU\Software\X.
func registryKey(p string) string {
	return strings.ReplaceAll(strings.Replace(strings.TrimPrefix(p, "Registry::"), ":", "", 1), "/", `\`)
}

// item translates New-Item, New-ItemProperty and Set-ItemProperty: a
// registry value is what reg add sets; a file or directory is made.
func (t *translator) item(name string, as []arg, depth int) (string, []string) {
	path, ok := named(as, "path", 1)
	if !ok {
		path, ok = positional(as, 0)
	}
	if !ok {
		return "", nil
	}
	if registry.MatchString(path.Text) {
		line := "reg add " + quote(registryKey(path.Text))
		if n, ok := named(as, "name", 1); ok {
			line += " /v " + t.render(n, depth)
		}
		if v, ok := named(as, "value", 1); ok {
			line += " /d " + t.render(v, depth)
		}
		return line, nil
	}
	if name != "new-item" {
		return "", nil
	}
	if it, ok := named(as, "itemtype", 1); ok && strings.EqualFold(it.Text, "directory") {
		return "mkdir -p " + t.pathWord(path, depth), nil
	}
	if v, ok := named(as, "value", 1); ok {
		return "printf '%s\\n' " + t.render(v, depth) + " > " + t.pathWord(path, depth), nil
	}
	return "touch " + t.pathWord(path, depth), nil
}

// block translates the cmdlets that run a script block: on another
// computer (Invoke-Command -ComputerName), as a background job, or once
// for each item piped in.
func (t *translator) block(name string, as []arg, depth int) (string, []string) {
	var body string
	for _, a := range as {
		if strings.HasPrefix(a.val.Text, "{") && a.val.Group {
			body = t.translate(inner(a.val.Text), depth+1)
			break
		}
	}
	switch name {
	case "invoke-command":
		if body == "" {
			return "", nil
		}
		host, ok := named(as, "computername", 1)
		if !ok {
			host, ok = named(as, "cn", 2)
		}
		if !ok {
			host, ok = named(as, "hostname", 1)
		}
		if ok {
			return "ssh " + t.render(host, depth) + " " + quote(body), nil
		}
		return "sh -c " + quote(body), nil
	case "start-job":
		if body == "" {
			return "", nil
		}
		return "nohup sh -c " + quote(body) + " &", nil
	}
	if body == "" {
		return "cat", nil
	}
	return "while read -r _; do " + body + "\ndone", nil
}

// envDrive reports whether a path is on the env: drive, and the variable
// it names ("" for the whole drive).
func envDrive(p string) (string, bool) {
	v, ok := cutPrefixFold(p, "env:")
	if !ok {
		return "", false
	}
	return strings.Trim(v, `\/*`), true
}

// expression translates a statement that is an expression: an
// assignment, a method call, a .NET static call. What it fetches, reads,
// writes or decodes is found by the calls it makes.
func (t *translator) expression(ws []Word, depth int) (string, []string) {
	first := ws[0]
	rest := ws[1:]
	target := ""
	if first.Expand && !first.Group {
		text := first.Text
		if name, value, ok := strings.Cut(text, "="); ok && len(rest) == 0 {
			target = name
			rest = []Word{{Text: value, Quoted: first.Quoted}}
		} else if len(rest) > 0 && rest[0].Text == "=" {
			target = text
			rest = rest[1:]
		}
	}
	if target != "" {
		name := strings.TrimPrefix(target, "$")
		export := ""
		if v, ok := cutPrefixFold(name, "env:"); ok {
			name, export = v, "export "
		}
		if !shellName(name) || len(rest) == 0 {
			return "", nil
		}
		value := ""
		switch {
		case len(rest) == 1 && !rest[0].Group && (rest[0].Quoted || rest[0].Expand):
			value = t.render(rest[0], depth)
		default:
			line, before := t.command(Command{Words: rest}, false, depth)
			if line == "" {
				return "", before
			}
			value = "\"$(" + line + ")\""
			return export + name + "=" + value, before
		}
		return export + name + "=" + value, nil
	}
	if len(ws) == 1 && first.Expand && !first.Group {
		// A value alone on a line is written out: $env:TOKEN prints it.
		return "echo " + t.render(first, depth), nil
	}
	var lines []string
	for _, w := range ws {
		if !w.Group {
			lines = append(lines, calls(w.Text)...)
		} else if x := t.groupPosix(w.Text, depth); x != "" {
			lines = append(lines, x)
		}
	}
	return strings.Join(lines, "\n"), nil
}

// shellName reports whether s can name a POSIX shell variable.
func shellName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// The .NET calls that fetch, send, read, write, delete or dump the
// environment, as the POSIX command that does the same.
var (
	downloadCall = regexp.MustCompile(`(?i)\.Download(?:String|Data|FileTaskAsync|StringTaskAsync)?\(\s*['"]([^'"]+)['"]`)
	downloadFile = regexp.MustCompile(`(?i)\.DownloadFile\(\s*['"]([^'"]+)['"]\s*,\s*['"]([^'"]+)['"]`)
	uploadCall   = regexp.MustCompile(`(?i)\.Upload(?:String|Data|Values)\(\s*['"]([^'"]+)['"]`)
	uploadFile   = regexp.MustCompile(`(?i)\.UploadFile\(\s*['"]([^'"]+)['"]\s*,\s*(?:['"][A-Za-z]+['"]\s*,\s*)?['"]([^'"]+)['"]`)
	envDump      = regexp.MustCompile(`(?i)\[(System\.)?Environment\]::GetEnvironmentVariables\(`)
	envRead      = regexp.MustCompile(`(?i)\[(System\.)?Environment\]::GetEnvironmentVariable\(\s*['"](\w+)['"]`)
	fileRead     = regexp.MustCompile(`(?i)\[(System\.)?IO\.File\]::(?:ReadAll\w*|OpenRead|Copy)\(\s*['"]([^'"]+)['"]`)
	fileWrite    = regexp.MustCompile(`(?i)\[(System\.)?IO\.File\]::(?:WriteAll\w*|AppendAll\w*|Create|OpenWrite)\(\s*['"]([^'"]+)['"]`)
	dirDelete    = regexp.MustCompile(`(?i)\[(System\.)?IO\.Directory\]::Delete\(\s*['"]([^'"]+)['"]`)
)

// calls lists the POSIX commands for the .NET calls in an expression.
func calls(text string) []string {
	var out []string
	for _, m := range downloadFile.FindAllStringSubmatch(text, 8) {
		out = append(out, "curl -o "+quotePath(m[2])+" "+quote(m[1]))
	}
	for _, m := range downloadCall.FindAllStringSubmatch(text, 8) {
		out = append(out, "curl "+quote(m[1]))
	}
	for _, m := range uploadFile.FindAllStringSubmatch(text, 8) {
		out = append(out, "curl -T "+quotePath(m[2])+" "+quote(m[1]))
	}
	for _, m := range uploadCall.FindAllStringSubmatch(text, 8) {
		out = append(out, "curl --data-binary @- "+quote(m[1]))
	}
	if envDump.MatchString(text) {
		out = append(out, "env")
	}
	for _, m := range envRead.FindAllStringSubmatch(text, 8) {
		out = append(out, "printenv "+quote(m[2]))
	}
	for _, m := range fileRead.FindAllStringSubmatch(text, 8) {
		out = append(out, "cat "+quotePath(m[2]))
	}
	for _, m := range fileWrite.FindAllStringSubmatch(text, 8) {
		out = append(out, "printf x > "+quotePath(m[2]))
	}
	for _, m := range dirDelete.FindAllStringSubmatch(text, 8) {
		out = append(out, "rm -r -f "+quotePath(m[2]))
	}
	return out
}

// base64Literal finds [Convert]::FromBase64String('…') with a literal.
var base64Literal = regexp.MustCompile(`(?i)FromBase64String\(\s*['"]([A-Za-z0-9+/=\s]+)['"]`)

// base64Code returns the script an expression decodes from a base64
// literal.
func base64Code(text string) (string, bool) {
	m := base64Literal.FindStringSubmatch(text)
	if m == nil {
		return "", false
	}
	return Decode(strings.Join(strings.Fields(m[1]), ""))
}

// Decode decodes base64 text as PowerShell encodes scripts: UTF-16LE
// (-EncodedCommand), or UTF-8 when the bytes are not UTF-16.
func Decode(s string) (string, bool) {
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		if raw, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "=")); err != nil {
			return "", false
		}
	}
	if len(raw) >= 2 && len(raw)%2 == 0 && raw[1] == 0 {
		u := make([]uint16, len(raw)/2)
		for i := range u {
			u[i] = uint16(raw[2*i]) | uint16(raw[2*i+1])<<8
		}
		return string(utf16.Decode(u)), true
	}
	if !utf8.Valid(raw) {
		return "", false
	}
	return string(raw), true
}

// groupPosix translates a group: the .NET calls it makes when it makes
// any ((New-Object Net.WebClient).DownloadString(u)), else the pipeline
// inside its brackets ((iwr u).Content).
func (t *translator) groupPosix(text string, depth int) string {
	if c := calls(text); len(c) > 0 {
		return strings.Join(c, "\n")
	}
	if body := groupBody(text); body != "" {
		return t.translate(body, depth+1)
	}
	return ""
}

// groupBody returns the text inside a group's first brackets:
// (iwr x).Content gives iwr x.
func groupBody(text string) string {
	t := strings.TrimLeft(text, "$@")
	if t == "" || (t[0] != '(' && t[0] != '{') {
		return ""
	}
	r := reader{src: t}
	r.balanced()
	end := r.pos
	if c := t[end-1]; end > 1 && (c == ')' || c == '}') {
		end-- // the closer; an unclosed group runs to the end
	}
	return strings.TrimSpace(t[1:end])
}

// inner returns the text of a script block without its braces.
func inner(text string) string {
	return groupBody(text)
}

// keywords start a statement that is control flow, not a command.
var keywords = map[string]bool{
	"while": true, "for": true, "foreach": true, "do": true, "until": true, "if": true,
	"elseif": true, "else": true, "try": true, "catch": true, "finally": true, "switch": true,
	"function": true, "filter": true, "trap": true,
}

// endlessCondition matches a loop condition that is always true.
var endlessCondition = regexp.MustCompile(`(?i)^\(\s*(\$true|1)\s*\)$`)

// control translates a control-flow statement: the conditions and script
// blocks in it run, in order; a loop whose condition is always true
// becomes while :, so that what it repeats is known to repeat.
func (t *translator) control(ws []Word, depth int) string {
	var lines []string
	endless := false
	for i, w := range ws {
		if !w.Group {
			continue
		}
		if strings.HasPrefix(w.Text, "{") {
			if x := t.translate(inner(w.Text), depth+1); x != "" {
				lines = append(lines, x)
			}
			continue
		}
		if i > 0 && (strings.EqualFold(ws[i-1].Text, "while") || strings.EqualFold(ws[i-1].Text, "for")) && endlessCondition.MatchString(w.Text) {
			endless = true
		}
		if b := groupBody(w.Text); strings.HasPrefix(b, "$") && !strings.ContainsAny(b, "( ") {
			continue // a value tested, not written out: if ($env:TOKEN)
		}
		if x := t.groupPosix(w.Text, depth); x != "" {
			lines = append(lines, x)
		}
	}
	body := strings.Join(lines, "\n")
	if endless && body != "" {
		return "while :; do\n" + body + "\ndone"
	}
	return body
}

// commandLine renders a program and the one string of arguments Windows
// hands it: PowerShell's own -Command text stays one script, for the
// shell analysis to read as PowerShell again; other programs' arguments
// are split as a shell would.
func (t *translator) commandLine(exe Word, args string, depth int) string {
	line := t.pathWord(exe, depth)
	if args == "" {
		return line
	}
	if n := cmdletName(exe.Text); n == "powershell" || n == "pwsh" {
		if code, stdin, ok := Script(strings.Fields(args), n == "powershell"); ok && !stdin {
			return "pwsh -c " + quote(code)
		}
	}
	return line + " " + args
}
