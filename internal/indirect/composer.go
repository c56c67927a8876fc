package indirect

import (
	"encoding/json"
	"path"
	"strings"
)

// scriptsFile is what is read of composer.json or deno.json: named
// commands, each one or several lines.
type scriptsFile struct {
	scripts map[string][]string
	bad     string
}

// parseScriptsUnder reads the object under key whose values are a
// command or a list of commands.
func parseScriptsUnder(key string) func([]byte) any {
	return func(b []byte) any {
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(b, &doc); err != nil {
			return &scriptsFile{bad: "not valid JSON"}
		}
		var raw map[string]any
		_ = json.Unmarshal(doc[key], &raw)
		out := &scriptsFile{scripts: map[string][]string{}}
		for name, v := range raw {
			switch v := v.(type) {
			case string:
				out.scripts[name] = []string{v}
			case []any:
				for _, x := range v {
					if s, ok := x.(string); ok {
						out.scripts[name] = append(out.scripts[name], s)
					}
				}
			case map[string]any: // deno: {"command": "…", "dependencies": […]}
				if s, ok := v["command"].(string); ok {
					out.scripts[name] = []string{s}
				}
			}
		}
		return out
	}
}

// Composer's own commands: composer NAME runs a script only when NAME is
// not one of them.
var composerBuiltins = map[string]bool{
	"install": true, "i": true, "update": true, "u": true, "upgrade": true, "require": true, "r": true, "remove": true,
	"dump-autoload": true, "dumpautoload": true, "show": true, "info": true, "outdated": true, "validate": true,
	"config": true, "global": true, "create-project": true, "init": true, "search": true, "depends": true, "why": true,
	"prohibits": true, "why-not": true, "diagnose": true, "self-update": true, "selfupdate": true, "clear-cache": true,
	"clearcache": true, "archive": true, "audit": true, "licenses": true, "fund": true, "status": true, "suggests": true,
	"check-platform-reqs": true, "exec": true, "list": true, "help": true, "about": true, "browse": true, "home": true,
	"bump": true, "reinstall": true, "run-script": true, "run": true,
}

// composer resolves composer run-script X, composer run X and composer X
// for a script X of composer.json; @other runs another script, @php and
// @composer run those programs.
func (r *reader) composer(args []string, dynamic []bool) (Result, bool) {
	dir := r.ws.Dir
	var script string
	var rest []string
	for i := 0; i < len(args) && script == ""; i++ {
		a := args[i]
		switch {
		case a == "-d" || a == "--working-dir":
			if i+1 < len(args) {
				dir = r.absFrom(dir, args[i+1])
				i++
			}
		case strings.HasPrefix(a, "--working-dir="):
			dir = r.absFrom(dir, strings.TrimPrefix(a, "--working-dir="))
		case strings.HasPrefix(a, "-"):
		case a == "run-script" || a == "run":
			for j := i + 1; j < len(args); j++ {
				if !strings.HasPrefix(args[j], "-") {
					if len(dynamic) > j+1 && dynamic[j+1] {
						return Result{Kind: "composer", Why: "the script name is not known"}, true
					}
					script, rest = args[j], args[j+1:]
					break
				}
			}
			if script == "" {
				return Result{}, false
			}
		case composerBuiltins[a]:
			return Result{}, false
		default:
			script, rest = a, args[i+1:]
		}
	}
	if script == "" {
		return Result{}, false
	}
	file, why := r.find(dir, "composer.json")
	if why != "" {
		return Result{Kind: "composer", Why: why}, true
	}
	return r.namedScripts("composer", file, "scripts", script, rest)
}

// denoTask resolves deno task X from deno.json or deno.jsonc.
func (r *reader) denoTask(args []string, dynamic []bool) (Result, bool) {
	if len(args) < 2 || args[0] != "task" {
		return Result{}, false
	}
	if len(dynamic) > 2 && dynamic[2] {
		return Result{Kind: "deno", Why: "the task name is not known"}, true
	}
	if strings.HasPrefix(args[1], "-") {
		return Result{}, false
	}
	file, why := r.findUp(r.ws.Dir, "deno.json", "deno.jsonc")
	if why != "" {
		return Result{Kind: "deno", Why: why}, true
	}
	return r.namedScripts("deno", file, "tasks", args[1], args[2:])
}

// namedScripts follows the script name of the JSON file's object under
// key, and the other scripts it names with @name.
func (r *reader) namedScripts(kind, file, key, script string, rest []string) (Result, bool) {
	v, why, _ := r.parsed(kind+":"+key, file, parseScriptsUnder(key))
	if why != "" {
		return Result{Kind: kind, Why: why}, true
	}
	sf := v.(*scriptsFile)
	name := r.rel(file)
	if sf.bad != "" {
		return Result{Kind: kind, Why: name + " is " + sf.bad}, true
	}
	if _, ok := sf.scripts[script]; !ok {
		return Result{Kind: kind, Why: "no script " + quote(script) + " in " + name}, true
	}
	if len(rest) > 0 && rest[0] == "--" {
		rest = rest[1:]
	}
	res := Result{Kind: kind, From: name + "#" + key + "." + script}
	why = walkGraph([]string{script}, "scripts", func(s string, _ int, walk func(string) string) string {
		var lines []string
		flush := func() {
			if len(lines) > 0 {
				res.Steps = append(res.Steps, Step{From: name + "#" + key + "." + s, Script: strings.Join(lines, "\n"), Dir: path.Dir(file), File: file})
				lines = nil
			}
		}
		for _, l := range sf.scripts[s] {
			l = strings.TrimSpace(l)
			switch {
			case strings.HasPrefix(l, "@php "):
				lines = append(lines, "php "+l[5:])
			case strings.HasPrefix(l, "@composer "):
				lines = append(lines, "composer "+l[10:])
			case strings.HasPrefix(l, "@putenv "):
			case strings.HasPrefix(l, "@"):
				flush()
				other, _, _ := strings.Cut(l[1:], " ")
				if why := walk(other); why != "" {
					return why
				}
			default:
				lines = append(lines, l)
			}
		}
		flush()
		return ""
	})
	if why != "" {
		return Result{Kind: kind, Why: why}, true
	}
	if len(rest) > 0 && len(res.Steps) > 0 {
		last := &res.Steps[len(res.Steps)-1]
		last.Script += " " + joinArgs(rest)
	}
	return res, true
}
