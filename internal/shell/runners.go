package shell

import (
	"strings"
)

// sshValues are the ssh options that take a value.
const sshValues = "BbcDEeFIiJLlmOoPpQRSWw"

// ssh analyses the command ssh runs on the remote host as if typed here:
// ssh joins its words with spaces and the remote shell parses the result.
// With no command, or a remote shell reading standard input, the
// here-document fed to ssh is the script.
func (a *analyzer) ssh(idx int, args []field, redirs []Redirect, sc scope) {
	ops := operandsAfterOptions(args, sshValues, nil)
	if len(ops) == 0 {
		return
	}
	rest := ops[1:] // after the host
	if len(rest) > 0 && rest[0].text == "--" {
		rest = rest[1:]
	}
	if len(rest) > 0 {
		if t, ok := joinKnown(rest); ok {
			a.script(t, sc.nested(ViaShell, idx).at(WhereRemote), false)
		} else {
			a.out.Commands[idx].DynamicCode = true
		}
	}
	if len(rest) == 0 || (len(rest) == 1 && shells[Normalize(rest[0].text)]) {
		a.stdinScripts(idx, redirs, sc.at(WhereRemote))
	}
}

// stdinScripts analyses the here-documents and here-strings fed to a
// command that runs its standard input as a script.
func (a *analyzer) stdinScripts(idx int, redirs []Redirect, sc scope) {
	for _, r := range redirs {
		if r.Op == "<<" || r.Op == "<<-" || r.Op == "<<<" {
			a.script(r.Body, sc.nested(ViaShell, idx), false)
		}
	}
}

// joinKnown joins fields with spaces, as ssh, watch and tmux do before a
// shell parses them; ok is false when a field is unknown.
func joinKnown(fs []field) (string, bool) {
	texts := make([]string, len(fs))
	for i, f := range fs {
		if f.dynamic {
			return "", false
		}
		texts[i] = f.text
	}
	return strings.Join(texts, " "), true
}

// tmuxRunners are the tmux commands whose trailing words are a shell
// command, and the options of each that take a value.
var tmuxRunners = map[string]string{
	"new-session": "censtxyFfeGS", "new": "censtxyFfeGS",
	"new-window": "censtFe", "neww": "censtFe",
	"split-window": "celtFp", "splitw": "celtFp",
	"respawn-pane": "cte", "respawnp": "cte",
	"respawn-window": "cte", "respawnw": "cte",
	"run-shell": "dct", "run": "dct",
	"display-popup": "bcdehsStTwxyBE", "popup": "bcdehsStTwxyBE",
	"pipe-pane": "t", "pipep": "t",
	"if-shell": "t", "if": "t",
}

// tmux analyses the shell commands tmux starts (new-session, split-window,
// run-shell …) and the keys send-keys types into a shell.
func (a *analyzer) tmux(idx int, args []field, sc scope) {
	ops := operandsAfterOptions(args, "LSfTc", nil)
	if len(ops) == 0 {
		return
	}
	sub := ops[0].text
	rest := ops[1:]
	switch sub {
	case "send-keys", "send":
		keys := operandsAfterOptions(rest, "tN", nil)
		var b strings.Builder
		for _, k := range keys {
			switch k.text {
			case "Enter", "C-m", "C-j", "KPEnter":
				b.WriteByte('\n')
				continue
			}
			if k.dynamic {
				a.out.Commands[idx].DynamicCode = true
				return
			}
			b.WriteString(k.text)
			b.WriteByte(' ')
		}
		a.script(b.String(), sc.nested(ViaShell, idx), true)
		return
	}
	values, ok := tmuxRunners[sub]
	if !ok {
		return
	}
	cmd := operandsAfterOptions(rest, values, nil)
	if len(cmd) == 0 {
		return
	}
	child := sc.nested(ViaShell, idx)
	if (sub == "new-session" || sub == "new") && hasShortOption(rest[:len(rest)-len(cmd)], 'd', "") {
		child = child.at(WhereDetached) // a session no client is attached to
	}
	if t, ok := joinKnown(cmd); ok {
		a.script(t, child, false)
	} else {
		a.out.Commands[idx].DynamicCode = true
	}
}

// screen analyses the command screen starts and the text -X stuff types.
func (a *analyzer) screen(idx int, args []field, sc scope) {
	i := 0
	for i < len(args) {
		s := args[i].text
		if len(s) < 2 || s[0] != '-' {
			break
		}
		switch s {
		case "-X":
			rest := args[i+1:]
			if len(rest) >= 2 && rest[0].text == "stuff" {
				if t, ok := joinKnown(rest[1:]); ok {
					t = strings.NewReplacer(`\n`, "\n", `\r`, "\n", "^M", "\n").Replace(t)
					a.script(t, sc.nested(ViaShell, idx), true)
				} else {
					a.out.Commands[idx].DynamicCode = true
				}
			}
			return
		case "-S", "-c", "-t", "-p", "-e", "-h", "-T", "-s", "-Logfile", "-dmS", "-DmS":
			i++ // takes a value
		}
		i++
	}
	if i < len(args) {
		child := sc.nested(ViaShell, idx)
		for _, f := range args[:i] {
			if len(f.text) > 1 && f.text[0] == '-' && strings.ContainsRune(f.text, 'd') && strings.ContainsRune(f.text, 'm') {
				child = child.at(WhereDetached) // screen -dm: started detached
			}
		}
		if c := a.reserve(child); c >= 0 {
			a.exec(c, args[i:], nil, nil, child, false)
		}
	}
}

// parallelValues are the GNU parallel options that take a value.
var parallelValues = []string{
	"-j", "--jobs", "-S", "--sshlogin", "-a", "--arg-file", "--joblog", "--results",
	"-n", "--max-args", "-N", "--colsep", "-d", "--delimiter", "-I", "--replace",
	"--tmpdir", "--timeout", "--delay", "--retries", "--memfree", "--load", "-P",
	"--max-procs", "--halt", "--tag-string", "--env", "--workdir", "--basefile",
}

// parallel analyses the commands GNU parallel runs: its command template
// with each argument from ::: lists or from what is piped into it, each run
// through a shell as parallel does.
func (a *analyzer) parallel(idx int, args []field, redirs []Redirect, sc scope) {
	i := 0
	repl := "{}"
	pipe := false // --pipe: stdin is split into blocks fed to each job, not into arguments
	for i < len(args) {
		s := args[i].text
		if s == ":::" || s == "::::" || len(s) < 2 || s[0] != '-' {
			break
		}
		if s == "--pipe" || s == "--pipepart" {
			pipe = true
		}
		if s == "-I" || s == "--replace" {
			if i+1 < len(args) {
				repl = args[i+1].text
			}
		}
		if contains(parallelValues, s) {
			i++
		}
		i++
	}
	var tmpl, items []field
	for ; i < len(args) && args[i].text != ":::" && args[i].text != "::::"; i++ {
		tmpl = append(tmpl, args[i])
	}
	known := true
	for ; i < len(args); i++ {
		if args[i].text == ":::" || args[i].text == "::::" {
			continue
		}
		items = append(items, args[i])
		known = known && !args[i].dynamic
	}
	if len(tmpl) == 0 {
		return
	}
	t, ok := joinKnown(tmpl)
	if !ok {
		// A known program with unknown arguments (gh api "repos/$R") runs
		// as written, its expansions still unknown; an unknown program or a
		// shell given unknown text runs code the analysis cannot read.
		t = joinTemplate(tmpl)
		if tmpl[0].dynamic || shellTemplate(t) {
			a.out.Commands[idx].DynamicCode = true
			return
		}
	}
	var texts []string
	switch {
	case len(items) == 0 && pipe:
	case len(items) == 0:
		texts, known = a.stdinItems(redirs, "\n")
	default:
		for _, f := range items {
			texts = append(texts, f.text)
		}
	}
	if !known && strings.Contains(t, repl) && shellTemplate(t) {
		a.out.Commands[idx].DynamicCode = true
	}
	if len(texts) == 0 {
		texts = []string{""}
	}
	for _, item := range limitItems(texts) {
		script := t
		if strings.Contains(t, repl) {
			script = strings.ReplaceAll(t, repl, item)
		} else if item != "" {
			script += " " + item
		}
		a.script(script, sc.nested(ViaShell, idx), false)
	}
}

// joinTemplate joins a command template as parallel hands it to a shell,
// an unknown field double-quoted so that its expansions stay one unknown
// word when the text is parsed again.
func joinTemplate(fs []field) string {
	texts := make([]string, len(fs))
	for i, f := range fs {
		texts[i] = f.text
		if f.dynamic {
			texts[i] = `"` + strings.NewReplacer(`"`, `\"`, "`", "\\`", `\`, `\\`).Replace(f.text) + `"`
		}
	}
	return strings.Join(texts, " ")
}

// shellTemplate reports whether a command template runs its text as a
// script (sh -c '{}'), or is the replacement string alone.
func shellTemplate(t string) bool {
	f := strings.Fields(t)
	return len(f) > 0 && (shells[Normalize(f[0])] || f[0] == "eval" || strings.HasPrefix(f[0], "{"))
}

// maxItems bounds the items a loop, xargs or parallel is followed with.
const maxItems = 64

func limitItems(items []string) []string {
	if len(items) > maxItems {
		return items[:maxItems]
	}
	return items
}

// gitCommandKeys are the configuration keys whose value git runs as a
// shell command.
var gitCommandKeys = []string{
	"core.pager", "core.editor", "core.sshcommand", "core.fsmonitor", "core.askpass",
	"sequence.editor", "diff.external", "gpg.program", "gpg.ssh.program",
	"credential.helper", "interactive.difffilter", "ssh.variant",
}

// gitConfig analyses the commands that git -c KEY=VALUE makes git run: an
// alias starting with ! when it is the subcommand, and the pager, editor,
// ssh command, filters and drivers.
func (a *analyzer) gitConfig(idx int, args []field, sc scope) {
	var sets []field
	i := 0
	for i < len(args) {
		s := args[i].text
		if len(s) < 2 || s[0] != '-' {
			break
		}
		switch {
		case s == "-c" && i+1 < len(args):
			sets = append(sets, args[i+1])
			i++
		case strings.HasPrefix(s, "-c") && len(s) > 2:
			sets = append(sets, field{text: s[2:], dynamic: args[i].dynamic})
		case s == "-C" || s == "--git-dir" || s == "--work-tree" || s == "--namespace" || s == "--config-env":
			i++
		}
		i++
	}
	sub := ""
	if i < len(args) {
		sub = args[i].text
	}
	if sub == "config" {
		// git config [--global] KEY VALUE stores the command for every
		// later git call: analysed as if typed, as -c KEY=VALUE is.
		if f, ok := gitConfigSet(args[i+1:]); ok {
			sets = append(sets, f)
			sub = ""
		}
	}
	for _, f := range sets {
		key, value, ok := strings.Cut(f.text, "=")
		if !ok {
			continue
		}
		key = strings.ToLower(key)
		runs := contains(gitCommandKeys, key) || strings.HasPrefix(key, "pager.") ||
			(strings.HasPrefix(key, "filter.") && (strings.HasSuffix(key, ".clean") || strings.HasSuffix(key, ".smudge") || strings.HasSuffix(key, ".process"))) ||
			(strings.HasPrefix(key, "diff.") && (strings.HasSuffix(key, ".textconv") || strings.HasSuffix(key, ".command"))) ||
			(strings.HasPrefix(key, "merge.") && strings.HasSuffix(key, ".driver"))
		if key == "credential.helper" {
			runs = strings.HasPrefix(value, "!")
		}
		if name, isAlias := strings.CutPrefix(key, "alias."); isAlias {
			// A stored alias (sub "") runs whenever it is called.
			runs = (sub == "" || name == strings.ToLower(sub)) && strings.HasPrefix(value, "!")
		}
		if !runs {
			continue
		}
		if f.dynamic {
			a.out.Commands[idx].DynamicCode = true
			continue
		}
		a.script(strings.TrimPrefix(value, "!"), sc.nested(ViaShell, idx), false)
	}
}

// gitConfigSet reads the KEY VALUE that git config [options] [set] KEY
// VALUE stores, as one KEY=VALUE field; false for a read, an unset or a
// listing.
func gitConfigSet(args []field) (field, bool) {
	var ops []field
	for j := 0; j < len(args); j++ {
		s := args[j].text
		switch {
		case s == "--file" || s == "-f" || s == "--blob" || s == "--type" || s == "--default" || s == "--comment" || s == "--value":
			j++
		case s == "--get" || s == "--get-all" || s == "--get-regexp" || s == "--unset" || s == "--unset-all" || s == "-l" || s == "--list" || s == "-e" || s == "--edit" || s == "--remove-section" || s == "--rename-section":
			return field{}, false
		case len(s) > 1 && s[0] == '-':
		default:
			ops = append(ops, args[j])
		}
	}
	if len(ops) > 0 && (ops[0].text == "set") {
		ops = ops[1:]
	}
	if len(ops) < 2 || ops[0].dynamic {
		return field{}, false
	}
	return field{text: ops[0].text + "=" + ops[1].text, dynamic: ops[1].dynamic}, true
}

// runFile analyses a script file written earlier in the same command.
func (a *analyzer) runFile(idx int, f field, sc scope) {
	if text, ok := a.texts[cleanName(f.text)]; ok {
		a.script(text, sc.nested(ViaShell, idx), false)
		return
	}
	if f.dynamic {
		a.out.Commands[idx].DynamicCode = true
	}
}
