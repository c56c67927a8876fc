package enrich

import (
	"regexp"
	"slices"
	"strings"

	"github.com/ahp-opa/ahp-opa/internal/effects"
	"github.com/ahp-opa/ahp-opa/internal/shell"
)

// runnerTarget returns the target a task runner is asked to run: make
// deploy, just publish, rake release, task ship, npm/pnpm/yarn/bun run
// release, bazel run //deploy:push_prod. "" when c runs none by name.
func runnerTarget(c *shell.Command) string {
	args := c.Args()
	valued := valueOptions[c.Name]
	first := func(from int) string {
		for i := from; i < len(args); i++ {
			switch a := args[i]; {
			case a == "--":
				return ""
			case valued[a]:
				i++ // make -C dir, -f file: the value is no target
			case !strings.HasPrefix(a, "-") && !strings.Contains(a, "="):
				return a
			}
		}
		return ""
	}
	switch c.Name {
	case "make", "gmake", "just", "rake", "task", "go-task", "mage":
		return first(0)
	case "mise", "rtx":
		// mise run TASK, mise r TASK: a task of mise.toml.
		if len(args) > 1 && (args[0] == "run" || args[0] == "r") {
			return first(1)
		}
	case "fastlane":
		// fastlane [platform] lane: a lane is a task of the Fastfile.
		t := first(0)
		if t == "ios" || t == "android" || t == "mac" {
			for i, a := range args {
				if a == t {
					return first(i + 1)
				}
			}
		}
		return t
	case "npm", "pnpm", "yarn", "bun":
		for i := 0; i < len(args); i++ {
			switch a := args[i]; {
			case a == "run" || a == "run-script" || a == "run-s":
				return first(i + 1)
			case valued[a]:
				i++
			case !strings.HasPrefix(a, "-"):
				if c.Name != "npm" && !packageManagerCommands[a] {
					return a // pnpm release, yarn deploy: a script run by its name
				}
				return "" // another subcommand: the table's rows judge it
			}
		}
	case "node", "deno", "tsx", "ts-node", "python", "python3":
		// node Makefile.js publishRelease: a task file (ShellJS's make,
		// Jake, gulp, a make.py) runs the target named after it.
		for i := 0; i < len(args); i++ {
			a := args[i]
			if strings.HasPrefix(a, "-") || c.Name == "deno" && a == "run" {
				continue
			}
			if taskFiles[strings.ToLower(scriptName(a))] {
				return first(i + 1)
			}
			return ""
		}
	case "bazel", "bazelisk":
		if len(args) > 1 && args[0] == "run" {
			return first(1)
		}
	}
	return ""
}

// taskFiles are the names of scripts that run the target named after
// them: Makefile.js, make.py, Jakefile.js, gulpfile.js, Gruntfile.js.
var taskFiles = map[string]bool{"makefile": true, "make": true, "jakefile": true, "gulpfile": true, "gruntfile": true, "tasks": true}

// packageManagerCommands are the built-in commands of pnpm, yarn and bun;
// any other first word runs the package script of that name.
var packageManagerCommands = map[string]bool{
	"add": true, "audit": true, "bin": true, "build": true, "cache": true, "config": true, "create": true,
	"dedupe": true, "deploy": true, "dlx": true, "doctor": true, "env": true, "exec": true, "fetch": true,
	"help": true, "i": true, "import": true, "info": true, "init": true, "install": true, "install-test": true,
	"licenses": true, "link": true, "list": true, "login": true, "logout": true, "ls": true, "npm": true,
	"outdated": true, "pack": true, "patch": true, "patch-commit": true, "pm": true, "plugin": true,
	"prune": true, "publish": true, "rebuild": true, "remove": true, "rm": true, "root": true, "run": true,
	"set": true, "setup": true, "start": true, "store": true, "t": true, "test": true, "un": true,
	"uninstall": true, "unlink": true, "up": true, "update": true, "upgrade": true, "upgrade-interactive": true,
	"version": true, "versions": true, "view": true, "why": true, "workspace": true, "workspaces": true,
	"x": true, "dist-tag": true, "owner": true, "access": true, "team": true, "token": true, "search": true,
	"changeset": true, "tag": true, "check": true, "global": true, "generate-lock-entry": true, "policies": true,
	"autoclean": true, "recursive": true, "-r": true, "self-update": true, "repl": true,
}

var shellNames = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true}

// scriptTarget returns the name of a script file c runs: ./scripts/publish,
// python scripts/release.py, bash script/deploy.sh. "" when c runs none.
func scriptTarget(c *shell.Command) string {
	switch c.Name {
	case "sh", "bash", "zsh", "dash", "ksh", "python", "python2", "python3", "node", "ruby", "perl", "php", "tsx", "ts-node", "deno":
		args := c.Args()
		for i := 0; i < len(args); i++ {
			a := args[i]
			switch {
			case strings.HasPrefix(a, "-"):
				if a == "-c" || a == "-e" || a == "-m" || a == "-p" || a == "-r" || a == "--eval" {
					return "" // code or a module, not a script file
				}
				if shellNames[c.Name] && !strings.HasPrefix(a, "--") && strings.ContainsAny(a, "ncs") {
					return "" // bash -lc runs text, -s reads stdin, -n checks a script and runs none of it
				}
			case c.Name == "deno" && a == "run":
			default:
				return scriptName(a)
			}
		}
		return ""
	}
	if len(c.Argv) > 0 && strings.Contains(c.Argv[0], "/") && !systemProgram(c.Argv[0]) {
		return scriptName(c.Argv[0])
	}
	return ""
}

// leadingWord is the first word of a script's name, past a leading
// number (04_post_publish is post) and before a change of case
// (publishCI is publish).
func leadingWord(name string) string {
	for _, w := range strings.FieldsFunc(camelSplit.ReplaceAllString(name, "${1} ${2}"), func(r rune) bool {
		return r == '-' || r == '_' || r == '.' || r == ' '
	}) {
		w = strings.ToLower(w)
		if strings.Trim(w, "0123456789") != "" {
			return w
		}
	}
	return ""
}

// camelSplit finds where a lower-case letter meets an upper-case one.
var camelSplit = regexp.MustCompile(`([a-z0-9])([A-Z])`)

// scriptName is the name a script file goes by: its base name without
// the extension, "" for a name that holds no word (./x, a dynamic one).
func scriptName(p string) string {
	if strings.ContainsAny(p, "$`") {
		return ""
	}
	base := p[strings.LastIndexAny(p, `/\`)+1:]
	if dot := strings.LastIndexByte(base, '.'); dot > 0 {
		base = base[:dot]
	}
	return base
}

// systemProgram reports whether a program named by path is the system's
// (/usr/bin/env, /bin/rm), which its own name and the table judge.
func systemProgram(p string) bool {
	for _, dir := range []string{"/bin/", "/sbin/", "/usr/", "/opt/homebrew/", "/nix/", "/snap/"} {
		if strings.HasPrefix(p, dir) {
			return true
		}
	}
	return false
}

// runnerDryRuns are, per runner, the options that print what a target
// would run without running it.
var runnerDryRuns = map[string]map[string]bool{
	"make":  makeDryRuns,
	"gmake": makeDryRuns,
	"bmake": makeDryRuns,
	"rake":  {"-n": true, "--dry-run": true},
	"just":  {"-n": true, "--dry-run": true},
	"task":  {"-n": true, "--dry": true},
}

var makeDryRuns = map[string]bool{"-n": true, "--just-print": true, "--dry-run": true, "--recon": true}

// fileTarget reports whether a make target names a file the rule builds
// (libzstd.a-release, dist/app.tar.gz) rather than an act: a file's name
// has a dot past its first character, a task's (deploy, release:minor)
// has none.
func fileTarget(runner, target string) bool {
	switch runner {
	case "make", "gmake", "bmake":
		return strings.IndexByte(target, '.') > 0
	}
	return false
}

// valueOptions are, per runner, the options whose value is the next
// word (make -C dir, task -d dir): make's -d and -t take none.
var valueOptions = map[string]map[string]bool{
	"make":    makeValueOptions,
	"gmake":   makeValueOptions,
	"just":    {"-f": true, "--justfile": true, "-d": true, "--working-directory": true},
	"rake":    {"-f": true, "--rakefile": true, "-C": true, "--directory": true, "-I": true, "-r": true},
	"task":    taskValueOptions,
	"go-task": taskValueOptions,
	"npm":     {"--prefix": true, "-w": true, "--workspace": true, "-C": true},
	"pnpm":    {"--filter": true, "-F": true, "-C": true, "--dir": true},
	"yarn":    {"--cwd": true},
	"bun":     {"--cwd": true, "--filter": true},
}

var (
	makeValueOptions = map[string]bool{"-C": true, "-f": true, "--file": true, "--directory": true, "-I": true, "-o": true, "-W": true}
	taskValueOptions = map[string]bool{"-d": true, "--dir": true, "-t": true, "--taskfile": true}
)

// notReal are words of a target's name that say it rehearses, stays on
// this machine, or prepares or checks a release rather than making it:
// deploy-dry-run, release:local, release-notes, release:changelog:fix.
var notReal = map[string]bool{"dry": true, "dryrun": true, "dry-run": true, "local": true, "localhost": true,
	"notes": true, "changelog": true, "check": true, "verify": true, "lint": true, "test": true, "preview": true}

// targetVerbs lets the name of a runner's target speak when what it runs
// could not be read (no workspace, no such file, a definition outside the
// workspace): make deploy, npm run release, bazel run //deploy:push_prod.
// A followed definition is judged by what it runs instead; an unknown
// target is otherwise a blind spot, as an unknown CLI would be without
// its verbs.
func targetVerbs(m *effects.Matcher, c *shell.Command, i int, resolved bool, out []effects.Effect) []effects.Effect {
	return overHomeEffects(c, i, machineScriptEffects(c, i, nameVerbs(m, c, i, resolved, out)))
}

// nameVerbs appends what the name of a runner's target or a script says.
func nameVerbs(m *effects.Matcher, c *shell.Command, i int, resolved bool, out []effects.Effect) []effects.Effect {
	target, script := "", false
	if !resolved {
		target = runnerTarget(c)
	}
	if target == "" {
		// A script file's name speaks whether it was read or not: code in
		// a general-purpose language (release.py, publish.mjs) does more
		// than its analysis can show. Only a name that starts with its
		// verb says what the script does: release.sh, publish-crates.py,
		// upload_asset.sh, but not pre-publish-checks.mjs or
		// lock-pre-release-versions.mjs.
		if name := scriptTarget(c); len(m.ToolVerbs(leadingWord(name), nil)) > 0 {
			target, script = name, true // its other words may still say it reads or is not real
		}
	}
	if target == "" || fileTarget(c.Name, target) {
		return out
	}
	for _, a := range c.Args() {
		if a == "--help" || a == "-h" {
			return out // prints its usage, as an unknown CLI's verbs would not speak then
		}
		if !script && runnerDryRuns[c.Name][a] {
			return out // make -n deploy prints the recipe and runs none of it
		}
		if strings.HasPrefix(a, "--") && notReal[strings.TrimPrefix(a, "--")] {
			return out // script/release --local, ./deploy.sh --dry-run
		}
	}
	for _, w := range strings.FieldsFunc(strings.ToLower(target), func(r rune) bool {
		return r == '-' || r == '_' || r == ':' || r == '.' || r == '/'
	}) {
		if notReal[w] {
			return out
		}
	}
	n := len(out)
	out = m.ToolVerbs(target, out)
	for k := n; k < len(out); k++ {
		if v := out[k].Source.Verb; (v == "upload" || v == "push" && !script) && out[k].Confidence == effects.Low {
			// An unknown CLI's push may be anything; a project's own
			// task named push or upload (rake push, make upload) or
			// upload script (upload_asset.sh) sends what the project
			// built: gems, images, release assets. A script named push
			// may as well wrap git push.
			out[k].Confidence = effects.Medium
		}
		out[k].Program, out[k].Command = c.Name, i
		out[k].Source = effects.Source{Kind: "target-verb", Row: c.Name + " " + target, Verb: out[k].Source.Verb}
	}
	// A table row that knows the target (rake db:reset) already said what
	// it does and where: the name adds nothing, and must not undo the
	// row's judgement that it stays on this machine. A locality the row
	// only assumed (no environment named) decides nothing either way.
	return slices.DeleteFunc(out, func(e effects.Effect) bool {
		if e.Source.Kind != "target-verb" || e.Command != i {
			return false
		}
		for _, d := range out[:n] {
			if d.Command == i && d.Effect == e.Effect && d.Source.Kind == "data" && (d.Local == "" || !d.LocalAssumed) {
				return true
			}
		}
		return false
	})
}
