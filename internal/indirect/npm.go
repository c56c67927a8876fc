package indirect

import (
	"encoding/json"
	"path"
	"strings"
)

// manifest is what is read of a package.json.
type manifest struct {
	scripts map[string]string
	deps    map[string]bool
	bad     string // why the file could not be used
}

func parseManifest(b []byte) any {
	var m struct {
		Scripts map[string]any `json:"scripts"`
		D       map[string]any `json:"dependencies"`
		DD      map[string]any `json:"devDependencies"`
		OD      map[string]any `json:"optionalDependencies"`
		PD      map[string]any `json:"peerDependencies"`
		Name    string         `json:"name"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return &manifest{bad: "package.json is not valid JSON"}
	}
	out := &manifest{scripts: map[string]string{}, deps: map[string]bool{}}
	for k, v := range m.Scripts {
		if s, ok := v.(string); ok {
			out.scripts[k] = s
		}
	}
	for _, d := range []map[string]any{m.D, m.DD, m.OD, m.PD} {
		for k := range d {
			out.deps[k] = true
		}
	}
	if m.Name != "" {
		out.deps[m.Name] = true // npx of the package itself
	}
	return out
}

// Built-in subcommands that run the script of the same name, with its
// pre and post hooks.
var lifecycleAliases = map[string]bool{"test": true, "start": true, "stop": true, "restart": true, "t": true, "tst": true}

// Subcommands of yarn, pnpm and bun that are theirs, not a script name:
// "yarn build" runs the build script, "yarn add" does not.
var runnerBuiltins = map[string]bool{
	"add": true, "audit": true, "bin": true, "cache": true, "config": true, "create": true, "dedupe": true,
	"dlx": true, "exec": true, "global": true, "help": true, "import": true, "info": true, "init": true,
	"install": true, "i": true, "link": true, "list": true, "ls": true, "login": true, "logout": true,
	"outdated": true, "owner": true, "pack": true, "patch": true, "publish": true, "remove": true, "rm": true,
	"up": true, "upgrade": true, "update": true, "version": true, "versions": true, "why": true, "workspace": true,
	"workspaces": true, "set": true, "plugin": true, "node": true, "npm": true, "unlink": true, "x": true,
	"store": true, "env": true, "setup": true, "prune": true, "rebuild": true, "root": true, "server": true,
	"ci": true, "fetch": true, "licenses": true, "tag": true, "team": true, "unplug": true,
}

// packageScript resolves npm run X, yarn X, pnpm run X, bun run X and the
// built-in aliases (npm test), with the pre and post hooks npm runs.
func (r *reader) packageScript(runner string, args []string, dynamic []bool) (Result, bool) {
	dir := r.ws.Dir
	var script string
	var rest []string
	explicit := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--prefix" || a == "-C" || a == "--cwd" || a == "--dir":
			if i+1 < len(args) {
				if len(dynamic) > i+2 && dynamic[i+2] {
					return Result{Kind: "npm", Why: "the package directory is not known"}, true
				}
				dir = r.absFrom(dir, args[i+1])
				i++
			}
		case strings.HasPrefix(a, "--prefix=") || strings.HasPrefix(a, "--cwd=") || strings.HasPrefix(a, "--dir="):
			_, v, _ := strings.Cut(a, "=")
			dir = r.absFrom(dir, v)
		case a == "--if-present" || a == "--silent" || a == "-s" || a == "-q" || a == "--quiet":
		case strings.HasPrefix(a, "-"):
			// Another option; those of interest here take no value.
		case script == "" && !explicit && (a == "run" || a == "run-script" || a == "rum" || a == "urn"):
			explicit = true
		case script == "" && !explicit && (a == "install" || a == "i" || a == "ci" || a == "add" && runner != "npm"):
			// The project's own install hooks run on install; with
			// package names it installs those too, and still runs them.
			return r.installHooks(runner, dir)
		case script == "":
			if !explicit {
				if runner == "npm" && !lifecycleAliases[a] {
					return Result{}, false
				}
				if runner != "npm" && (runnerBuiltins[a] || strings.Contains(a, "/")) {
					return Result{}, false
				}
			}
			if len(dynamic) > i+1 && dynamic[i+1] {
				return Result{Kind: "npm", Why: "the script name is not known"}, true
			}
			script = a
			if a == "t" || a == "tst" {
				script = "test"
			}
			rest = args[i+1:]
			i = len(args)
		}
	}
	if script == "" {
		return Result{}, false
	}
	if len(rest) > 0 && rest[0] == "--" {
		rest = rest[1:]
	}
	file, m, why := r.manifest(dir)
	if why != "" {
		return Result{Kind: "npm", Why: why}, true
	}
	name := r.rel(file)
	body, ok := m.scripts[script]
	if !ok {
		return Result{Kind: "npm", Why: "no script " + quote(script) + " in " + name}, true
	}
	res := Result{Kind: "npm", From: name + "#scripts." + script}
	pkgDir := path.Dir(file)
	if pre, ok := m.scripts["pre"+script]; ok {
		res.Steps = append(res.Steps, Step{From: name + "#scripts.pre" + script, Script: pre, Dir: pkgDir, File: file})
	}
	if len(rest) > 0 {
		body += " " + joinArgs(rest)
	}
	res.Steps = append(res.Steps, Step{From: res.From, Script: body, Dir: pkgDir, File: file})
	if post, ok := m.scripts["post"+script]; ok {
		res.Steps = append(res.Steps, Step{From: name + "#scripts.post" + script, Script: post, Dir: pkgDir, File: file})
	}
	return res, true
}

// manifest reads the package.json nearest to dir, or says why it cannot.
func (r *reader) manifest(dir string) (file string, m *manifest, why string) {
	if file, why = r.findUp(dir, "package.json"); why != "" {
		return "", nil, why
	}
	v, why, _ := r.parsed("package.json", file, parseManifest)
	if why != "" {
		return "", nil, why
	}
	if m = v.(*manifest); m.bad != "" {
		return "", nil, m.bad
	}
	return file, m, ""
}

func (r *reader) absFrom(dir, name string) string {
	if path.IsAbs(name) {
		return path.Clean(name)
	}
	return path.Join(dir, name)
}

// Dependency says whether the package named is one the project declares
// in the nearest package.json, or has installed under node_modules/.bin.
// found is false when no package.json could be read.
func Dependency(pkg string, ws Workspace) (declared, found bool) {
	r := &reader{ws: ws}
	name := pkg
	if at := strings.LastIndex(name, "@"); at > 0 {
		name = name[:at] // left-pad@1.3.0, @scope/pkg@2
	}
	_, m, why := r.manifest(ws.Dir)
	if why != "" {
		return false, false
	}
	return m.deps[name], true
}

// installHooks resolves npm install (ci, yarn, pnpm install …): the
// project's preinstall, install, postinstall and prepare scripts run.
func (r *reader) installHooks(runner, dir string) (Result, bool) {
	file, m, why := r.manifest(dir)
	if why != "" {
		return Result{Kind: "npm", Why: why}, true
	}
	name := r.rel(file)
	res := Result{Kind: "npm", From: name + "#scripts (install hooks)"}
	for _, hook := range []string{"preinstall", "install", "postinstall", "prepare"} {
		if body, ok := m.scripts[hook]; ok {
			res.Steps = append(res.Steps, Step{From: name + "#scripts." + hook, Script: body, Dir: path.Dir(file), File: file})
		}
	}
	return res, true
}
