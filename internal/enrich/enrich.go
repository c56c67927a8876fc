package enrich

import (
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/internal/adapters"
	"github.com/ahp-opa/ahp-opa/internal/effects"
	"github.com/ahp-opa/ahp-opa/internal/inline"
	"github.com/ahp-opa/ahp-opa/internal/shell"
	"github.com/ahp-opa/ahp-opa/transport"
	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// InputKey is the key of the policy input under which ahp-opa adds what it
// derives from the event: the tool family, resolved paths and the parsed
// shell command. An "ahp" key sent by the harness is replaced: policies
// must be able to trust it.
const InputKey = "ahp"

// InputVersion is the version of the input.ahp schema (docs/policy.md).
const InputVersion = 1

// maxPaths bounds the path objects of one input: a command with thousands
// of operands must not cost thousands of allocations per decision.
const maxPaths = 512

// Options configure the enrichment.
type Options struct {
	// Home is the user's home directory, to expand ~ and $HOME. Empty
	// means: guessed from the session's directories (/home/u/…, /Users/u/…),
	// else the home of this process, which a stdio backend shares with the
	// agent.
	Home string
	// Limits bound the shell analysis; zero values take
	// shell.DefaultLimits.
	Limits shell.Limits
	// Effects is the compiled effects table (input.ahp.effects); nil
	// means the built-in one.
	Effects *effects.Matcher
}

// Result is what the enrichment derived from one event.
type Result struct {
	// Parts are the parts computed; Object holds exactly those.
	Parts Parts
	// Family is the tool family (FamilyShell, …), always computed.
	Family string
	// Agent names the native agent that asked, "" for AHP harnesses.
	Agent string
	// Shell is the analysis of a shell tool's command, nil when the tool
	// is not a shell or no part needing it was asked for.
	Shell *shell.Analysis
	// Sensitive and Writes are the input.ahp flags of the same names, when
	// Parts holds them.
	Sensitive, Writes bool
	// Object is input.ahp.
	Object ast.Object
}

// Input returns the policy input for an event: its fields, and ahp (the
// enrichment, Result.Object) under InputKey in place of any "ahp" key the
// harness sent. The event is not modified.
func Input(event ast.Object, ahp ast.Object) ast.Object {
	items := make([][2]*ast.Term, 0, event.Len()+1)
	event.Foreach(func(k, v *ast.Term) {
		if !k.Equal(keyAHP) {
			items = append(items, [2]*ast.Term{k, v})
		}
	})
	items = append(items, [2]*ast.Term{keyAHP, ast.NewTerm(ahp)})
	return ast.NewObject(items...)
}

// FullInput returns the policy input for an event with every part of
// input.ahp but the session facts, for the tools that show or replay an
// event outside the engine.
func FullInput(ev *transport.Event, opts Options) ast.Object {
	return Input(ev.Object, Enrich(ev, opts, All).Object)
}

var processHome = sync.OnceValue(func() string {
	h, _ := os.UserHomeDir()
	return h
})

// Interned keys of the enrichment: every decision builds these objects.
var (
	keyAHP        = ast.StringTerm(InputKey)
	keyAgent      = ast.StringTerm("agent")
	keyVersion    = ast.StringTerm("version")
	keyTool       = ast.StringTerm("tool")
	keyName       = ast.StringTerm("name")
	keyFamily     = ast.StringTerm("family")
	keyMCP        = ast.StringTerm("mcp")
	keyServer     = ast.StringTerm("server")
	keyPaths      = ast.StringTerm("paths")
	keyURLs       = ast.StringTerm("urls")
	keyWorkspace  = ast.StringTerm("workspace")
	keyCwd        = ast.StringTerm("cwd")
	keyRoots      = ast.StringTerm("roots")
	keyHome       = ast.StringTerm("home")
	keyShell      = ast.StringTerm("shell")
	keyCommand    = ast.StringTerm("command")
	keyCommands   = ast.StringTerm("commands")
	keyPrograms   = ast.StringTerm("programs")
	keyClasses    = ast.StringTerm("classes")
	keyMentions   = ast.StringTerm("mentions")
	keySensitive  = ast.StringTerm("sensitive")
	keyWrites     = ast.StringTerm("writes")
	keyParseError = ast.StringTerm("parse_error")
	keyAmbiguous  = ast.StringTerm("ambiguous")
	keyIncomplete = ast.StringTerm("incomplete")
	keyArgv       = ast.StringTerm("argv")
	keyArgs       = ast.StringTerm("args")
	keyWrappers   = ast.StringTerm("wrappers")
	keyEnv        = ast.StringTerm("env")
	keyRedirects  = ast.StringTerm("redirects")
	keyDepth      = ast.StringTerm("depth")
	keyVia        = ast.StringTerm("via")
	keyWhere      = ast.StringTerm("where")
	keyRepeats    = ast.StringTerm("repeats")
	keyParent     = ast.StringTerm("parent")
	keyInputs     = ast.StringTerm("inputs")
	keyBackground = ast.StringTerm("background")
	keyOp         = ast.StringTerm("op")
	keyFd         = ast.StringTerm("fd")
	keyTarget     = ast.StringTerm("target")
	keyBody       = ast.StringTerm("body")
	keyPath       = ast.StringTerm("path")
	keyRaw        = ast.StringTerm("raw")
	keyBase       = ast.StringTerm("base")
	keyHomeRel    = ast.StringTerm("home_rel")
	keyInside     = ast.StringTerm("inside_workspace")
	keyOutside    = ast.StringTerm("outside_workspace")
	keyRoot       = ast.StringTerm("root")
	keyGlob       = ast.StringTerm("glob")
	// keyCredential is also the key of a URL's credential kind.
	keyCredentialDir    = ast.StringTerm("credential_dir")
	keyHoldsCredentials = ast.StringTerm("holds_credentials")
	keyScope            = ast.StringTerm("scope")
	keyEquivalent       = ast.StringTerm("equivalent")
	keyDynamic          = ast.StringTerm("dynamic")
	keyArg              = ast.StringTerm("arg")
	keyKey              = ast.StringTerm("key")
	keyURL              = ast.StringTerm("url")
	keyScheme           = ast.StringTerm("scheme")
	keyHost             = ast.StringTerm("host")
	keyPort             = ast.StringTerm("port")
	termTrue            = ast.BooleanTerm(true)
	termEmpty           = ast.StringTerm("")
)

// enricher carries the state of one enrichment.
type enricher struct {
	pc    *pathContext
	dir   string // the directory relative paths start from
	paths int    // path objects built so far
	// sensitive is set once a path object is marked sensitive.
	sensitive bool
	// writes is set when the call may write a file (see Enrich).
	writes bool
	// analysis is the parsed shell command, for the secrets scan.
	analysis *shell.Analysis
	// resolved marks the commands of analysis whose definition was
	// followed and read (npm run x, make y).
	resolved map[int]bool
	// defs are the definitions followed, whose commands were spliced
	// into analysis: where each command's text came from.
	defs []definition
	// written holds the text of the files the command writes, by
	// absolute path, for following what it runs next.
	written map[string]string
}

// Enrich derives the parts of input.ahp asked for from an event. It never
// fails: what cannot be derived is left out. Parts that others depend on
// are computed as needed (the sensitive flag needs every path, so the
// shell command is parsed for it) but only the parts asked for are put in
// Result.Object.
func Enrich(ev *transport.Event, opts Options, parts Parts) *Result {
	r := &Result{Parts: parts, Agent: agentOf(ev.Source)}
	c := readCall(ev, r.Agent)
	fam := c.family
	r.Family = fam
	items := make([][2]*ast.Term, 0, 9)
	if parts&Version != 0 {
		items = append(items, [2]*ast.Term{keyVersion, ast.InternedTerm(InputVersion)})
	}
	if parts&Agent != 0 && r.Agent != "" {
		// Which native agent asked, when the event came through a native
		// hook: one policy can treat agents alike or differently.
		items = append(items, [2]*ast.Term{keyAgent, ast.StringTerm(r.Agent)})
	}
	if parts&(Tool|Workspace|Shell|Secrets|Sensitive|Writes|Effects) == 0 {
		r.Object = ast.NewObject(items...)
		return r
	}

	cwd, roots := ev.Session.Cwd, ev.Session.WorkspaceRoots
	home := opts.Home
	if home == "" {
		home = guessHome(cwd, roots)
	}
	pc := newPathContext(cwd, roots, home)
	en := &enricher{pc: pc, dir: pc.cwd}
	// The command runs in its workdir: relative paths and $PWD start from
	// it. The native adapters already moved the session's cwd there, so a
	// relative workdir of a native call is not applied twice.
	if w := c.workdir; w != "" && (isAbs(slashes(w)) || c.origin != ahp.OriginNative) {
		if d := pc.resolve(w); isAbs(d.abs) && !d.dynamic {
			pc.cwd, en.dir = d.abs, d.abs
		}
	}

	if parts&(Tool|Sensitive|Writes) != 0 {
		toolItems := [][2]*ast.Term{{keyName, ast.StringTerm(c.name)}, {keyFamily, ast.StringTerm(fam)}}
		if c.mcp != nil {
			toolItems = append(toolItems, [2]*ast.Term{keyMCP, c.mcp})
		}
		if c.equivalent != "" {
			toolItems = append(toolItems, [2]*ast.Term{keyEquivalent, ast.StringTerm(c.equivalent)})
		}
		if len(c.paths) > 0 {
			terms := make([]*ast.Term, 0, len(c.paths))
			for i, p := range c.paths {
				if t := en.path(p, keyKey, ast.StringTerm(c.pathKeys[i])); t != nil {
					terms = append(terms, t)
				}
			}
			toolItems = append(toolItems, [2]*ast.Term{keyPaths, ast.ArrayTerm(terms...)})
			en.writes = fam == FamilyFileWrite || fam == FamilyFileEdit
		}
		if fam == FamilySearch {
			// What a file search reaches, beyond the paths it names (roles.go).
			if t := en.scope(c, toolItems); t != nil {
				toolItems = append(toolItems, [2]*ast.Term{keyScope, t})
			}
		}
		if parts&Tool != 0 {
			if urls := toolURLs(c.input, fam == FamilyFetch); len(urls) > 0 {
				toolItems = append(toolItems, [2]*ast.Term{keyURLs, ast.ArrayTerm(urls...)})
			}
			items = append(items, [2]*ast.Term{keyTool, ast.ObjectTerm(toolItems...)})
		}
	}
	if parts&Workspace != 0 {
		items = append(items, [2]*ast.Term{keyWorkspace, en.workspace()})
	}
	if fam == FamilyShell && parts&(Shell|Secrets|Sensitive|Writes) == 0 && parts&Effects != 0 {
		// Only the effects read the command: analyse it without
		// building input.ahp.shell.
		lim := opts.Limits
		if lim == (shell.Limits{}) {
			lim = shell.DefaultLimits
		}
		if a, _ := analyze(c.run, lim); a != nil {
			en.expand(a, lim)
			en.analysis = a
		}
	}
	if fam == FamilyShell && parts&(Shell|Secrets|Sensitive|Writes) != 0 {
		sh := en.shell(c.run, opts.Limits)
		if ambiguous := c.ambiguous; len(ambiguous) > 0 {
			// Kept even when the command analysed cannot be read: the
			// deny must not depend on which of the fields was picked.
			if sh == nil {
				sh = ast.ObjectTerm(
					[2]*ast.Term{keyCommand, termEmpty},
					[2]*ast.Term{keyCommands, ast.ArrayTerm()},
					[2]*ast.Term{keyPrograms, ast.ObjectTerm()},
				)
			}
			fields := make([]*ast.Term, len(ambiguous))
			for i, f := range ambiguous {
				fields[i] = ast.StringTerm(f)
			}
			sh.Value.(ast.Object).Insert(keyAmbiguous, ast.ArrayTerm(fields...))
		}
		if sh != nil && parts&Shell != 0 {
			items = append(items, [2]*ast.Term{keyShell, sh})
		}
	}
	if (fam == FamilyFileWrite || fam == FamilyFileEdit) && parts&(Shell|Secrets|Sensitive|Writes|Effects) != 0 {
		// A file written where it runs later: its text is code, and its
		// commands are judged as typed ones, marked later.
		lim := opts.Limits
		if lim == (shell.Limits{}) {
			lim = shell.DefaultLimits
		}
		if a, script := en.laterAnalysis(c, lim); a != nil {
			if sh := en.shellTerm(a, script, lim); parts&Shell != 0 {
				items = append(items, [2]*ast.Term{keyShell, sh})
			}
		}
	}
	r.Shell = en.analysis
	if parts&Secrets != 0 {
		var cmds []shell.Command
		if en.analysis != nil {
			cmds = en.analysis.Commands
		}
		if t := secrets(c, cmds); t != nil {
			items = append(items, [2]*ast.Term{keySecrets, t})
		}
	}
	if parts&Effects != 0 {
		m := opts.Effects
		if m == nil {
			// The built-in table is embedded and tested: it compiles.
			m, _ = effects.Builtin()
		}
		list, index := en.effects(m, c)
		items = append(items, [2]*ast.Term{keyEffects, list})
		if index != nil {
			items = append(items, [2]*ast.Term{keyEffectIdx, index})
		}
	}
	r.Sensitive, r.Writes = en.sensitive && parts&Sensitive != 0, en.writes && parts&Writes != 0
	if r.Sensitive {
		items = append(items, [2]*ast.Term{keySensitive, termTrue})
	}
	if r.Writes {
		items = append(items, [2]*ast.Term{keyWrites, termTrue})
	}
	r.Object = ast.NewObject(items...)
	return r
}

// agentOf names the agent of a native-hook event from its source
// (adapters.SourcePrefix + name), "" for any other source.
func agentOf(src string) string {
	name, ok := strings.CutPrefix(src, adapters.SourcePrefix)
	if !ok || !adapters.Known(name) {
		return ""
	}
	return name
}

// guessHome finds a home directory above the session's directories.
func guessHome(cwd string, roots []string) string {
	for _, p := range append([]string{cwd}, roots...) {
		p = slashes(p)
		switch {
		case p == "/root" || strings.HasPrefix(p, "/root/"):
			return "/root"
		case strings.HasPrefix(p, "/home/"), strings.HasPrefix(p, "/Users/"):
			parts := strings.SplitN(p, "/", 4)
			if len(parts) >= 3 && parts[2] != "" {
				return "/" + parts[1] + "/" + parts[2]
			}
		}
	}
	return processHome()
}

func (en *enricher) workspace() *ast.Term {
	pc := en.pc
	roots := make([]*ast.Term, len(pc.roots))
	for i, r := range pc.roots {
		roots[i] = ast.StringTerm(r)
	}
	return ast.ObjectTerm(
		[2]*ast.Term{keyCwd, ast.StringTerm(pc.cwd)},
		[2]*ast.Term{keyRoots, ast.ArrayTerm(roots...)},
		[2]*ast.Term{keyHome, ast.StringTerm(pc.home)},
	)
}

// path builds a path object; extra is one more key and value (the argument
// index or the input key it came from). It returns nil past maxPaths.
func (en *enricher) path(raw string, extraKey, extraValue *ast.Term) *ast.Term {
	if en.paths >= maxPaths {
		return nil
	}
	en.paths++
	name := raw
	if extraKey == keyArg {
		// A command's argument may carry its file after @ or =@ (curl -d
		// @body.json, -F f=@x); a tool's path field is the path itself.
		name = fileOperand(raw)
	}
	pi := en.pc.resolveIn(name, en.dir)
	pi.raw = raw
	items := make([][2]*ast.Term, 0, 8)
	items = append(items,
		[2]*ast.Term{keyRaw, ast.StringTerm(pi.raw)},
		[2]*ast.Term{keyPath, ast.StringTerm(pi.abs)},
		[2]*ast.Term{keyBase, ast.StringTerm(pi.base)},
	)
	if pi.inHome {
		items = append(items, [2]*ast.Term{keyHomeRel, ast.StringTerm(pi.homeRel)})
	}
	for _, f := range []struct {
		key *ast.Term
		on  bool
	}{
		{keyInside, pi.inside}, {keyOutside, pi.outside}, {keyRoot, pi.root},
		{keyHome, pi.home}, {keyGlob, pi.glob}, {keyDynamic, pi.dynamic},
	} {
		if f.on {
			items = append(items, [2]*ast.Term{f.key, termTrue})
		}
	}
	cm := credentialOf(&pi)
	if cm.kind != "" {
		items = append(items, [2]*ast.Term{keyCredential, ast.StringTerm(cm.kind)})
	}
	if cm.dirKind != "" {
		items = append(items, [2]*ast.Term{keyCredentialDir, ast.StringTerm(cm.dirKind)})
	}
	if cm.holds {
		items = append(items, [2]*ast.Term{keyHoldsCredentials, termTrue})
	}
	if cm != (credentialMatch{}) || pi.sensitive() {
		items = append(items, [2]*ast.Term{keySensitive, termTrue})
		en.sensitive = true
	}
	if extraKey != nil {
		items = append(items, [2]*ast.Term{extraKey, extraValue})
	}
	return ast.ObjectTerm(items...)
}

// analyze parses the command of a shell tool; nil for a command that is
// neither a string nor an argv. lim holds no zero limit.
func analyze(raw ast.Value, lim shell.Limits) (*shell.Analysis, string) {
	switch c := raw.(type) {
	case ast.String:
		return shell.Analyze(string(c), lim), string(c)
	case *ast.Array:
		argv := make([]string, 0, c.Len())
		for i := range c.Len() {
			s, ok := asText(c.Elem(i).Value)
			if !ok {
				return nil, ""
			}
			argv = append(argv, s)
		}
		return shell.AnalyzeArgv(argv, lim), strings.Join(argv, " ")
	}
	return nil, ""
}

// expand appends to the analysis what npm run, make, ./script.sh … run,
// read from the workspace, then the commands of code handed to
// interpreters (python -c, perl -e, heredocs), which runs commands too.
func (en *enricher) expand(a *shell.Analysis, lim shell.Limits) ([]followed, []inline.Program) {
	// Files the command writes are read as written by what it runs next
	// (printf '…' > Makefile && make), and what they run later is
	// analysed as well.
	files := en.shellWrites(a)
	for _, f := range files {
		if en.written == nil {
			en.written = map[string]string{}
		}
		en.written[f.abs] = f.text
	}
	fol := en.follow(a, lim)
	en.spliceLater(a, files, lim)
	// After the definitions and written texts: a raw API call there is
	// the same act.
	spliceAPI(a, lim)
	for _, f := range fol {
		if f.res.Resolved() {
			if en.resolved == nil {
				en.resolved = map[int]bool{}
			}
			en.resolved[f.cmd] = true
		}
	}
	return fol, inline.Expand(a, lim)
}

// powershellTools are the shell tools whose command is PowerShell:
// Claude Code's PowerShell, Copilot's powershell.
var powershellTools = map[string]bool{"powershell": true, "pwsh": true, "run_powershell": true}

// shell analyses the command of a shell tool.
func (en *enricher) shell(raw ast.Value, lim shell.Limits) *ast.Term {
	if lim == (shell.Limits{}) {
		lim = shell.DefaultLimits
	}
	a, script := analyze(raw, lim)
	if a == nil {
		return nil
	}
	return en.shellTerm(a, script, lim)
}

// shellTerm is input.ahp.shell for an analysed script.
func (en *enricher) shellTerm(a *shell.Analysis, script string, lim shell.Limits) *ast.Term {
	fol, progs := en.expand(a, lim)
	en.analysis = a
	cmds := make([]*ast.Term, len(a.Commands))
	for i := range a.Commands {
		cmds[i] = en.command(&a.Commands[i])
	}
	addInline(cmds, progs)
	addFollowed(cmds, fol)
	addProvenance(cmds, provenance(a, en.defs), en.defs)
	en.addPackages(cmds, a)
	items := [][2]*ast.Term{
		{keyCommand, ast.StringTerm(script)},
		{keyCommands, ast.ArrayTerm(cmds...)},
		{keyPrograms, programs(a.Commands)},
	}
	if t := classes(a.Commands); t != nil {
		items = append(items, [2]*ast.Term{keyClasses, t})
	}
	if t := mentions(a.Commands); t != nil {
		items = append(items, [2]*ast.Term{keyMentions, t})
	}
	items = appendCodeIndex(items, a.Commands)
	if a.ParseError != "" {
		items = append(items, [2]*ast.Term{keyParseError, ast.StringTerm(a.ParseError)})
	}
	if a.Incomplete != "" {
		items = append(items, [2]*ast.Term{keyIncomplete, ast.StringTerm(a.Incomplete)})
	}
	return ast.ObjectTerm(items...)
}

// programs indexes the commands by program: each name, and each wrapper
// name, maps to the indices of the commands that run it. Rules that start
// with `input.ahp.shell.programs.rm` are skipped by OPA's rule index when
// no rm runs, which keeps a large library cheap.
func programs(cmds []shell.Command) *ast.Term {
	index := map[string][]*ast.Term{}
	last := map[string]int{}
	var names []string
	add := func(name string, i int) {
		if name == "" {
			return
		}
		if _, ok := index[name]; !ok {
			names = append(names, name)
		} else if last[name] == i {
			return // sudo sudo ls
		}
		last[name] = i
		index[name] = append(index[name], ast.InternedTerm(i))
	}
	for i := range cmds {
		add(cmds[i].Name, i)
		for _, w := range cmds[i].Wrappers {
			add(w, i)
		}
	}
	items := make([][2]*ast.Term, len(names))
	for i, name := range names {
		items[i] = [2]*ast.Term{ast.StringTerm(name), ast.ArrayTerm(index[name]...)}
	}
	return ast.ObjectTerm(items...)
}

// classes indexes the commands by program class (ClassNames): each class
// maps to the indices of the commands whose program or a wrapper is in it.
// Classes with no command are left out; nil when there is none.
func classes(cmds []shell.Command) *ast.Term {
	var index [16][]*ast.Term
	found := false
	for i := range cmds {
		bits := programClasses[cmds[i].Name]
		if n := cmds[i].Name; strings.HasPrefix(n, "mkfs.") || strings.HasPrefix(n, "newfs_") {
			bits |= classMkfsBit
		}
		for _, w := range cmds[i].Wrappers {
			bits |= programClasses[w]
		}
		for c := 0; bits != 0; c++ {
			if bits&1 != 0 {
				index[c] = append(index[c], ast.InternedTerm(i))
				found = true
			}
			bits >>= 1
		}
	}
	if !found {
		return nil
	}
	var items [][2]*ast.Term
	for c, name := range ClassNames {
		if len(index[c]) > 0 {
			items = append(items, [2]*ast.Term{ast.StringTerm(name), ast.ArrayTerm(index[c]...)})
		}
	}
	return ast.ObjectTerm(items...)
}

// mentions indexes the commands by the mentionWords their arguments
// contain; nil when none does.
func mentions(cmds []shell.Command) *ast.Term {
	var items [][2]*ast.Term
	for _, word := range mentionWords {
		var idx []*ast.Term
		for i := range cmds {
			for j, a := range cmds[i].Args() {
				if strings.Contains(a, word) && !scriptArg(&cmds[i], j) {
					idx = append(idx, ast.InternedTerm(i))
					break
				}
			}
		}
		if len(idx) > 0 {
			items = append(items, [2]*ast.Term{ast.StringTerm(word), ast.ArrayTerm(idx...)})
		}
	}
	if items == nil {
		return nil
	}
	return ast.ObjectTerm(items...)
}

func (en *enricher) command(c *shell.Command) *ast.Term {
	en.dir = en.pc.cwd
	if c.Dir != "" {
		if d := en.pc.resolve(c.Dir); isAbs(d.abs) {
			en.dir = d.abs
		}
	}
	argv := make([]*ast.Term, len(c.Argv))
	for i, s := range c.Argv {
		argv[i] = ast.StringTerm(s)
	}
	var args []*ast.Term
	if len(argv) > 0 {
		args = argv[1:]
	}
	items := make([][2]*ast.Term, 0, 14)
	items = append(items,
		[2]*ast.Term{keyName, ast.StringTerm(c.Name)},
		[2]*ast.Term{keyArgv, ast.ArrayTerm(argv...)},
		[2]*ast.Term{keyArgs, ast.ArrayTerm(args...)},
		[2]*ast.Term{keyDepth, ast.InternedTerm(c.Depth)},
		[2]*ast.Term{keyVia, ast.StringTerm(c.Via)},
		[2]*ast.Term{keyParent, ast.InternedTerm(c.Parent)},
	)
	if len(c.Wrappers) > 0 {
		items = append(items, [2]*ast.Term{keyWrappers, stringArray(c.Wrappers)})
	}
	if len(c.Where) > 0 {
		items = append(items, [2]*ast.Term{keyWhere, stringArray(c.Where)})
	}
	if c.Repeats {
		items = append(items, [2]*ast.Term{keyRepeats, termTrue})
	}
	if len(c.Env) > 0 {
		env := make([][2]*ast.Term, len(c.Env))
		for i, e := range c.Env {
			env[i] = [2]*ast.Term{ast.StringTerm(e.Name), ast.StringTerm(e.Value)}
		}
		items = append(items, [2]*ast.Term{keyEnv, ast.ObjectTerm(env...)})
	}
	if writingPrograms[c.Name] {
		en.writes = true
	}
	if len(c.Redirects) > 0 {
		rs := make([]*ast.Term, len(c.Redirects))
		for i, r := range c.Redirects {
			rs[i] = en.redirect(r)
			if writeOps[r.Op] {
				en.writes = true
			}
		}
		items = append(items, [2]*ast.Term{keyRedirects, ast.ArrayTerm(rs...)})
	}
	if len(c.Inputs) > 0 {
		in := make([]*ast.Term, len(c.Inputs))
		for i, j := range c.Inputs {
			in[i] = ast.InternedTerm(j)
		}
		items = append(items, [2]*ast.Term{keyInputs, ast.ArrayTerm(in...)})
	}
	if c.Background {
		items = append(items, [2]*ast.Term{keyBackground, termTrue})
	}
	items = appendCodeFlags(items, c)
	var paths, urls []*ast.Term
	if c.Name == "apply_patch" || c.Name == "applypatch" {
		// Codex edits files through a shell command whose argument is a
		// patch: its paths are the files named in the patch.
		for i, arg := range c.Args() {
			for _, p := range patchPaths(arg) {
				if t := en.path(p, keyArg, ast.InternedTerm(i)); t != nil {
					paths = append(paths, t)
				}
			}
		}
		for _, r := range c.Redirects {
			for _, p := range patchPaths(r.Body) {
				if t := en.path(p, keyArg, ast.InternedTerm(-1)); t != nil {
					paths = append(paths, t)
				}
			}
		}
	} else {
		afterDashes := false
		// tar -C DIR reads the operands after it from DIR: when it makes
		// an archive, DIR is a place to start from, not an input.
		tarC, tarDir := tarCreates(c), ""
		savedDir := en.dir
		defer func() { en.dir = savedDir }()
		for i, arg := range c.Args() {
			if arg == "--" && !afterDashes {
				afterDashes = true
				continue
			}
			if tarC && !afterDashes {
				if arg == "-C" || arg == "--directory" {
					tarDir = "next"
					continue
				}
				v, isDir := strings.CutPrefix(arg, "--directory=")
				if tarDir == "next" {
					v, isDir, tarDir = arg, true, ""
				}
				if isDir {
					if d := en.pc.resolveIn(v, en.dir); isAbs(d.abs) && !d.dynamic {
						en.dir = d.abs
					}
					continue
				}
			}
			if scriptArg(c, i) {
				continue
			}
			if c.Name == "dd" && (strings.HasPrefix(arg, "of=") || strings.HasPrefix(arg, "if=")) {
				// dd names its files as operands: of=/dev/sda.
				if t := en.path(arg[3:], keyArg, ast.InternedTerm(i)); t != nil {
					paths = append(paths, pathRaw(t, arg))
				}
				continue
			}
			if u := parseURL(arg); u != nil {
				urls = append(urls, urlTerm(u, arg, keyArg, ast.InternedTerm(i)))
				continue
			}
			if u := bareHostURL(c.Name, arg); u != nil {
				urls = append(urls, urlTerm(u, arg, keyArg, ast.InternedTerm(i)))
				continue
			}
			if !pathCandidate(arg, afterDashes) {
				continue
			}
			if t := en.path(arg, keyArg, ast.InternedTerm(i)); t != nil {
				paths = append(paths, t)
			}
		}
	}
	if len(paths) > 0 {
		items = append(items, [2]*ast.Term{keyPaths, ast.ArrayTerm(paths...)})
	}
	if len(urls) > 0 {
		items = append(items, [2]*ast.Term{keyURLs, ast.ArrayTerm(urls...)})
	}
	return ast.ObjectTerm(items...)
}

// pathRaw sets the raw key of a path object to what was written.
func pathRaw(t *ast.Term, raw string) *ast.Term {
	t.Value.(ast.Object).Insert(keyRaw, ast.StringTerm(raw))
	return t
}

// fileOperand returns the file an argument names when it uses the @file
// convention of curl, gh and httpie (@notes.txt, field=@notes.txt).
func fileOperand(arg string) string {
	if len(arg) > 1 && arg[0] == '@' {
		return arg[1:]
	}
	if i := strings.Index(arg, "=@"); i > 0 && i+2 < len(arg) && !strings.ContainsAny(arg[:i], "/ ") {
		f := arg[i+2:]
		if j := strings.IndexByte(f, ';'); j > 0 {
			f = f[:j] // curl -F f=@x;type=text/plain
		}
		return f
	}
	return arg
}

// pathCandidate reports whether an argument may name a file: not an
// option (unless after --), not NAME=value, not empty or multi-line.
func pathCandidate(arg string, afterDashes bool) bool {
	if arg == "" || len(arg) > 4096 || strings.ContainsAny(arg, "\n\x00") {
		return false
	}
	if !afterDashes && arg[0] == '-' {
		return false
	}
	if eq := strings.IndexByte(arg, '='); eq > 0 && !strings.ContainsAny(arg[:eq], "/.~$") && !strings.HasPrefix(arg[eq:], "=@") {
		return false
	}
	return true
}

func (en *enricher) redirect(r shell.Redirect) *ast.Term {
	items := make([][2]*ast.Term, 0, 5)
	items = append(items, [2]*ast.Term{keyOp, ast.StringTerm(r.Op)})
	if r.Fd != "" {
		items = append(items, [2]*ast.Term{keyFd, ast.StringTerm(r.Fd)})
	}
	if r.Op == "<<" || r.Op == "<<-" || r.Op == "<<<" {
		items = append(items, [2]*ast.Term{keyBody, ast.StringTerm(r.Body)})
	} else {
		items = append(items, [2]*ast.Term{keyTarget, ast.StringTerm(r.Target)})
		if t := en.path(r.Target, nil, nil); t != nil && r.Target != "" {
			items = append(items, [2]*ast.Term{keyPath, t})
		}
	}
	return ast.ObjectTerm(items...)
}

// parseURL finds a URL with a scheme in an argument (https://…, or
// --url=https://…).
func parseURL(arg string) *url.URL {
	i := strings.Index(arg, "://")
	if i <= 0 {
		return nil
	}
	start := i
	for start > 0 && isSchemeChar(arg[start-1]) {
		start--
	}
	if start == i || !isLetter(arg[start]) {
		return nil
	}
	end := len(arg)
	if j := strings.IndexAny(arg[i:], " \t\n\"'<>"); j >= 0 {
		end = i + j
	}
	u, err := url.Parse(arg[start:end])
	if err != nil || u.Host == "" {
		return nil
	}
	return u
}

// tarCreates reports whether c is a tar that makes an archive (-c,
// --create), not one that extracts into -C's directory.
func tarCreates(c *shell.Command) bool {
	if c.Name != "tar" && c.Name != "gtar" && c.Name != "bsdtar" {
		return false
	}
	args := c.Args()
	if len(args) == 0 {
		return false
	}
	for _, a := range args {
		switch {
		case a == "--create":
			return true
		case a == "--extract" || a == "--get" || a == "--append" || a == "--update":
			return false
		case strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--"):
			if strings.ContainsAny(a, "xtru") {
				return false
			}
			if strings.Contains(a, "c") {
				return true
			}
		}
	}
	// Old-style bundled first word: tar czf out.tgz dir.
	return !strings.HasPrefix(args[0], "-") && strings.Contains(args[0], "c") && !strings.ContainsAny(args[0], "xtru")
}

// bareHost is an operand a downloader reads as an http URL: an IPv4
// address, or a host name under a common top-level domain, with a port or
// path perhaps (curl 169.254.169.254/latest/meta-data, wget
// pastebin.com/raw/x). A file name such as out.json is not one.
var bareHost = regexp.MustCompile(`^(\d{1,3}(?:\.\d{1,3}){3}|(?:[a-zA-Z0-9-]+\.)+(?i:com|net|org|io|dev|co|ai|xyz|info|me|site|cloud|biz|ru|cn|tk|top|online|link|gg|us|uk|de)|localhost)((?::\d+)?)(.*)$`)

var classDownloaderBit = uint16(1) << slices.Index(ClassNames, ClassDownloader)

// bareHostURL is the URL a downloader (curl, wget, http…) fetches for an
// operand given without a scheme; nil for any other program or operand.
func bareHostURL(program, arg string) *url.URL {
	if programClasses[program]&classDownloaderBit == 0 || strings.HasPrefix(arg, "-") {
		return nil
	}
	m := bareHost.FindStringSubmatch(arg)
	if m == nil {
		return nil
	}
	rest := m[3]
	switch {
	case rest == "", strings.HasPrefix(rest, "/"), strings.HasPrefix(rest, "?"):
	case strings.HasPrefix(rest, "$"):
		rest = "/" + rest // 169.254.170.2$RELATIVE_URI: the variable is the path
	default:
		return nil
	}
	return parseURL("http://" + m[1] + m[2] + rest)
}

func isSchemeChar(c byte) bool {
	return isLetter(c) || (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.'
}

func urlTerm(u *url.URL, raw string, extraKey, extraValue *ast.Term) *ast.Term {
	items := [][2]*ast.Term{
		{keyRaw, ast.StringTerm(raw)},
		{keyURL, ast.StringTerm(u.String())},
		{keyScheme, ast.StringTerm(strings.ToLower(u.Scheme))},
		{keyHost, ast.StringTerm(strings.ToLower(strings.TrimSuffix(u.Hostname(), ".")))},
		{keyPort, ast.StringTerm(u.Port())},
		{keyPath, ast.StringTerm(u.Path)},
	}
	if kind := urlCredential(u, raw); kind != "" {
		items = append(items, [2]*ast.Term{keyCredential, ast.StringTerm(kind)})
	}
	if extraKey != nil {
		items = append(items, [2]*ast.Term{extraKey, extraValue})
	}
	return ast.ObjectTerm(items...)
}

// toolURLs finds the URLs a tool is asked to open: its url and urls
// fields, and for fetch tools the URLs written in a prompt (Gemini CLI's
// web_fetch takes one).
func toolURLs(input ast.Object, fetch bool) []*ast.Term {
	var out []*ast.Term
	add := func(key, s string) {
		if u := parseURL(s); u != nil && len(out) < 64 {
			out = append(out, urlTerm(u, s, keyKey, ast.StringTerm(key)))
		}
	}
	// A URL under any URL-like field, however the tool spells it
	// (Windsurf's Url, a browser tool's href, a client's endpoint).
	if input != nil {
		input.Foreach(func(k, v *ast.Term) {
			ks, ok := k.Value.(ast.String)
			if !ok || !isRole(urlRoleKeys, string(ks)) {
				return
			}
			for _, s := range texts(v.Value) {
				add(string(ks), s)
			}
		})
	}
	for _, s := range texts(field(input, "urls")) {
		add("urls", s)
	}
	if fetch {
		if s, ok := text(input, "prompt"); ok {
			for _, word := range strings.Fields(s) {
				add("prompt", word)
			}
		}
	}
	return out
}

// stringArray is ss as an array of string terms.
func stringArray(ss []string) *ast.Term {
	ts := make([]*ast.Term, len(ss))
	for i, v := range ss {
		ts[i] = ast.StringTerm(v)
	}
	return ast.ArrayTerm(ts...)
}
