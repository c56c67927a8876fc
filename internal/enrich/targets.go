package enrich

import (
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
	case "npm", "pnpm", "yarn", "bun":
		for i := 0; i < len(args); i++ {
			switch a := args[i]; {
			case a == "run" || a == "run-script" || a == "run-s":
				return first(i + 1)
			case valued[a]:
				i++
			case !strings.HasPrefix(a, "-"):
				return "" // another subcommand: the table's rows judge it
			}
		}
	case "bazel", "bazelisk":
		if len(args) > 1 && args[0] == "run" {
			return first(1)
		}
	}
	return ""
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

// notReal are words of a target's name that say it rehearses or stays
// on this machine: deploy-dry-run, release:local.
var notReal = map[string]bool{"dry": true, "dryrun": true, "local": true, "localhost": true}

// targetVerbs lets the name of a runner's target speak when what it runs
// could not be read (no workspace, no such file, a definition outside the
// workspace): make deploy, npm run release, bazel run //deploy:push_prod.
// A followed definition is judged by what it runs instead; an unknown
// target is otherwise a blind spot, as an unknown CLI would be without
// its verbs.
func targetVerbs(m *effects.Matcher, c *shell.Command, i int, out []effects.Effect) []effects.Effect {
	target := runnerTarget(c)
	if target == "" {
		return out
	}
	for _, a := range c.Args() {
		if a == "--help" || a == "-h" {
			return out // prints its usage, as an unknown CLI's verbs would not speak then
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
		out[k].Program, out[k].Command = c.Name, i
		out[k].Source = effects.Source{Kind: "target-verb", Row: c.Name + " " + target, Verb: out[k].Source.Verb}
	}
	return out
}
