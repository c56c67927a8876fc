// Package indirect finds what a command that runs something else really
// runs: npm run release, make deploy, just publish, rake push, task dist,
// composer deploy, deno task x, ./scripts/release.sh. It reads the
// package.json, Makefile, justfile, Rakefile, Taskfile, composer.json,
// deno.json or script of the workspace and returns the shell text
// each step runs, so that the caller can analyse it as if it had been typed.
//
// Reads are bounded: only regular files inside the workspace roots (a
// symlink that leads out of them is refused), at most MaxFileBytes each,
// with a deadline. Parsed files are cached by path, size and modification
// time, so a command repeated in a session does not read its file again.
// Nothing read is ever executed.
package indirect

import (
	"path"
	"strings"
)

// Step is one piece of shell text a command runs.
type Step struct {
	// From names where the text came from: "package.json#scripts.release",
	// "Makefile#deploy", "scripts/release.sh".
	From string
	// Script is the shell text.
	Script string
	// Dir is the absolute directory the text runs in.
	Dir string
	// File is the absolute path of the file the text was read from, so
	// that a caller can tell the project's committed definitions from
	// one written during the session.
	File string
}

// Result is what a command resolves to.
type Result struct {
	// Kind is the runner: "npm", "make", "just", "rake", "task",
	// "composer", "deno", "script".
	Kind string
	// From names the definition followed (the first step's From, without
	// hooks): "package.json#scripts.release".
	From string
	// Steps are the texts run, in order: hooks, prerequisites, recipe.
	Steps []Step
	// Why is set when the command could not be resolved, and says why.
	Why string
}

// Resolved reports whether the command was followed.
func (r Result) Resolved() bool { return r.Why == "" }

// Workspace is where reads are allowed and where relative names start.
type Workspace struct {
	// Dir is the absolute directory the command runs in.
	Dir string
	// Roots are the absolute workspace roots; nothing outside is read.
	Roots []string
	// Written holds the files the same command writes before it runs
	// them (printf '…' > Makefile && make), by absolute path: their text
	// is what runs, whatever the disk holds now.
	Written map[string]string
}

// Resolve returns what argv runs, and false when argv is not a command
// that runs a definition from a file of the workspace. dynamic marks the
// elements of argv whose value is not known.
func Resolve(argv []string, dynamic []bool, ws Workspace) (Result, bool) {
	if len(argv) == 0 || !path.IsAbs(ws.Dir) {
		return Result{}, false
	}
	for i := range dynamic {
		if dynamic[i] && i == 0 {
			return Result{}, false
		}
	}
	name := program(argv[0])
	r := &reader{ws: ws}
	switch name {
	case "npm", "pnpm", "yarn", "bun":
		return r.packageScript(name, argv[1:], dynamic)
	case "make", "gmake":
		return r.make(argv[1:], dynamic)
	case "just":
		return r.just(argv[1:], dynamic)
	case "rake":
		return r.rake(argv[1:], dynamic)
	case "task", "go-task":
		return r.task(argv[1:], dynamic)
	case "composer":
		return r.composer(argv[1:], dynamic)
	case "deno":
		return r.denoTask(argv[1:], dynamic)
	case "cargo":
		if len(argv) > 1 && argv[1] == "xtask" {
			return Result{Kind: "cargo", Why: "cargo xtask runs Rust code of the workspace, which is not analysed"}, true
		}
		return Result{}, false
	case "sh", "bash", "zsh", "dash", "ksh":
		return r.shellFile(name, argv[1:], dynamic)
	case "python", "python2", "python3", "node", "ruby", "perl", "php", "tsx", "ts-node":
		return r.codeFile(name, argv[1:], dynamic)
	}
	if strings.HasPrefix(name, "python3.") {
		return r.codeFile(name, argv[1:], dynamic)
	}
	if strings.Contains(argv[0], "/") {
		return r.scriptFile(argv[0], argv[1:])
	}
	return Result{}, false
}

// program is the normalised name of a command word.
func program(word string) string {
	if i := strings.LastIndexAny(word, `/\`); i >= 0 {
		word = word[i+1:]
	}
	return strings.TrimSuffix(strings.ToLower(word), ".exe")
}

func anyDynamic(dynamic []bool, from int) bool {
	for i := from; i < len(dynamic); i++ {
		if dynamic[i] {
			return true
		}
	}
	return false
}

// quote returns s as one shell word.
func quote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r == '/' || r == '=' || r == ':' || r == ',' || r == '@' ||
			r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func joinArgs(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = quote(a)
	}
	return strings.Join(q, " ")
}
