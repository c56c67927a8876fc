package shell

import (
	"slices"
	"strings"

	"github.com/ahp-opa/ahp-opa/internal/powershell"
	"mvdan.cc/sh/v3/syntax"
)

// wrapper describes a program that runs the command given as its
// arguments: its options, and how many operands come before the command.
type wrapper struct {
	// values lists the short options that take a value (-u root).
	values string
	// longValues lists the long options that take a separate value.
	longValues []string
	// stops lists short options after which no command runs (sudo -l).
	stops string
	// longStops lists long options after which no command runs.
	longStops []string
	// operands is the number of operands before the command (timeout 5s).
	operands int
	// assigns is set for env: NAME=value words before the command.
	assigns bool
	// dashIsOption is set for env, where a lone "-" means -i.
	dashIsOption bool
}

var wrappers = map[string]wrapper{
	"sudo": {
		values:     "ughCDprtUTR",
		longValues: []string{"--user", "--group", "--close-from", "--chdir", "--prompt", "--role", "--type", "--other-user", "--command-timeout", "--host", "--chroot"},
		stops:      "lvkKeVh",
		longStops:  []string{"--list", "--validate", "--reset-timestamp", "--remove-timestamp", "--edit", "--version", "--help"},
	},
	"doas":         {values: "uC", stops: "L"},
	"pkexec":       {longValues: []string{"--user"}, longStops: []string{"--version", "--help"}},
	"env":          {values: "uCSP", longValues: []string{"--unset", "--chdir", "--split-string"}, assigns: true, dashIsOption: true},
	"command":      {stops: "vV"},
	"builtin":      {},
	"exec":         {values: "a"},
	"nice":         {values: "n", longValues: []string{"--adjustment"}},
	"sg":           {operands: 1},
	"nohup":        {},
	"setsid":       {},
	"time":         {values: "fo", longValues: []string{"--format", "--output"}},
	"timeout":      {values: "sk", longValues: []string{"--signal", "--kill-after"}, longStops: []string{"--help", "--version"}, operands: 1},
	"stdbuf":       {values: "ioe", longValues: []string{"--input", "--output", "--error"}},
	"ionice":       {values: "cn", longValues: []string{"--class", "--classdata"}, stops: "pPu", longStops: []string{"--pid", "--pgid", "--uid"}},
	"chrt":         {values: "TPD", stops: "pm", operands: 1},
	"taskset":      {stops: "p", operands: 1},
	"xargs":        {values: "adEILnPs", longValues: []string{"--arg-file", "--delimiter", "--max-lines", "--max-args", "--max-procs", "--max-chars", "--process-slot-var"}},
	"busybox":      {stops: "l", longStops: []string{"--list", "--help", "--install"}},
	"toybox":       {},
	"unbuffer":     {},
	"chroot":       {longValues: []string{"--userspec", "--groups"}, operands: 1},
	"torsocks":     {values: "aPuptw"},
	"proxychains":  {values: "f"},
	"proxychains4": {values: "f"},
	"caffeinate":   {values: "tw"},
	"runuser":      {values: "ugG", longValues: []string{"--user", "--group", "--supp-group"}},
	// Runners that start a command in another context: a lock, a
	// transient unit, a namespace, a tracer, a sandbox.
	"flock":       {values: "wEo", longValues: []string{"--timeout", "--conflict-exit-code"}, operands: 1},
	"systemd-run": {values: "pEuHMd", longValues: []string{"--property", "--setenv", "--unit", "--host", "--machine", "--description", "--slice", "--uid", "--gid", "--nice", "--working-directory", "--service-type", "--on-active", "--on-boot", "--on-startup", "--on-unit-active", "--on-unit-inactive", "--on-calendar", "--timer-property", "--path-property", "--socket-property", "--slice-inherit"}, stops: "hS", longStops: []string{"--help", "--version", "--shell"}},
	"unshare":     {values: "SGRw", longValues: []string{"--setuid", "--setgid", "--root", "--wd"}},
	"nsenter":     {values: "tSGrw", longValues: []string{"--target", "--setuid", "--setgid"}},
	"setpriv":     {longValues: []string{"--reuid", "--regid", "--groups", "--inh-caps", "--ambient-caps", "--bounding-set", "--securebits", "--pdeathsig", "--selinux-label", "--apparmor-profile"}},
	"strace":      {values: "oeEpPsSuIaXbU", longValues: []string{"--output", "--signal", "--trace", "--attach", "--user", "--string-limit"}},
	"ltrace":      {values: "oeEpPsSuIaXbnAD", longValues: []string{"--output", "--library", "--indent"}},
	"firejail":    {},
	"xvfb-run":    {values: "nfpselw", longValues: []string{"--server-num", "--auth-file", "--xauth-protocol", "--server-args", "--error-file", "--wait"}},
	"dbus-launch": {longValues: []string{"--config-file", "--autolaunch"}},
	// A session bus for one command: how scripts reach gsettings and
	// dconf without a desktop.
	"dbus-run-session": {longValues: []string{"--config-file", "--dbus-daemon"}},
	"catchsegv":        {},
	"faketime":         {values: "f"},
	"sem":              {values: "jP", longValues: []string{"--jobs", "--id"}},
	"nq":               {},
	"tsp":              {values: "LDN"},
	"daemonize":        {values: "aceEloptuvz"},
	"bwrap":            {longValues: []string{"--bind", "--ro-bind", "--dev-bind", "--chdir", "--uid", "--gid", "--hostname", "--setenv", "--unsetenv", "--proc", "--dev", "--tmpfs", "--dir", "--symlink", "--remount-ro", "--seccomp", "--info-fd", "--exec-label", "--file-label", "--lock-file", "--sync-fd", "--block-fd", "--userns-block-fd", "--json-status-fd", "--argv0", "--cap-add", "--cap-drop", "--perms", "--size", "--bind-try", "--ro-bind-try", "--dev-bind-try", "--userns", "--userns2", "--pidns", "--overlay-src", "--overlay", "--tmp-overlay", "--ro-overlay", "--args", "--bind-data", "--ro-bind-data", "--file", "--chmod", "--as-pid-1"}},
}

// subRunners are programs whose subcommand runs the rest of the line as a
// command: uv run pytest, bundle exec rake, nix develop -c make.
var subRunners = map[string]struct {
	sub   []string
	inner wrapper
}{
	"uv":        {[]string{"run"}, wrapper{values: "pw", longValues: []string{"--with", "--python", "--package", "--directory", "--project", "--env-file", "--group", "--extra", "--index", "--index-url", "--extra-index-url", "--with-requirements", "--with-editable"}}},
	"uvx":       {nil, wrapper{longValues: []string{"--from", "--with", "--python"}, longStops: []string{"--generate-shell-completion", "--help", "--version"}}},
	"poetry":    {[]string{"run"}, wrapper{values: "PC", longValues: []string{"--directory", "--project"}}},
	"pipenv":    {[]string{"run"}, wrapper{}},
	"pdm":       {[]string{"run"}, wrapper{values: "p", longValues: []string{"--project"}}},
	"hatch":     {[]string{"run"}, wrapper{values: "e", longValues: []string{"--env"}}},
	"rye":       {[]string{"run"}, wrapper{}},
	"bundle":    {[]string{"exec"}, wrapper{longValues: []string{"--gemfile"}}},
	"conda":     {[]string{"run"}, wrapper{values: "np", longValues: []string{"--name", "--prefix", "--cwd"}}},
	"mamba":     {[]string{"run"}, wrapper{values: "np", longValues: []string{"--name", "--prefix", "--cwd"}}},
	"pueue":     {[]string{"add"}, wrapper{values: "wdgal", longValues: []string{"--working-directory", "--delay", "--group", "--after", "--label", "--priority"}}},
	"direnv":    {[]string{"exec"}, wrapper{operands: 1}},
	"nix":       {[]string{"develop", "shell"}, wrapper{values: "c", longValues: []string{"--command", "--expr", "--file", "--profile", "--impure"}}},
	"dotenv":    {nil, wrapper{values: "ecv", longValues: []string{"--file"}}},
	"doppler":   {[]string{"run"}, wrapper{values: "pc", longValues: []string{"--project", "--config", "--token"}}},
	"op":        {[]string{"run"}, wrapper{longValues: []string{"--env-file", "--account"}}},
	"aws-vault": {[]string{"exec"}, wrapper{values: "d", longValues: []string{"--duration", "--region"}, operands: 1}},
}

// shells are the programs whose -c option or standard input is a shell
// script.
var shells = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true,
	"ash": true, "yash": true, "posh": true, "fish": true, "csh": true, "tcsh": true,
	"rbash": true, "ksh93": true, "pdksh": true, "oksh": true, "loksh": true,
}

// IsShell reports whether a normalised program name is a shell.
func IsShell(name string) bool { return shells[name] }

// unwrap skips a wrapper's options and operands. It returns the index in
// args where the wrapped command starts (-1 when none runs), the
// environment assignments it sets, and, for env -S, a string to split into
// the command line.
func (w wrapper) unwrap(args []field) (int, []Assign, string) {
	var env []Assign
	var split string
	i := 0
	for i < len(args) {
		s := args[i].text
		if s == "--" {
			i++
			break
		}
		if w.assigns && isAssignment(s) {
			name, value, _ := strings.Cut(s, "=")
			env = append(env, Assign{Name: name, Value: value})
			i++
			continue
		}
		if s == "-" && w.dashIsOption {
			i++
			continue
		}
		if len(s) < 2 || s[0] != '-' {
			break
		}
		if strings.HasPrefix(s, "--") {
			name, value, hasValue := strings.Cut(s, "=")
			if contains(w.longStops, name) {
				return -1, env, ""
			}
			if contains(w.longValues, name) && !hasValue {
				if i+1 < len(args) {
					value = args[i+1].text
				}
				i++
			}
			if name == "--split-string" {
				split = value
			}
			i++
			continue
		}
		for j := 1; j < len(s); j++ {
			c := s[j]
			if strings.IndexByte(w.stops, c) >= 0 {
				return -1, env, ""
			}
			if strings.IndexByte(w.values, c) >= 0 {
				value := s[j+1:]
				if value == "" && i+1 < len(args) {
					i++
					value = args[i].text
				}
				if c == 'S' && w.assigns {
					split = value
				}
				break
			}
		}
		i++
	}
	i += w.operands
	if split != "" {
		return min(i, len(args)), env, split
	}
	if i >= len(args) {
		return -1, env, ""
	}
	return i, env, ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// isAssignment reports whether s is NAME=value.
func isAssignment(s string) bool {
	eq := strings.IndexByte(s, '=')
	if eq <= 0 {
		return false
	}
	for i := 0; i < eq; i++ {
		c := s[i]
		if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// exec fills in command idx from its expanded words: it unwraps wrappers,
// then parses any script the command hands to a shell.
func (a *analyzer) exec(idx int, words []field, env []Assign, redirs []Redirect, sc scope, bg bool) {
	var wrapped, marks []string
	// An alias's text is analysed nested; the command stays as written.
	a.expandAlias(idx, words, sc)
	for len(words) > 0 {
		if f, ok := lookedUp(words[0]); ok {
			words = append([]field{f}, words[1:]...)
		}
		if f, ok := toolVariable(words[0]); ok {
			words = append([]field{f}, words[1:]...)
		}
		a.variablePrefix(idx, words, sc)
		name := Normalize(words[0].text)
		w, ok := wrappers[name]
		if !ok {
			n, found := subRunner(name, words[1:])
			if !found {
				break
			}
			wrapped = append(wrapped, name)
			words = words[1+n:]
			continue
		}
		if name == "runuser" && hasShortOption(beforeDashes(words[1:]), 'c', "") {
			break
		}
		if name == "xargs" {
			var ok bool
			if words, ok = a.xargs(idx, words, env, redirs, sc, bg); !ok {
				break
			}
			wrapped = append(wrapped, name)
			continue
		}
		n, extra, split := w.unwrap(words[1:])
		if n < 0 {
			break
		}
		if (name == "flock" || name == "sg") && 1+n < len(words) && (words[1+n].text == "-c" || words[1+n].text == "--command") {
			break // flock FILE -c 'script' runs a script: see nested
		}
		wrapped = append(wrapped, name)
		if name == "systemd-run" && asRoot(words[1:1+n]) {
			// run0 is systemd-run --uid=0: the command runs as root.
			wrapped = append(wrapped, "run0")
		}
		marks = append(marks, wrapperWhere(name, words[1:1+n])...)
		env = append(env, extra...)
		words = words[1+n:]
		if split != "" {
			// env -S 'rm -rf /' splits its argument into a command line.
			sub := a.splitWords(split, sc)
			words = append(sub, words...)
		}
	}
	cmd := &a.out.Commands[idx]
	cmd.Wrappers, cmd.Env, cmd.Redirects, cmd.Background = wrapped, env, redirs, bg
	cmd.Dir = a.dir
	for _, m := range marks {
		sc = sc.at(m)
	}
	cmd.Where = sc.where
	cmd.Argv = make([]string, len(words))
	cmd.Dynamic = make([]bool, len(words))
	for i, f := range words {
		cmd.Argv[i] = f.text
		cmd.Dynamic[i] = f.dynamic
	}
	if len(words) == 0 {
		return
	}
	cmd.Name = Normalize(words[0].text)
	if words[0].dynamic {
		cmd.DynamicCode = true // $x …, $(curl …): the program is not known
	}
	a.recordText(idx, redirs)
	args := words[1:]
	if _, ok := a.funcs[words[0].text]; ok && !slices.Contains(wrapped, "command") && !slices.Contains(wrapped, "builtin") {
		a.callFunction(idx, words[0].text, args, sc)
		return
	}
	switch cmd.Name {
	case "cd", "pushd":
		a.chdir(args)
	case "set":
		a.setParams(args)
	case "shift":
		a.shift(args)
	case "read":
		a.read(idx, args, redirs)
	case "printf":
		a.printfVar(args)
	case "unset":
		for _, f := range operandsOf(args) {
			delete(a.vars, f.text)
		}
	case "mapfile", "readarray":
		if ops := operandsOf(args); len(ops) > 0 {
			a.vars[ops[len(ops)-1].text] = variable{array: true, sources: a.inputs[idx]}
		}
	}
	a.nested(idx, cmd.Name, args, env, redirs, sc)
}

// recordText keeps the text a command writes to a file when it is known
// (echo 'x' > run.sh, cat > run.sh <<EOF), so that running the file later
// in the same command is analysed.
func (a *analyzer) recordText(idx int, redirs []Redirect) {
	for _, r := range redirs {
		if r.Op != ">" && r.Op != ">|" && r.Op != ">>" || r.Target == "" || r.Fd != "" && r.Fd != "1" {
			continue
		}
		text, ok := a.printedText(idx)
		if !ok {
			continue
		}
		if r.Op == ">>" {
			text = a.texts[cleanName(r.Target)] + text
		}
		a.setText(r.Target, text)
	}
}

func (a *analyzer) setText(name, text string) {
	if name == "" {
		return
	}
	if a.texts == nil {
		a.texts = map[string]string{}
	}
	a.texts[cleanName(name)] = text
}

// subRunner returns where the command starts in the arguments of a program
// that runs one through a subcommand (uv run, bundle exec, nix develop -c),
// and whether it runs one.
func subRunner(name string, args []field) (int, bool) {
	r, ok := subRunners[name]
	if !ok {
		return 0, false
	}
	i := 0
	if r.sub != nil {
		for i < len(args) && strings.HasPrefix(args[i].text, "-") {
			i++ // global options before the subcommand: poetry -q run
		}
		if i >= len(args) || !contains(r.sub, args[i].text) {
			return 0, false
		}
		i++
	}
	if name == "nix" {
		// nix develop [installable] -c cmd: only -c starts the command.
		for j := i; j < len(args); j++ {
			if t := args[j].text; t == "-c" || t == "--command" {
				if j+1 < len(args) {
					return j + 1, true
				}
			}
		}
		return 0, false
	}
	n, _, _ := r.inner.unwrap(args[i:])
	if n < 0 {
		return 0, false
	}
	return i + n, true
}

// chdir follows cd and pushd, so that later relative paths resolve where
// the shell would: cd ~/.ssh && cat id_rsa reads ~/.ssh/id_rsa.
func (a *analyzer) chdir(args []field) {
	ops := operandsOf(args)
	target := "~"
	if len(ops) > 0 {
		target = ops[0].text
	}
	switch {
	case target == "-" || strings.HasPrefix(target, "+"):
		return // the previous directory: unknown here
	case strings.HasPrefix(target, "/") || strings.HasPrefix(target, "~") || strings.HasPrefix(target, "$HOME"):
		a.dir = target
	case a.dir != "":
		a.dir = a.dir + "/" + target
	default:
		a.dir = target
	}
}

// splitWords splits a string into words as the shell would.
func (a *analyzer) splitWords(s string, sc scope) []field {
	f, err := a.parser.Parse(strings.NewReader(s), "")
	if err != nil || f == nil || len(f.Stmts) != 1 {
		return []field{{text: s, dynamic: true}}
	}
	call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok {
		return []field{{text: s, dynamic: true}}
	}
	sc.src = s
	fields, _ := a.words(call.Args, -1, sc)
	return fields
}

// nested parses the scripts a command runs: sh -c, su -c, eval, trap,
// alias, watch, here-documents and here-strings fed to a shell, and the
// commands of find -exec.
func (a *analyzer) nested(idx int, name string, args []field, env []Assign, redirs []Redirect, sc scope) {
	run := func(script string, via string) {
		saved := a.withEnv(env)
		a.script(script, sc.nested(via, idx), false)
		a.restoreEnv(saved)
	}
	switch {
	case shells[name]:
		script, hasScript, stdin := shellScript(args)
		if hasScript && script.dynamic {
			// Part of the script is only known when it runs; the rest is
			// read as written, so sh -c "rm -rf $HOME" still shows its rm.
			a.out.Commands[idx].DynamicCode = true
		}
		switch {
		case hasScript:
			// sh -c 'script' arg0 arg1…: the words after the script are
			// $0, $1 ….
			saved, savedKnown, saved0 := a.params, a.paramsKnown, a.arg0
			after := shellParams(args)
			a.arg0 = nil
			if len(after) > 0 {
				a.arg0 = &after[0]
				after = after[1:]
			}
			a.assignParams(after)
			run(script.text, ViaShell)
			a.params, a.paramsKnown, a.arg0 = saved, savedKnown, saved0
		case stdin:
			for _, r := range redirs {
				switch r.Op {
				case "<<", "<<-", "<<<":
					run(r.Body, ViaShell)
				case "<":
					a.runFile(idx, field{text: r.Target}, sc)
				}
			}
		default:
			if ops := operandsAfterOptions(args, "oO", []string{"--rcfile", "--init-file"}); len(ops) > 0 {
				a.runFile(idx, ops[0], sc) // bash run.sh, written earlier
			}
		}
	case name == "source" || name == ".":
		if ops := operandsOf(args); len(ops) > 0 {
			a.runFile(idx, ops[0], sc)
		}
	case name == "ssh":
		a.ssh(idx, args, redirs, sc)
	case name == "pwsh" || name == "powershell" || name == "pwsh-preview":
		a.powershell(idx, name, args, redirs, sc)
	case name == "wsl":
		a.wsl(idx, args, sc)
	case name == "cmd":
		texts := make([]string, len(args))
		for i, f := range args {
			texts[i] = f.text
		}
		if line, ok := powershell.CmdScript(texts); ok && len(line) <= a.lim.MaxBytes {
			a.script(powershell.TranslateCmd(line), sc.nested(ViaCmd, idx), true)
		}
	case name == "autossh":
		a.ssh(idx, withoutOption(args, "-M"), redirs, sc)
	case name == "docker" || name == "podman" || name == "nerdctl":
		a.container(idx, args, redirs, sc)
	case name == "kubectl" || name == "oc":
		a.kube(idx, args, redirs, sc)
	case name == "vagrant" || name == "gcloud" || name == "aws" || name == "az" || name == "mosh":
		a.cloudShell(idx, name, args, sc)
	case argvRunners[name].sub != "":
		a.argvRunner(idx, name, args, sc)
	case name == "tmux":
		a.tmux(idx, args, sc)
	case name == "screen":
		a.screen(idx, args, sc)
	case name == "parallel":
		a.parallel(idx, args, redirs, sc)
	case name == "at" || name == "batch":
		later := sc.at(WhereLater)
		if f, ok := optionValue(args, 'f', ""); ok {
			a.runFile(idx, f, later)
		}
		for _, r := range redirs {
			if r.Op == "<<" || r.Op == "<<-" || r.Op == "<<<" {
				saved := a.withEnv(env)
				a.script(r.Body, later.nested(ViaShell, idx), false)
				a.restoreEnv(saved)
			}
		}
	case name == "git":
		a.gitConfig(idx, args, sc)
	case name == "nix-shell":
		if s, ok := optionValue(args, 0, "--run"); ok && !s.dynamic {
			run(s.text, ViaShell)
		} else if s, ok := optionValue(args, 0, "--command"); ok && !s.dynamic {
			run(s.text, ViaShell)
		}
	case name == "su" || name == "runuser" || name == "flock" || name == "script" || name == "sg":
		if s, ok := optionValue(args, 'c', "--command"); ok {
			if s.dynamic {
				a.out.Commands[idx].DynamicCode = true
			} else {
				run(s.text, ViaShell)
			}
		}
	case name == "eval":
		texts := make([]string, 0, len(args))
		for _, f := range args {
			if f.dynamic {
				// Its text is not known; a substitution in it is
				// analysed already.
				a.out.Commands[idx].DynamicCode = true
				return
			}
			texts = append(texts, f.text)
		}
		run(strings.Join(texts, " "), ViaEval)
	case name == "trap":
		ops := operandsOf(args)
		if len(ops) >= 2 && ops[0].text != "-" && !ops[0].subst {
			run(ops[0].text, ViaTrap)
		}
	case name == "alias":
		for _, f := range operandsOf(args) {
			if n, value, ok := strings.Cut(f.text, "="); ok && !f.subst {
				a.defineAlias(n, value)
				run(value, ViaAlias)
			}
		}
	case name == "expect":
		a.expect(idx, args, redirs, sc)
	case name == "watch":
		ops := operandsAfterOptions(args, "nd", []string{"--interval", "--differences"})
		if len(ops) > 0 {
			texts := make([]string, len(ops))
			for i, f := range ops {
				texts[i] = f.text
			}
			run(strings.Join(texts, " "), ViaShell)
		}
	case name == "find":
		a.findExec(idx, args, sc)
	}
}

// withEnv sets the variables of a command's environment for the script it
// runs, returning what to restore.
func (a *analyzer) withEnv(env []Assign) map[string]*variable {
	if len(env) == 0 {
		return nil
	}
	saved := make(map[string]*variable, len(env))
	for _, e := range env {
		if _, done := saved[e.Name]; !done {
			if old, ok := a.vars[e.Name]; ok {
				saved[e.Name] = &old
			} else {
				saved[e.Name] = nil
			}
		}
		a.vars[e.Name] = variable{value: e.Value, known: true}
	}
	return saved
}

func (a *analyzer) restoreEnv(saved map[string]*variable) {
	for name, old := range saved {
		if old == nil {
			delete(a.vars, name)
		} else {
			a.vars[name] = *old
		}
	}
}

// shellScript finds the script of a shell command line: the first operand
// when -c is given. Without -c or an operand, or with -s, the shell reads
// its script from standard input.
func shellScript(args []field) (script field, hasScript, stdin bool) {
	i, hasC, hasS := shellOptions(args)
	if hasC {
		if i < len(args) {
			return args[i], true, false
		}
		return field{}, false, false
	}
	return field{}, false, hasS || i >= len(args)
}

// ScriptOperand returns the index in args (the words after the program)
// of the script a shell runs with -c, or -1: sh -c 'cmd' names no file,
// its commands are listed nested.
func ScriptOperand(name string, args []string) int {
	if !IsShell(name) {
		return -1
	}
	fs := make([]field, len(args))
	for i, a := range args {
		fs[i].text = a
	}
	if i, hasC, _ := shellOptions(fs); hasC && i < len(args) {
		return i
	}
	return -1
}

// shellOptions reads a shell's options: it returns the index of the first
// operand and whether -c and -s were given.
func shellOptions(args []field) (i int, hasC, hasS bool) {
	for i < len(args) {
		s := args[i].text
		if s == "--" || s == "-" {
			i++
			break
		}
		if len(s) < 2 || (s[0] != '-' && s[0] != '+') {
			break
		}
		if strings.HasPrefix(s, "--") {
			if s == "--rcfile" || s == "--init-file" {
				i++
			}
			i++
			continue
		}
		for j := 1; j < len(s); j++ {
			switch s[j] {
			case 'c':
				hasC = true
			case 's':
				hasS = true
			case 'o', 'O':
				if j == len(s)-1 {
					i++ // -o pipefail
				}
			}
		}
		i++
	}
	return i, hasC, hasS
}

// shellParams returns the words after the script of sh -c 'script' …:
// $0, then the positional parameters.
func shellParams(args []field) []field {
	i := 0
	for i < len(args) {
		s := args[i].text
		if s == "--" || s == "-" {
			i++
			break
		}
		if len(s) < 2 || (s[0] != '-' && s[0] != '+') {
			break
		}
		if s == "-o" || s == "+o" || s == "-O" || s == "--rcfile" || s == "--init-file" {
			i++
		}
		i++
	}
	if i+1 >= len(args) {
		return nil
	}
	return args[i+1:]
}

// readsScriptFromStdin reports whether command i is a shell that reads its
// script from standard input (sh, bash -s, sudo bash -).
func (a *analyzer) readsScriptFromStdin(i int) bool {
	c := &a.out.Commands[i]
	if c.Name == "at" || c.Name == "batch" {
		return !hasShortOption(argFields(c.Args()), 'f', "")
	}
	if c.Name == "ssh" {
		// ssh HOST with no command runs the remote login shell on its
		// standard input.
		ops := operandsAfterOptions(argFields(c.Args()), sshValues, nil)
		return len(ops) == 1 || len(ops) == 2 && shells[Normalize(ops[1].text)]
	}
	if !shells[c.Name] {
		return false
	}
	args := make([]field, len(c.Argv)-1)
	for j, s := range c.Argv[1:] {
		args[j] = field{text: s}
	}
	_, _, stdin := shellScript(args)
	return stdin
}

func argFields(args []string) []field {
	out := make([]field, len(args))
	for i, s := range args {
		out[i] = field{text: s}
	}
	return out
}

// hasShortOption reports whether args hold -<letter> (alone or in a
// cluster) or the long option.
func hasShortOption(args []field, letter byte, long string) bool {
	_, ok := optionValue(args, letter, long)
	if ok {
		return true
	}
	for _, f := range args {
		s := f.text
		if long != "" && (s == long || strings.HasPrefix(s, long+"=")) {
			return true
		}
		if len(s) > 1 && s[0] == '-' && s[1] != '-' && strings.IndexByte(s[1:], letter) >= 0 {
			return true
		}
	}
	return false
}

// optionValue returns the value of -<letter> VALUE, -<letter>VALUE,
// --long VALUE or --long=VALUE.
func optionValue(args []field, letter byte, long string) (field, bool) {
	for i, f := range args {
		s := f.text
		if long != "" && strings.HasPrefix(s, long+"=") {
			return field{text: s[len(long)+1:], dynamic: f.dynamic, subst: f.subst}, true
		}
		if (long != "" && s == long) || s == "-"+string(letter) {
			if i+1 < len(args) {
				return args[i+1], true
			}
			return field{}, false
		}
		if len(s) > 2 && s[0] == '-' && s[1] != '-' {
			if j := strings.IndexByte(s[1:], letter); j >= 0 {
				rest := s[j+2:]
				if rest != "" {
					return field{text: rest, dynamic: f.dynamic, subst: f.subst}, true
				}
				if i+1 < len(args) {
					return args[i+1], true
				}
			}
		}
	}
	return field{}, false
}

// operandsOf returns the arguments that are not options.
func operandsOf(args []field) []field {
	var out []field
	done := false
	for _, f := range args {
		if !done && f.text == "--" {
			done = true
			continue
		}
		if !done && len(f.text) > 1 && f.text[0] == '-' {
			continue
		}
		out = append(out, f)
	}
	return out
}

// operandsAfterOptions returns the arguments after the leading options,
// skipping the values of the options that take one.
func operandsAfterOptions(args []field, values string, longValues []string) []field {
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
		if strings.HasPrefix(s, "--") {
			if contains(longValues, s) {
				i++
			}
		} else if strings.IndexByte(values, s[len(s)-1]) >= 0 {
			i++
		}
		i++
	}
	if i >= len(args) {
		return nil
	}
	return args[i:]
}

// findExec lists the commands of find -exec, -execdir, -ok and -okdir,
// each up to its ; or +.
func (a *analyzer) findExec(idx int, args []field, sc scope) {
	for i := 0; i < len(args); i++ {
		switch args[i].text {
		case "-exec", "-execdir", "-ok", "-okdir":
		default:
			continue
		}
		j := i + 1
		for j < len(args) && args[j].text != ";" && args[j].text != "+" {
			j++
		}
		if j > i+1 {
			child := sc.nested(ViaFindExec, idx)
			if child.depth > a.lim.MaxDepth {
				a.limit("commands are nested deeper than %d levels", a.lim.MaxDepth)
				return
			}
			// {} is each path find lists: its roots, or the entries
			// -name selects below them.
			outs, known := findOutputs(args)
			if !known || len(outs) > 8 {
				outs = []string{"{}"}
			}
			for _, out := range outs {
				if c := a.reserve(child); c >= 0 {
					a.exec(c, replaceIn(args[i+1:j], "{}", out), nil, nil, child, false)
				}
			}
		}
		i = j
	}
}

// wrapperWhere returns where a wrapper runs its command, given the
// wrapper's own options: nohup and setsid detach it from the call, a
// systemd-run timer runs it later.
func wrapperWhere(name string, opts []field) []string {
	switch name {
	case "nohup", "setsid", "daemonize", "nq", "tsp":
		return []string{WhereDetached}
	case "systemd-run":
		for _, f := range opts {
			if strings.HasPrefix(f.text, "--on-") {
				return []string{WhereLater}
			}
		}
		return []string{WhereDetached}
	}
	return nil
}

// asRoot reports whether systemd-run options run the unit as root:
// --uid=0, --uid root, -p User=root.
func asRoot(opts []field) bool {
	for _, f := range optionValues(opts, 0, "--uid") {
		if f.text == "0" || f.text == "root" {
			return true
		}
	}
	for _, f := range optionValues(opts, 'p', "--property") {
		if f.text == "User=root" || f.text == "User=0" {
			return true
		}
	}
	return false
}

// withoutOption drops an option and its value (autossh -M 0).
func withoutOption(args []field, opt string) []field {
	out := make([]field, 0, len(args))
	for i := 0; i < len(args); i++ {
		switch {
		case args[i].text == opt:
			i++
		case strings.HasPrefix(args[i].text, opt):
		default:
			out = append(out, args[i])
		}
	}
	return out
}

// readerScope is the scope of text piped into command i: it runs where
// that command runs, and later when at or batch reads it.
func (a *analyzer) readerScope(sc scope, i int) scope {
	child := sc.nested(ViaShell, i)
	c := &a.out.Commands[i]
	child.where = c.Where
	switch c.Name {
	case "at", "batch":
		child = child.at(WhereLater)
	case "ssh", "autossh":
		child = child.at(WhereRemote)
	}
	return child
}

// powershell analyses the code pwsh or powershell.exe runs (-Command,
// -EncodedCommand, or a here-document on standard input), read into the
// POSIX commands it amounts to.
func (a *analyzer) powershell(idx int, name string, args []field, redirs []Redirect, sc scope) {
	texts := make([]string, len(args))
	for i, f := range args {
		texts[i] = f.text
	}
	code, stdin, ok := powershell.Script(texts, name == "powershell")
	if !ok {
		return
	}
	var scripts []string
	if stdin {
		for _, r := range redirs {
			if r.Op == "<<" || r.Op == "<<-" || r.Op == "<<<" {
				scripts = append(scripts, r.Body)
			}
		}
	} else {
		scripts = append(scripts, code)
	}
	for _, s := range scripts {
		if len(s) > a.lim.MaxBytes {
			a.limit("a PowerShell script is longer than %d bytes", a.lim.MaxBytes)
			continue
		}
		posix, complete := powershell.Translate(s)
		if !complete {
			a.limit("a PowerShell script nests more code than can be read")
		}
		a.script(posix, sc.nested(ViaPowerShell, idx), true)
	}
}

// beforeDashes returns the words before a "--" (the command after it has
// options of its own).
func beforeDashes(args []field) []field {
	for i, f := range args {
		if f.text == "--" {
			return args[:i]
		}
	}
	return args
}
