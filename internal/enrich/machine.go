package enrich

import (
	"regexp"
	"strings"

	"github.com/ahp-opa/ahp-opa/internal/effects"
	"github.com/ahp-opa/ahp-opa/internal/shell"
)

// Installers and uninstallers: a script whose name says it installs or
// uninstalls software (install.sh, ./install, brew-uninstall-cascade.sh,
// bootstrap.sh) acts on this machine rather than the workspace when it
// runs for real. Its name and what it is told speak whether its text was
// read or not, as a release script's name does: an uninstaller removes
// software from the machine unless it rehearses (-n, --dry-run); an
// installer does when it is told to accept every prompt (fzf's ./install
// --all edits the shell's startup files) or to install into the home or a
// system directory (ZSH=~/.oh-my-zsh sh install.sh, --prefix /usr/local).
// An installer run plainly (scripts/install) stays the project's own
// business.

// machineScriptEffects appends the config.change of running c when it is
// such an installer or uninstaller.
func machineScriptEffects(c *shell.Command, i int, out []effects.Effect) []effects.Effect {
	name, args, ok := scriptCall(c)
	if !ok || rehearses(args) {
		return out
	}
	var role string
	for _, w := range nameWords(name) {
		switch w {
		case "uninstall", "uninstaller", "uninstalls":
			role = "uninstall"
		case "install", "installer", "setup", "bootstrap":
			if role == "" {
				role = "install"
			}
		}
	}
	e := effects.Effect{
		Effect: effects.ConfigChange, Program: c.Name, Command: i,
		Source:     effects.Source{Kind: "script-name", Row: name, Verb: role},
		Confidence: effects.Medium, Approvable: true,
	}
	switch role {
	case "uninstall":
		e.Target = "software installed on this machine (" + name + ")"
	case "install":
		why := acceptsAll(args)
		if why == "" {
			why = machineDestination(c, args)
		}
		if why == "" {
			return out
		}
		e.Target = "this machine: installer " + name + " " + why
	default:
		return out
	}
	return append(out, e)
}

// nameWords splits a script's name into its lower-case words.
func nameWords(name string) []string {
	return strings.FieldsFunc(strings.ToLower(name), func(r rune) bool {
		return r == '-' || r == '_' || r == '.' || r == ' '
	})
}

// scriptCall returns the name of the script file c runs, with the
// arguments the script is given: ./install --all, sh install.sh, bash
// "$DIR/uninstall.sh" -f. Unlike scriptTarget, a directory given by a
// variable still leaves the file's own name to speak.
func scriptCall(c *shell.Command) (string, []string, bool) {
	args := c.Args()
	if shellNames[c.Name] {
		for j := 0; j < len(args); j++ {
			a := args[j]
			switch {
			case a == "-O" || a == "+O" || a == "-o" || a == "+o":
				j++ // bash -O extglob: the value is an option's
			case a == "--":
			case strings.HasPrefix(a, "--"):
			case strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+"):
				if strings.ContainsAny(a, "ncs") {
					return "", nil, false // bash -c runs text, -s reads stdin, -n only checks
				}
			default:
				name, ok := staticScriptName(a)
				return name, args[j+1:], ok
			}
		}
		return "", nil, false
	}
	if scriptInterpreters[c.Name] {
		for j, a := range args {
			switch {
			case a == "-c" || a == "-e" || a == "-m" || a == "-p" || a == "-r" || a == "--eval":
				return "", nil, false // code or a module, not a script file
			case strings.HasPrefix(a, "-"):
			default:
				name, ok := staticScriptName(a)
				return name, args[j+1:], ok
			}
		}
		return "", nil, false
	}
	if len(c.Argv) == 0 || !strings.ContainsAny(c.Argv[0], `/\`) || systemProgram(c.Argv[0]) {
		return "", nil, false
	}
	name, ok := staticScriptName(c.Argv[0])
	return name, args, ok
}

// scriptInterpreters run the script file named by their first operand.
var scriptInterpreters = map[string]bool{
	"python": true, "python2": true, "python3": true, "node": true, "ruby": true, "perl": true,
	"php": true, "tsx": true, "ts-node": true,
}

// staticScriptName is the name of the file p names, without its
// extension, when that name is written out.
func staticScriptName(p string) (string, bool) {
	base := p[strings.LastIndexAny(p, `/\`)+1:]
	if base == "" || strings.ContainsAny(base, "$`*?[") {
		return "", false
	}
	if dot := strings.LastIndexByte(base, '.'); dot > 0 {
		base = base[:dot]
	}
	return base, base != ""
}

// rehearses reports whether a script is asked to show, not do.
func rehearses(args []string) bool {
	for _, a := range args {
		switch strings.ToLower(a) {
		case "-n", "--dry-run", "--dryrun", "--dry_run", "--noop", "--simulate", "-h", "--help", "help", "--check", "--version", "--list":
			return true
		}
	}
	return false
}

// acceptAll are the options that answer yes to every prompt.
var acceptAll = map[string]bool{
	"--all": true, "--yes": true, "-y": true, "--unattended": true, "--assume-yes": true,
	"--non-interactive": true, "--noninteractive": true, "--no-confirm": true, "--noconfirm": true,
	"--force-yes": true, "--accept-all": true,
}

// acceptsAll returns the option that accepts every prompt, "" for none.
func acceptsAll(args []string) string {
	for _, a := range args {
		if acceptAll[strings.ToLower(a)] {
			return "told to accept every prompt (" + a + ")"
		}
	}
	return ""
}

// machineDestination returns why an installer is pointed at the home or
// a system directory: an environment assignment, an option's value or an
// operand that names one. "" when none does.
func machineDestination(c *shell.Command, args []string) string {
	for _, e := range c.Env {
		if machinePath(e.Value) {
			return "installing into " + e.Value + " (" + e.Name + ")"
		}
	}
	for _, a := range args {
		v := a
		if strings.HasPrefix(a, "-") {
			_, after, ok := strings.Cut(a, "=")
			if !ok {
				continue
			}
			v = after
		}
		if machinePath(v) {
			return "installing into " + v
		}
	}
	return ""
}

// machinePath reports whether v names the home directory, a path in it,
// or a system directory: never a workspace, which lies below the home.
func machinePath(v string) bool {
	v = strings.Trim(v, `"'`)
	for _, p := range []string{"~", "$HOME", "${HOME}"} {
		if v == p || strings.HasPrefix(v, p+"/") {
			return true
		}
	}
	for _, d := range []string{"/usr", "/opt", "/etc", "/bin", "/sbin", "/Library", "/Applications", "/System"} {
		if v == d || strings.HasPrefix(v, d+"/") {
			return true
		}
	}
	return false
}

// Archives and trees laid over the home directory: an archive extracted
// into the home (cd; curl … | tar -xz, tar -xf dots.tgz -C ~) or a
// directory's contents copied onto it (cp -a dots/. ~, rsync -a dots/ ~/)
// overwrites whatever startup files it carries, unseen. What is extracted
// where is read from the command; a cd before it moves it (cd with no
// operand goes home).

// overHomeEffects appends the persistence of laying files over the home.
func overHomeEffects(c *shell.Command, i int, out []effects.Effect) []effects.Effect {
	dest, how := overHome(c)
	if dest == "" || !homeLevel(dest) {
		return out
	}
	return append(out, effects.Effect{
		Effect: effects.Persistence, Target: "the home directory's startup files (" + how + " into " + dest + ")",
		Program: c.Name, Command: i, Source: effects.Source{Kind: "destination", Row: c.Name},
		Confidence: effects.High, Approvable: true,
	})
}

// overHome returns the directory c lays many files into and how, "" when
// it does not: an archive extracted, or a directory's contents copied.
func overHome(c *shell.Command) (string, string) {
	args := c.Args()
	switch c.Name {
	case "tar", "gtar", "bsdtar":
		if !tarExtracts(args) {
			return "", ""
		}
		if d, ok := valueOf(args, "-C", "--directory", "--cd"); ok {
			return d, "archive extracted"
		}
		return c.Dir, "archive extracted"
	case "unzip":
		for _, a := range args {
			if a == "-l" || a == "-t" || a == "-v" || a == "-p" || a == "-Z" {
				return "", "" // lists, tests or prints
			}
		}
		if d, ok := valueOf(args, "-d"); ok {
			return d, "archive extracted"
		}
		return c.Dir, "archive extracted"
	case "cp", "rsync", "ditto":
		ops := operandsOnly(args)
		if len(ops) < 2 || (c.Name == "cp" && !treeCopy(args)) {
			return "", ""
		}
		for _, src := range ops[:len(ops)-1] {
			if contentsOf(src, c.Name == "rsync") {
				return ops[len(ops)-1], "directory contents copied"
			}
		}
	}
	return "", ""
}

// tarExtracts reports whether tar is asked to extract: x in its first
// (old-style) word or a short cluster, or --extract/--get.
func tarExtracts(args []string) bool {
	for k, a := range args {
		switch {
		case a == "--extract" || a == "--get":
			return true
		case strings.HasPrefix(a, "--"):
		case strings.HasPrefix(a, "-") && isLetters(a[1:]):
			if strings.ContainsRune(a[1:], 'x') {
				return true
			}
		case k == 0 && isLetters(a):
			return strings.ContainsRune(a, 'x')
		}
	}
	return false
}

func isLetters(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') {
			return false
		}
	}
	return true
}

// valueOf returns the value of the first of opts args give: "-C dir",
// "--directory=dir", or "-Cdir" for a one-letter option.
func valueOf(args []string, opts ...string) (string, bool) {
	for j, a := range args {
		for _, o := range opts {
			switch {
			case a == o && j+1 < len(args):
				return args[j+1], true
			case strings.HasPrefix(a, o+"="):
				return a[len(o)+1:], true
			case len(o) == 2 && len(a) > 2 && strings.HasPrefix(a, o) && o[1] != '-':
				return a[2:], true
			}
		}
	}
	return "", false
}

// operandsOnly returns the arguments that are not options.
func operandsOnly(args []string) []string {
	var ops []string
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			ops = append(ops, a)
		}
	}
	return ops
}

// treeCopy reports whether cp copies directories (-r, -R, -a).
func treeCopy(args []string) bool {
	for _, a := range args {
		if a == "--recursive" || a == "--archive" {
			return true
		}
		if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsAny(a, "rRa") {
			return true
		}
	}
	return false
}

// contentsOf reports whether a source names a directory's contents rather
// than the directory: dots/., dots/*, dots/.*, and for rsync dots/.
func contentsOf(src string, rsync bool) bool {
	for _, suffix := range []string{"/.", "/*", "/.*", "/{.,}*"} {
		if strings.HasSuffix(src, suffix) {
			return true
		}
	}
	return rsync && strings.HasSuffix(src, "/") && len(src) > 1
}

// homeDir matches a home directory written as an absolute path.
var homeDir = regexp.MustCompile(`^(/home/[^/]+|/Users/[^/]+|/root)`)

// homeLevel reports whether a directory, as written, is the home or one
// that holds startup files (~/.config and the shells' directories in it).
func homeLevel(dir string) bool {
	dir = strings.TrimSuffix(strings.Trim(dir, `"'`), "/")
	homes := []string{"~", "$HOME", "${HOME}"}
	if m := homeDir.FindString(dir); m != "" {
		homes = append(homes, m) // /home/dev, /Users/dev, /root: never a workspace, which lies below
	}
	for _, h := range homes {
		rest, ok := strings.CutPrefix(dir, h)
		if !ok {
			continue
		}
		switch rest = strings.TrimSuffix(rest, "/."); rest {
		case "", "/.config", "/.config/fish", "/.config/nushell", "/.config/elvish", "/.config/xonsh", "/.config/zsh", "/.config/powershell":
			return true
		}
	}
	return false
}
