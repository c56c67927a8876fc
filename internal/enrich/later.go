package enrich

import (
	"cmp"
	"encoding/json"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/internal/effects"
	"github.com/ahp-opa/ahp-opa/internal/shell"
)

// Text that runs later: a file written where a program will run what it
// says (a shell rc file, a Makefile recipe, a CI step, a build script, a
// package's install hook) is code. Its text is turned into the shell
// text it amounts to and analysed like a typed command, its commands
// marked shell.ViaLater, so that every rule judges them as the same acts.

// maxLaterBytes bounds the text of one write analysed as code, and
// maxLaterSteps the pieces of it (recipe lines, CI steps) judged apart.
const (
	maxLaterBytes = 64 << 10
	maxLaterSteps = 256
)

// writtenFile is a file a call writes with a known text.
type writtenFile struct {
	cmd  int    // the writing command, -1 for a file tool
	raw  string // the path as written
	abs  string
	text string
}

// laterKinds of executable contexts, by how their text becomes shell.
const (
	laterShell    = "shell"    // every line runs: rc files, .envrc, hooks
	laterRecipe   = "recipe"   // indented lines of a Makefile or justfile
	laterJSON     = "json"     // string values of command fields
	laterCI       = "ci"       // run: and script: steps
	laterRust     = "rust"     // Command::new chains of build.rs
	laterPython   = "python"   // setup.py, conftest.py, noxfile.py
	laterNotebook = "notebook" // code cells of a notebook
	laterSources  = "sources"  // package sources of a package manager's configuration
	laterPth      = "pth"      // import lines of a Python .pth file, run at every start
	laterRunner   = "runner"   // programs a build tool's configuration runs (cargo's runner)
	laterCompose  = "compose"  // containers a compose file starts
	laterSettings = "settings" // shells an editor's settings start (terminal profiles)
	laterPwsh     = "pwsh"     // a PowerShell profile, run at every start
)

var shellRCFiles = map[string]bool{
	".bashrc": true, ".bash_profile": true, ".bash_login": true, ".bash_logout": true, ".profile": true,
	".zshrc": true, ".zprofile": true, ".zshenv": true, ".zlogin": true, ".zlogout": true, ".kshrc": true,
	".mkshrc": true, ".envrc": true, "config.fish": true, ".bash_aliases": true, ".cshrc": true, ".tcshrc": true,
	".login": true, ".logout": true, ".yashrc": true, "rc.elv": true, "config.nu": true, "env.nu": true,
	".xonshrc": true,
}

// powershellProfiles are the files PowerShell runs at every start.
var powershellProfiles = map[string]bool{
	"microsoft.powershell_profile.ps1": true, "profile.ps1": true,
	"microsoft.vscode_profile.ps1": true,
}

// templateHook is a project template's generation hook (cookiecutter,
// copier): it runs when someone generates a project from the template.
var templateHook = regexp.MustCompile(`/hooks/(pre|post)_gen_project\.(py|sh)$`)

var ciFile = regexp.MustCompile(`(^|/)(\.github/workflows/[^/]+|\.github/actions/.+/action|\.gitlab-ci|\.circleci/config|azure-pipelines|bitbucket-pipelines|\.buildkite/[^/]+|\.drone|\.travis|\.woodpecker/[^/]+|\.woodpecker)\.ya?ml$`)

// composeFile names a compose file: docker compose up starts what it says.
var composeFile = regexp.MustCompile(`^(docker-)?compose(\.[\w-]+)?\.ya?ml$`)

// laterKind says how the file at abs runs its text later, "" when it
// does not.
func laterKind(abs string) string {
	base := path.Base(abs)
	switch {
	case powershellProfiles[strings.ToLower(base)]:
		return laterPwsh
	case shellRCFiles[base],
		strings.Contains(abs, "/.git/hooks/"), strings.Contains(abs, "/.githooks/"), strings.Contains(abs, "/.husky/"):
		return laterShell
	case base == "Makefile" || base == "makefile" || base == "GNUmakefile" || strings.HasSuffix(base, ".mk") ||
		strings.EqualFold(base, "justfile") || strings.EqualFold(base, ".justfile"):
		return laterRecipe
	case base == "package.json" || base == "devcontainer.json" || base == ".devcontainer.json" ||
		strings.HasSuffix(abs, "/.vscode/tasks.json") || strings.HasSuffix(base, ".code-workspace"):
		return laterJSON
	case ciFile.MatchString(abs), base == "Taskfile.yml" || base == "Taskfile.yaml" || base == "taskfile.yml":
		return laterCI
	case templateHook.MatchString(abs) && strings.HasSuffix(base, ".sh"):
		return laterShell
	case templateHook.MatchString(abs):
		return laterPython
	case strings.HasSuffix(base, ".pth"):
		return laterPth
	case base == "build.rs":
		return laterRust
	case (base == "config.toml" || base == "config") && strings.HasSuffix(path.Dir(abs), "/.cargo"):
		return laterRunner
	case composeFile.MatchString(base):
		return laterCompose
	case strings.HasSuffix(abs, "/.vscode/settings.json"), strings.HasSuffix(abs, "/Code/User/settings.json"):
		return laterSettings
	case base == "setup.py" || base == "conftest.py" || base == "noxfile.py" || base == "sitecustomize.py" || base == "usercustomize.py":
		return laterPython
	case strings.HasSuffix(base, ".ipynb"):
		return laterNotebook
	case sourceFiles[base], strings.HasPrefix(base, "requirements") && strings.HasSuffix(base, ".txt"):
		return laterSources
	}
	return ""
}

// sourceFiles are package managers' configuration files that name where
// packages come from.
var sourceFiles = map[string]bool{
	".npmrc": true, ".yarnrc": true, ".yarnrc.yml": true, "bunfig.toml": true, ".bunfig.toml": true,
	"pip.conf": true, "pip.ini": true, "pyproject.toml": true, "constraints.txt": true,
}

// sourceSetting finds a setting of a package source: registry=URL
// (.npmrc, bunfig), npmRegistryServer: URL (.yarnrc.yml), registry "URL"
// (.yarnrc), index-url = URL (pip.conf), --index-url URL (requirements),
// url = "URL" (pyproject's package indexes).
var sourceSetting = regexp.MustCompile(`(?i)^[\s+]*(?:(@[\w.-]+:)?registry|npmregistryserver|(?:extra-)?index-url|--(?:extra-)?index-url|-i|--find-links|-f|url)\s*[=:\s]\s*["']?([a-z][a-z0-9+.-]*://[^\s"']+)`)

// sourceCommands returns the commands that make the same source changes
// as a configuration file's text: npm config set registry URL for an npm,
// yarn or bun registry, pip config set global.index-url URL for a pip
// index, wherever it is set.
func sourceCommands(text string) []string {
	var out []string
	section := ""
	for line := range strings.Lines(text) {
		if t := strings.TrimSpace(strings.TrimLeft(line, "+")); strings.HasPrefix(t, "[") {
			section = strings.ToLower(t)
		}
		m := sourceSetting.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		key := strings.ToLower(strings.TrimLeft(strings.Fields(strings.TrimLeft(line, " \t+"))[0], "-"))
		if strings.HasPrefix(key, "url") && !strings.Contains(section, "source") && !strings.Contains(section, "index") {
			continue // a project's home page, not a package index
		}
		switch {
		case strings.Contains(key, "registry"):
			out = append(out, "npm config set registry "+shellQuote(m[2]))
		default:
			out = append(out, "pip config set global.index-url "+shellQuote(m[2]))
		}
	}
	return out
}

// laterSteps returns the pieces of shell text that the text written to a
// file of the kind runs later: a recipe line, a CI step, a script.
func laterSteps(kind, text string) []string {
	if len(text) > maxLaterBytes {
		text = text[:maxLaterBytes]
	}
	var steps []string
	switch kind {
	case laterShell:
		steps = []string{text}
	case laterRecipe:
		steps = recipeLines(text)
	case laterJSON:
		steps = jsonCommands(text)
	case laterCI:
		steps = ciSteps(text)
	case laterRust:
		steps = rustCommands(text)
	case laterPython:
		steps = []string{"python3 -c " + shellQuote(text)}
	case laterNotebook:
		steps = notebookCode(text)
	case laterSources:
		steps = sourceCommands(text)
	case laterRunner:
		steps = runnerCommands(text)
	case laterCompose:
		steps = composeRuns(text)
	case laterSettings:
		steps = shellArgs(text)
	case laterPwsh:
		steps = []string{"pwsh -Command " + shellQuote(text)}
	case laterPth:
		// Python runs a .pth file's import lines when it starts.
		var code strings.Builder
		for line := range strings.Lines(text) {
			if strings.HasPrefix(strings.TrimLeft(line, "+"), "import") {
				code.WriteString(strings.TrimLeft(line, "+"))
			}
		}
		if code.Len() > 0 {
			steps = []string{"python3 -c " + shellQuote(code.String())}
		}
	}
	steps = slices.DeleteFunc(steps, func(s string) bool { return strings.TrimSpace(s) == "" })
	if len(steps) > maxLaterSteps {
		steps = steps[:maxLaterSteps]
	}
	return steps
}

// onDemand reports whether a kind's steps run when someone asks for them
// (a make target, a CI job, an npm script), rather than on their own.
func onDemand(kind string) bool {
	return kind == laterRecipe || kind == laterCI || kind == laterJSON || kind == laterRunner || kind == laterCompose
}

// onDemandActs are the acts a pipeline, a Makefile target or a script
// exists to do when someone runs it: writing a release workflow or a
// deploy target is everyday work. Written into a file that runs on its
// own (a shell rc file, a hook, build.rs), they are judged as typed.
var onDemandActs = map[string]bool{
	effects.Publish: true, effects.RemoteChange: true, effects.StoreDestroy: true, effects.AccessChange: true,
}

// laterScript joins the steps the written text runs later; steps of an
// on-demand kind that publish, deploy or change a remote target are left
// out (onDemandActs).
func (en *enricher) laterScript(kind, text string, lim shell.Limits) string {
	steps := laterSteps(kind, text)
	if onDemand(kind) {
		m, _ := effects.Builtin()
		steps = slices.DeleteFunc(steps, func(step string) bool {
			a := shell.Analyze(step, lim)
			for i := range a.Commands {
				c := &a.Commands[i]
				ws := commandWorkspace{pc: en.pc, dir: en.pc.cwd}
				for _, e := range targetVerbs(m, c, i, false, m.Command(c, i, ws, nil)) {
					if onDemandActs[e.Effect] {
						return true
					}
				}
			}
			return false
		})
	}
	return strings.Join(steps, "\n")
}

// recipeLines keeps the indented lines of a Makefile or justfile, the
// recipes, without make's @, - and + prefixes.
func recipeLines(text string) []string {
	var out []string
	for line := range strings.Lines(text) {
		if line == "" || (line[0] != '\t' && !strings.HasPrefix(line, "    ")) {
			continue
		}
		line = strings.TrimLeft(strings.TrimSpace(line), "@-+")
		out = append(out, strings.ReplaceAll(line, "$$", "$"))
	}
	return out
}

// commandKeys are the JSON fields whose string value is a command line:
// package.json scripts, an editor task's command, a dev container's
// lifecycle commands.
var commandKeys = map[string]bool{
	"command": true, "initializeCommand": true, "onCreateCommand": true, "updateContentCommand": true,
	"postCreateCommand": true, "postStartCommand": true, "postAttachCommand": true,
}

// jsonPair finds "key": "value" pairs in text that may be a fragment (an
// edit's new text) rather than a whole document.
var jsonPair = regexp.MustCompile(`"([A-Za-z0-9:_.-]+)"\s*:\s*"((?:[^"\\]|\\.)*)"`)

func jsonCommands(text string) []string {
	var out []string
	// A whole document says which values are commands; a fragment (an
	// edit's new text) does not, and any value that reads as one counts.
	whole := json.Valid([]byte(text))
	var doc struct {
		Scripts map[string]any `json:"scripts"`
	}
	if whole && json.Unmarshal([]byte(text), &doc) == nil {
		for _, k := range slices.Sorted(maps.Keys(doc.Scripts)) {
			if s, ok := doc.Scripts[k].(string); ok {
				out = append(out, s)
			}
		}
	}
	for _, m := range jsonPair.FindAllStringSubmatch(text, -1) {
		v, err := unquoteJSON(m[2])
		if err != nil {
			continue
		}
		if commandKeys[m[1]] || !whole && looksLikeCommand(v) {
			out = append(out, v)
		}
	}
	return append(out, shellArgs(text)...)
}

// shellArg finds a shell's command-line option followed by its command in
// a JSON array: "args": ["-c", "…"] of a terminal profile, a task or a
// launch configuration.
var shellArg = regexp.MustCompile(`"(?:-c|-lc|-ic|/c|/C|-Command|-command|-EncodedCommand)"\s*,\s*"((?:[^"\\]|\\.)*)"`)

// shellArgs returns the command lines a JSON text hands to a shell's -c.
func shellArgs(text string) []string {
	var out []string
	for _, m := range shellArg.FindAllStringSubmatch(text, -1) {
		if v, err := unquoteJSON(m[1]); err == nil {
			out = append(out, v)
		}
	}
	return out
}

// runnerSetting finds the programs cargo's configuration runs on its
// own: a target's runner, a rustc wrapper, a linker; as a string or an
// array of words.
var runnerSetting = regexp.MustCompile(`(?m)^[\s+]*(?:runner|rustc-wrapper|rustc-workspace-wrapper|linker)\s*=\s*(\[.*\]|"(?:[^"\\]|\\.)*"|'[^']*')`)

// runnerCommands returns the command lines of runnerSetting values.
func runnerCommands(text string) []string {
	var out []string
	for _, m := range runnerSetting.FindAllStringSubmatch(text, -1) {
		v := m[1]
		switch {
		case strings.HasPrefix(v, "["):
			var words []string
			if json.Unmarshal([]byte(strings.ReplaceAll(v, "'", `"`)), &words) == nil {
				for i, w := range words {
					words[i] = shellQuote(w)
				}
				out = append(out, strings.Join(words, " "))
			}
		case strings.HasPrefix(v, "'"):
			out = append(out, strings.Trim(v, "'"))
		default:
			if u, err := unquoteJSON(strings.Trim(v, `"`)); err == nil {
				out = append(out, u)
			}
		}
	}
	return out
}

// The lines of a compose file that decide what a container can reach on
// this machine: its image, settings and lists of mounts and capabilities.
var (
	composeService = regexp.MustCompile(`^  ([\w.-]+):\s*$`)
	composeSetting = regexp.MustCompile(`^\s*(image|privileged|pid|network_mode|ipc|userns_mode|user)\s*:\s*["']?([^"'#\s]+)`)
	composeItem    = regexp.MustCompile(`^\s*-\s*["']?([^"'#]+?)["']?\s*$`)
	composeList    = regexp.MustCompile(`^\s*(volumes|cap_add|devices|security_opt)\s*:\s*$`)
)

// composeRuns returns, for each service of a compose file, the docker run
// that starts the same container: its image with the options that reach
// this machine (privileged, host namespaces, host mounts, capabilities,
// devices). A fragment without a services: line is one service.
func composeRuns(text string) []string {
	type service struct {
		image string
		opts  []string
	}
	var services []*service
	cur := &service{}
	list := ""
	flush := func() {
		if cur.image != "" || len(cur.opts) > 0 {
			services = append(services, cur)
		}
		cur = &service{}
	}
	for line := range strings.Lines(text) {
		line = strings.TrimRight(strings.TrimLeft(line, "+"), "\r\n")
		if composeService.MatchString(line) {
			flush()
			list = ""
			continue
		}
		if m := composeList.FindStringSubmatch(line); m != nil {
			list = m[1]
			continue
		}
		if m := composeSetting.FindStringSubmatch(line); m != nil {
			list = ""
			switch k, v := m[1], m[2]; k {
			case "image":
				cur.image = v
			case "privileged":
				if v == "true" {
					cur.opts = append(cur.opts, "--privileged")
				}
			case "network_mode":
				cur.opts = append(cur.opts, "--network="+v)
			default:
				cur.opts = append(cur.opts, "--"+k+"="+v)
			}
			continue
		}
		if m := composeItem.FindStringSubmatch(line); m != nil && list != "" {
			opt := map[string]string{"volumes": "-v", "cap_add": "--cap-add", "devices": "--device", "security_opt": "--security-opt"}[list]
			cur.opts = append(cur.opts, opt, shellQuote(m[1]))
			continue
		}
		if strings.TrimSpace(line) != "" && !strings.HasPrefix(strings.TrimSpace(line), "#") && !strings.HasPrefix(strings.TrimSpace(line), "-") {
			list = ""
		}
	}
	flush()
	var out []string
	for _, sv := range services {
		if len(sv.opts) == 0 {
			continue // a container that reaches nothing of this machine
		}
		out = append(out, "docker run "+strings.Join(sv.opts, " ")+" "+shellQuote(cmp.Or(sv.image, "image")))
	}
	return out
}

func unquoteJSON(s string) (string, error) {
	var v string
	err := json.Unmarshal([]byte(`"`+s+`"`), &v)
	return v, err
}

// looksLikeCommand tells a command line from a version, a path or a name:
// it has a space or a shell operator.
func looksLikeCommand(v string) bool { return strings.ContainsAny(v, " |;&") }

// ciStep finds a step's command: run: or a script list item.
var (
	ciRun    = regexp.MustCompile(`^(\s*)(-\s+)?(?:run|script|before_script|after_script|command|cmds|cmd)\s*:\s*(.*)$`)
	ciItem   = regexp.MustCompile(`^(\s*)-\s+(.*)$`)
	ciBlock  = regexp.MustCompile(`^[|>][-+0-9]*\s*$`)
	yamlNoop = regexp.MustCompile(`^\s*(#.*)?$`)
)

// ciSteps returns the shell text of a CI file's steps: inline run:
// values, run: | blocks, and script: lists.
func ciSteps(text string) []string {
	var out []string
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		m := ciRun.FindStringSubmatch(strings.TrimLeft(lines[i], "+"))
		if m == nil {
			continue
		}
		// A block belongs to the key: its lines are indented past the
		// key's column, which a list item's dash moves right.
		indent, val := len(m[1])+len(m[2]), strings.TrimSpace(m[3])
		if val != "" && !ciBlock.MatchString(val) {
			out = append(out, ciExpressions(strings.Trim(val, `"'`)))
			continue
		}
		// A block or a list: the lines indented deeper.
		var b strings.Builder
		list := !ciBlock.MatchString(val)
		for i+1 < len(lines) {
			next := strings.TrimLeft(lines[i+1], "+")
			if !yamlNoop.MatchString(next) && len(next)-len(strings.TrimLeft(next, " ")) <= indent {
				break
			}
			i++
			if item := ciItem.FindStringSubmatch(next); item != nil && list {
				// Each item of a script: list is a step of its own.
				out = append(out, ciExpressions(strings.Trim(strings.TrimSpace(item[2]), `"'`)))
				continue
			}
			b.WriteString(strings.TrimSpace(next) + "\n")
		}
		out = append(out, ciExpressions(b.String()))
	}
	return out
}

// ciExpression is a ${{ … }} expression of GitHub Actions, which the
// runner replaces before the shell sees the step.
var ciExpression = regexp.MustCompile(`\$\{\{\s*([^}]*?)\s*\}\}`)

// ciExpressions replaces a step's expressions with the variables the
// shell would see in their place: ${{ secrets.NPM_TOKEN }} is $NPM_TOKEN,
// any other expression a value not known here.
func ciExpressions(step string) string {
	return ciExpression.ReplaceAllStringFunc(step, func(m string) string {
		expr := ciExpression.FindStringSubmatch(m)[1]
		if name, ok := strings.CutPrefix(expr, "secrets."); ok && isIdent(name) {
			return "${" + name + "}"
		}
		return "${GITHUB_EXPRESSION}"
	})
}

func isIdent(s string) bool {
	for i, r := range s {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// rustCommand is std::process::Command::new("prog") and its .arg("…")
// and .args(["…", …]) calls.
var (
	rustCommand = regexp.MustCompile(`Command::new\(\s*"((?:[^"\\]|\\.)*)"\s*\)((?:\s*\.(?:arg|args)\(\s*(?:"(?:[^"\\]|\\.)*"|&?\[[^\]]*\])\s*\))*)`)
	rustString  = regexp.MustCompile(`"((?:[^"\\]|\\.)*)"`)
)

func rustCommands(text string) []string {
	var out []string
	for _, m := range rustCommand.FindAllStringSubmatch(text, -1) {
		argv := []string{rustUnescape(m[1])}
		for _, s := range rustString.FindAllStringSubmatch(m[2], -1) {
			argv = append(argv, rustUnescape(s[1]))
		}
		for i, a := range argv {
			argv[i] = shellQuote(a)
		}
		out = append(out, strings.Join(argv, " "))
	}
	return out
}

func rustUnescape(s string) string {
	if v, err := unquoteJSON(s); err == nil {
		return v
	}
	return s
}

// notebookCode returns a notebook's code cells: lines starting with ! and
// %%bash cells are shell, the rest is Python.
func notebookCode(text string) []string {
	var nb struct {
		Cells []struct {
			Type   string `json:"cell_type"`
			Source any    `json:"source"`
		} `json:"cells"`
	}
	var cells []string
	if json.Unmarshal([]byte(text), &nb) == nil && nb.Cells != nil {
		for _, c := range nb.Cells {
			if c.Type != "code" {
				continue
			}
			switch s := c.Source.(type) {
			case string:
				cells = append(cells, s)
			case []any:
				var b strings.Builder
				for _, l := range s {
					if l, ok := l.(string); ok {
						b.WriteString(l)
					}
				}
				cells = append(cells, b.String())
			}
		}
	} else {
		cells = []string{text} // a cell's source given alone
	}
	var out []string
	var py strings.Builder
	for _, c := range cells {
		if rest, ok := strings.CutPrefix(c, "%%bash"); ok {
			out = append(out, rest)
			continue
		}
		for line := range strings.Lines(c) {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "!"); ok {
				out = append(out, rest)
			} else {
				py.WriteString(line)
			}
		}
		py.WriteByte('\n')
	}
	if strings.TrimSpace(py.String()) != "" {
		out = append(out, "python3 -c "+shellQuote(py.String()))
	}
	return out
}

// shellQuote returns s as one shell word.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellWrites returns the files the commands of a write with a text known
// from the command itself: a here-document or here-string fed to cat or
// tee, echo and printf output redirected or piped into tee.
func (en *enricher) shellWrites(a *shell.Analysis) []writtenFile {
	var out []writtenFile
	for i := range a.Commands {
		c := &a.Commands[i]
		text, ok := commandOutput(a, c)
		if !ok {
			continue
		}
		var targets []string
		for _, r := range c.Redirects {
			if writeOps[r.Op] && r.Target != "" && r.Fd != "2" {
				targets = append(targets, r.Target)
			}
		}
		if c.Name == "tee" {
			for _, arg := range c.Args() {
				if !strings.HasPrefix(arg, "-") {
					targets = append(targets, arg)
				}
			}
		}
		for _, t := range targets {
			d := en.pc.resolve(t)
			if !isAbs(d.abs) || d.dynamic {
				continue
			}
			out = append(out, writtenFile{cmd: i, raw: t, abs: d.abs, text: text})
		}
	}
	return out
}

// commandOutput is the text a command writes out when the command says
// it (shell.Printed), and for tee a here-document or the output of an
// echo or printf piped in.
func commandOutput(a *shell.Analysis, c *shell.Command) (string, bool) {
	if c.Name != "tee" {
		return shell.Printed(c)
	}
	for _, r := range c.Redirects {
		switch r.Op {
		case "<<", "<<-":
			return r.Body, true
		case "<<<":
			return r.Body + "\n", true
		}
	}
	for _, in := range c.Inputs {
		if p := &a.Commands[in]; p.Name == "echo" || p.Name == "printf" {
			return shell.Printed(p)
		}
	}
	return "", false
}

// spliceLater analyses the text each written file runs later and adds its
// commands to a, reached from the writing command via shell.ViaLater.
func (en *enricher) spliceLater(a *shell.Analysis, files []writtenFile, lim shell.Limits) {
	for _, f := range files {
		kind := laterKind(f.abs)
		if kind == "" {
			continue
		}
		script := en.laterScript(kind, f.text, lim)
		if script == "" {
			continue
		}
		sub := shell.Analyze(script, lim)
		a.Splice(sub, f.cmd, shell.ViaLater, path.Dir(f.abs), lim.MaxCommands)
	}
}

// toolWrites returns the files a file tool writes with the text it
// writes: an apply_patch envelope's added lines per file, else the one
// path the tool names with every text it carries.
func toolWrites(paths []string, texts []fieldText) []fileText {
	var out []fileText
	add := func(raw, text string) {
		if raw != "" && text != "" {
			out = append(out, fileText{raw: raw, text: text})
		}
	}
	for _, t := range texts {
		if !strings.Contains(t.text, patchBegin) {
			continue
		}
		cur, body := "", strings.Builder{}
		flush := func() {
			add(cur, body.String())
			cur = ""
			body.Reset()
		}
		for line := range strings.Lines(t.text) {
			l := strings.TrimSpace(line)
			switch {
			case strings.HasPrefix(l, patchAdd), strings.HasPrefix(l, patchUpdate):
				flush()
				cur = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(l, patchAdd), patchUpdate))
			case strings.HasPrefix(line, "+"):
				body.WriteString(line[1:])
			}
		}
		flush()
		return out
	}
	if len(paths) != 1 {
		return nil
	}
	var b strings.Builder
	for _, t := range texts {
		b.WriteString(t.text + "\n")
	}
	add(paths[0], b.String())
	return out
}

// walkContent calls f with each text a file tool writes: its content
// fields, and those of its edits and replacement chunks.
func walkContent(input ast.Object, f func(string)) {
	if input == nil {
		return
	}
	input.Foreach(func(k, v *ast.Term) {
		ks, ok := k.Value.(ast.String)
		if !ok || !isRole(contentRoleKeys, string(ks)) && !isRole(editListKeys, string(ks)) {
			return
		}
		switch x := v.Value.(type) {
		case ast.String:
			if isRole(contentRoleKeys, string(ks)) {
				f(string(x))
			}
		case *ast.Array:
			for i := range x.Len() {
				switch e := x.Elem(i).Value.(type) {
				case ast.String:
					f(string(e))
				case ast.Object:
					walkContent(e, f)
				}
			}
		}
	})
}

// editListKeys are the fields that hold a list of edits.
var editListKeys = map[string]bool{"edits": true, "replacementchunks": true, "chunks": true}

// laterAnalysis analyses what the files a file tool writes run later:
// nil when none of them is an executable context. The commands reached
// from no other are marked shell.ViaLater.
func (en *enricher) laterAnalysis(c *call, lim shell.Limits) (*shell.Analysis, string) {
	var scripts []string
	for _, f := range c.writes {
		d := en.pc.resolve(f.raw)
		if !isAbs(d.abs) || d.dynamic {
			continue
		}
		if kind := laterKind(d.abs); kind != "" {
			if s := en.laterScript(kind, f.text, lim); s != "" {
				scripts = append(scripts, s)
			}
		}
	}
	if len(scripts) == 0 {
		return nil, ""
	}
	script := strings.Join(scripts, "\n")
	a := shell.Analyze(script, lim)
	// The text does not run now: what the shell would make of it is
	// judged when it runs, not as a command typed badly.
	a.ParseError, a.Incomplete = "", ""
	for i := range a.Commands {
		if a.Commands[i].Parent < 0 {
			a.Commands[i].Via = shell.ViaLater
		}
	}
	return a, script
}
