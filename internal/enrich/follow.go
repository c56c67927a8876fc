package enrich

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/internal/indirect"
	"github.com/ahp-opa/ahp-opa/internal/shell"
)

// Bounds of following indirection in one command: how many definitions
// are followed, how many hops deep (npm run release → make dist →
// ./scripts/dist.sh), and how many bytes of their text are analysed.
const (
	maxFollowed  = 16
	maxHops      = 4
	followBudget = 256 << 10
	// maxStepBytes bounds one definition analysed: longer code would
	// stop the inline analysis part-way, which is reported for the
	// whole command, so it is left unresolved instead.
	maxStepBytes = 64 << 10
	// followTime bounds the time one call spends reading definitions: a
	// slow workspace file system must not eat the decision's deadline.
	followTime = 150 * time.Millisecond
)

var (
	keyFollowResolved   = ast.StringTerm("resolved")
	keyFollowUnresolved = ast.StringTerm("unresolved")
	keyFollowKind       = ast.StringTerm("kind")
	keyFollowFrom       = ast.StringTerm("from")
	keyFollowRun        = ast.StringTerm("run")
	keyFollowSteps      = ast.StringTerm("steps")
	keyFollowWhy        = ast.StringTerm("why")
	keyFollowDropped    = ast.StringTerm("dropped")
	keyFollowPackage    = ast.StringTerm("package")
	keyFollowDeclared   = ast.StringTerm("declared")
	keyFollowManifest   = ast.StringTerm("manifest")
	keyProvenance       = ast.StringTerm("provenance")
	keyRepository       = ast.StringTerm("repository")
	keyFile             = ast.StringTerm("file")
)

// definition is a run of commands spliced into the analysis from one
// definition read from the workspace: commands [first, end) came from
// the text of from (a package.json script, a Makefile target, a script
// file), read from file.
type definition struct {
	first, end int
	from, file string
}

// provenance finds, for each command of a, the definition its text was
// read from (an index into defs), or -1 when the agent typed it. A
// command inherits its parent's provenance: what a followed script runs
// through eval or a substitution, or what its inline code runs, was
// written in the same file.
func provenance(a *shell.Analysis, defs []definition) []int {
	if len(defs) == 0 {
		return nil
	}
	out := make([]int, len(a.Commands))
	for i := range out {
		out[i] = -2 // not yet known
	}
	var of func(i, hops int) int
	of = func(i, hops int) int {
		if out[i] != -2 {
			return out[i]
		}
		p := -1
		for d := range defs {
			if i >= defs[d].first && i < defs[d].end {
				p = d
				break
			}
		}
		if parent := a.Commands[i].Parent; p < 0 && parent >= 0 && parent < len(out) && parent != i && hops < len(out) {
			p = of(parent, hops+1)
		}
		out[i] = p
		return p
	}
	for i := range out {
		of(i, 0)
	}
	return out
}

// followed is what one command that runs a definition resolved to.
type followed struct {
	cmd        int
	res        indirect.Result
	run        string // the command as named in reasons: npm run release
	parseError string // of the followed text
	dropped    int    // commands left out past the command limit
}

// follow resolves the commands of a that run a definition of the
// workspace (npm run, make, just, rake, task, a script file) and appends
// what those definitions run to a, as commands reached via "script", so
// that every rule applies to them as if typed. Nothing is executed; the
// reads are bounded and cached (internal/indirect).
func (en *enricher) follow(a *shell.Analysis, lim shell.Limits) []followed {
	if len(en.pc.roots) == 0 || en.pc.cwd == "" {
		return nil
	}
	var out []followed
	var hops map[int]int // made on the first command followed
	budget := followBudget
	var start time.Time // set on the first command that may be followed
	for i := 0; i < len(a.Commands) && len(out) < maxFollowed; i++ {
		c := &a.Commands[i]
		if len(c.Argv) == 0 || !mayFollow(c) {
			continue
		}
		h := 0
		if c.Via == shell.ViaScript {
			h = hops[c.Parent] + 1
		}
		dir := en.pc.cwd
		if c.Dir != "" {
			d := en.pc.resolve(c.Dir)
			if !isAbs(d.abs) || d.dynamic {
				continue
			}
			dir = d.abs
		}
		if start.IsZero() {
			start = time.Now()
		} else if time.Since(start) > followTime {
			out = append(out, followed{cmd: i, run: runLabel(c), res: indirect.Result{Kind: "unknown", Why: "reading the workspace took longer than " + followTime.String()}})
			continue
		}
		argv, dynamic := catScript(c)
		res, ok := indirect.Resolve(argv, dynamic, indirect.Workspace{Dir: dir, Roots: en.pc.roots, Written: en.written})
		if !ok {
			continue
		}
		if hops == nil {
			hops = map[int]int{}
		}
		hops[i] = h
		f := followed{cmd: i, res: res, run: runLabel(c)}
		if res.Resolved() && h >= maxHops {
			f.res = indirect.Result{Kind: res.Kind, From: res.From, Why: "followed more than " + strconv.Itoa(maxHops) + " definitions deep"}
		} else if res.Resolved() {
			for _, st := range res.Steps {
				if len(st.Script) > maxStepBytes {
					f.res.Why = st.From + " is longer than " + strconv.Itoa(maxStepBytes>>10) + " KiB, too long to analyse"
					break
				}
				budget -= len(st.Script)
				if budget < 0 {
					f.res.Why = "the definitions followed are longer than " + strconv.Itoa(followBudget) + " bytes in all"
					break
				}
				sub := shell.Analyze(st.Script, lim)
				if sub.ParseError != "" && f.parseError == "" {
					f.parseError = st.From + ": " + sub.ParseError
				}
				first := len(a.Commands)
				f.dropped += a.Splice(sub, i, shell.ViaScript, st.Dir, lim.MaxCommands)
				if _, wrote := en.written[st.File]; len(a.Commands) > first && !wrote {
					// Text this command wrote before running it is the
					// agent's, not the repository's.
					en.defs = append(en.defs, definition{first: first, end: len(a.Commands), from: st.From, file: st.File})
				}
			}
		}
		out = append(out, f)
	}
	return out
}

// catScriptText matches a script's text read by a substitution:
// $(cat install.sh), $(< install.sh), `cat install.sh`.
var catScriptText = regexp.MustCompile(`^(?:\$\((?:cat\s+|<\s*)([^\s;|&$` + "`" + `()<>]+)\s*\)|` + "`" + `cat\s+([^\s;|&$` + "`" + `()<>]+)\s*` + "`" + `)$`)

// catScript returns the command line to follow for c: bash -c "$(cat
// install.sh)" runs install.sh as bash install.sh would, so it is
// followed as that; any other command as it is.
func catScript(c *shell.Command) ([]string, []bool) {
	if !shellNames[c.Name] || len(c.Argv) != 3 || c.Argv[1] != "-c" {
		return c.Argv, c.Dynamic
	}
	m := catScriptText.FindStringSubmatch(c.Argv[2])
	if m == nil {
		return c.Argv, c.Dynamic
	}
	file := m[1] + m[2]
	return []string{c.Argv[0], file}, []bool{false, false}
}

// mayFollow is a cheap test that a command can run a definition, so
// that ordinary commands cost no more than this.
func mayFollow(c *shell.Command) bool {
	switch c.Name {
	case "npm", "pnpm", "yarn", "bun", "make", "gmake", "just", "rake", "task", "go-task", "cargo", "composer", "deno",
		"sh", "bash", "zsh", "dash", "ksh", "node", "ruby", "perl", "php", "tsx", "ts-node":
		return true
	}
	return strings.HasPrefix(c.Name, "python") || strings.Contains(c.Argv[0], "/")
}

// runLabel names a followed command in reasons: the program and its
// first two operands (npm run release, make deploy, ./scripts/x.sh).
func runLabel(c *shell.Command) string {
	words := []string{c.Name}
	if strings.Contains(c.Argv[0], "/") {
		words[0] = c.Argv[0]
	}
	for _, a := range c.Args() {
		if len(words) == 3 {
			break
		}
		if !strings.HasPrefix(a, "-") {
			words = append(words, a)
		}
	}
	return strings.Join(words, " ")
}

// addFollowed marks the commands followed with what they resolved to:
// resolved {kind, from, run, steps} or unresolved {kind, run, why}.
func addFollowed(cmds []*ast.Term, fs []followed) {
	for _, f := range fs {
		if f.cmd >= len(cmds) {
			continue
		}
		obj := cmds[f.cmd].Value.(ast.Object)
		items := [][2]*ast.Term{
			{keyFollowKind, ast.StringTerm(f.res.Kind)},
			{keyFollowRun, ast.StringTerm(f.run)},
		}
		if f.res.From != "" {
			items = append(items, [2]*ast.Term{keyFollowFrom, ast.StringTerm(f.res.From)})
		}
		if !f.res.Resolved() {
			items = append(items, [2]*ast.Term{keyFollowWhy, ast.StringTerm(f.res.Why)})
			obj.Insert(keyFollowUnresolved, ast.ObjectTerm(items...))
			continue
		}
		steps := make([]*ast.Term, len(f.res.Steps))
		for i, st := range f.res.Steps {
			steps[i] = ast.StringTerm(st.From)
		}
		items = append(items, [2]*ast.Term{keyFollowSteps, ast.ArrayTerm(steps...)})
		if f.parseError != "" {
			items = append(items, [2]*ast.Term{keyParseError, ast.StringTerm(f.parseError)})
		}
		if f.dropped > 0 {
			items = append(items, [2]*ast.Term{keyFollowDropped, ast.InternedTerm(f.dropped)})
		}
		obj.Insert(keyFollowResolved, ast.ObjectTerm(items...))
	}
}

// addPackages marks the commands that run a package by name from the
// registry (npx, bunx, pnpm dlx, yarn dlx, npm exec) with that package
// and whether the project declares it: package {name, declared,
// manifest}, manifest false when no package.json could be read.
func (en *enricher) addPackages(cmds []*ast.Term, a *shell.Analysis) {
	if len(en.pc.roots) == 0 || en.pc.cwd == "" {
		return
	}
	for i := range a.Commands {
		c := &a.Commands[i]
		pkg := packageRun(c)
		if pkg == "" || i >= len(cmds) {
			continue
		}
		dir := en.pc.cwd
		if c.Dir != "" {
			if d := en.pc.resolve(c.Dir); isAbs(d.abs) && !d.dynamic {
				dir = d.abs
			}
		}
		declared, found := indirect.Dependency(pkg, indirect.Workspace{Dir: dir, Roots: en.pc.roots, Written: en.written})
		items := [][2]*ast.Term{{keyName, ast.StringTerm(pkg)}}
		if declared {
			items = append(items, [2]*ast.Term{keyFollowDeclared, termTrue})
		}
		if found {
			items = append(items, [2]*ast.Term{keyFollowManifest, termTrue})
		}
		cmds[i].Value.(ast.Object).Insert(keyFollowPackage, ast.ObjectTerm(items...))
	}
}

// packageRun returns the package a command fetches and runs by name, or
// "".
func packageRun(c *shell.Command) string {
	args := c.Args()
	switch c.Name {
	case "npx", "bunx", "pnpx":
	case "pnpm", "yarn", "bun":
		if len(args) == 0 || (args[0] != "dlx" && args[0] != "x") {
			return ""
		}
		args = args[1:]
	case "npm":
		if len(args) == 0 || (args[0] != "exec" && args[0] != "x") {
			return ""
		}
		args = args[1:]
	default:
		return ""
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-p" || a == "--package":
			if i+1 < len(args) {
				return args[i+1]
			}
		case strings.HasPrefix(a, "--package="):
			return strings.TrimPrefix(a, "--package=")
		case a == "--":
		case strings.HasPrefix(a, "-"):
		default:
			return a
		}
	}
	return ""
}

// scriptArg reports whether the argument at i of c's Args is a script
// whose commands the analysis lists nested (expect -c '…', bash -c '…',
// eval '…'): its text names no file and mentions nothing of its own.
func scriptArg(c *shell.Command, i int) bool {
	switch c.Name {
	case "expect":
		return i > 0 && c.Argv[i] == "-c"
	case "eval":
		return true
	}
	return i == shell.ScriptOperand(c.Name, c.Args())
}

// addProvenance marks the commands whose text was read from a definition
// of the workspace with provenance {kind: "repository", from, file}. The
// commands the agent typed carry no provenance: rules read its absence as
// "typed", which keeps the common call as cheap as before.
func addProvenance(cmds []*ast.Term, prov []int, defs []definition) {
	if prov == nil {
		return
	}
	terms := make([]*ast.Term, len(defs))
	for i, c := range cmds {
		if i >= len(prov) || prov[i] < 0 {
			continue
		}
		d := prov[i]
		if terms[d] == nil {
			terms[d] = ast.ObjectTerm(
				[2]*ast.Term{keyKind, keyRepository},
				[2]*ast.Term{keyFollowFrom, ast.StringTerm(defs[d].from)},
				[2]*ast.Term{keyFile, ast.StringTerm(defs[d].file)},
			)
		}
		c.Value.(ast.Object).Insert(keyProvenance, terms[d])
	}
}
