package indirect

import "strings"

// scriptText is a script file as read: its shell text, shebang applied.
type scriptText struct {
	raw, text string
}

func parseScript(b []byte) any {
	s := string(b)
	first, body, _ := strings.Cut(s, "\n")
	if strings.HasPrefix(first, "#!") {
		return &scriptText{raw: s, text: interpreterScript(first, body)}
	}
	return &scriptText{raw: s, text: s}
}

// scriptFile resolves ./scripts/release.sh and other paths run as
// programs. A program name with a slash that is not in the workspace
// (/usr/bin/env) is not an indirection.
func (r *reader) scriptFile(name string, args []string) (Result, bool) {
	abs := r.abs(name)
	if !r.underRoot(abs) {
		return Result{}, false
	}
	return r.readScript(abs, args, false)
}

// shellFile resolves bash script.sh (and sh, zsh …) when the shell runs
// a file rather than -c text or standard input.
func (r *reader) shellFile(shell string, args []string, dynamic []bool) (Result, bool) {
	noexec := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-c" || a == "-s" || strings.HasPrefix(a, "-") && strings.ContainsAny(strings.TrimLeft(a, "-"), "cs") && !strings.HasPrefix(a, "--"):
			return Result{}, false // the script is text, or read from stdin
		case a == "-o" || a == "-O" || a == "--rcfile" || a == "--init-file":
			if a == "-o" && i+1 < len(args) && args[i+1] == "noexec" {
				noexec = true
			}
			i++
		case a == "--":
			if i+1 < len(args) {
				return r.shellOperand(args[i+1], args[i+2:], dynamic, i+2, noexec)
			}
			return Result{}, false
		case strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--"):
			noexec = noexec || strings.Contains(a[1:], "n")
		case strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+"):
		default:
			return r.shellOperand(a, args[i+1:], dynamic, i+1, noexec)
		}
	}
	return Result{}, false
}

func (r *reader) shellOperand(file string, args []string, dynamic []bool, at int, noexec bool) (Result, bool) {
	if noexec {
		// bash -n checks the script's syntax and runs none of it.
		return Result{Kind: "script", From: r.rel(r.abs(file)) + " (syntax check only)"}, true
	}
	if len(dynamic) > at && dynamic[at] {
		return Result{Kind: "script", Why: "the script's name is not known"}, true
	}
	return r.readScript(r.abs(file), args, true)
}

func (r *reader) readScript(abs string, args []string, viaShell bool) (Result, bool) {
	v, why, notFound := r.parsed("script", abs, parseScript)
	name := r.rel(abs)
	if notFound && !viaShell {
		return Result{Kind: "script", Why: "no " + name}, true
	}
	if why != "" {
		return Result{Kind: "script", Why: why}, true
	}
	text := v.(*scriptText).text
	if viaShell {
		// bash file runs the file as shell text whatever its shebang.
		text = v.(*scriptText).raw
	}
	if len(args) > 0 {
		// The positional parameters are known: set them first.
		text = "set -- " + joinArgs(args) + "\n" + text
	}
	return Result{Kind: "script", From: name, Steps: []Step{{From: name, Script: text, Dir: r.ws.Dir, File: abs}}}, true
}

// codeFile resolves python3 tool.py, node scripts/x.js and the like: the
// file is the interpreter's code, analysed as its inline code would be.
// Options that take code or a module (-c, -e, -m, -p, -r) are not a file.
func (r *reader) codeFile(interp string, args []string, dynamic []bool) (Result, bool) {
	for i, a := range args {
		switch {
		case a == "-c" || a == "-e" || a == "-m" || a == "-p" || a == "-r" || a == "-" || a == "--eval" || a == "--print":
			return Result{}, false
		case a == "-W" || a == "-X" || a == "-I" || a == "--require" || a == "-d":
			return Result{}, false // options with values: not worth the guess
		case strings.HasPrefix(a, "-"):
			continue
		}
		if len(dynamic) > i+1 && dynamic[i+1] {
			return Result{Kind: "script", Why: "the script's name is not known"}, true
		}
		abs := r.abs(a)
		if !r.underRoot(abs) {
			return Result{}, false
		}
		v, why, notFound := r.parsed("script", abs, parseScript)
		if notFound {
			return Result{}, false // manage.py may be a module name; nothing to read
		}
		if why != "" {
			return Result{Kind: "script", Why: why}, true
		}
		name := r.rel(abs)
		code := v.(*scriptText).raw
		if rest := args[i+1:]; len(rest) > 0 && jsInterpreter(interp) && !strings.HasPrefix(rest[0], "-") {
			// node Makefile.js lint runs the lint member of the file's
			// table of targets, not the release one beside it.
			if only, ok := selectTarget(code, rest[0]); ok {
				code = only
				name += " (" + rest[0] + ")"
			}
		}
		text := codeAs(interp, code)
		if rest := args[i+1:]; len(rest) > 0 {
			text = "set -- " + joinArgs(rest) + "\n" + text
		}
		return Result{Kind: "script", From: name, Steps: []Step{{From: name, Script: text, Dir: r.ws.Dir, File: abs}}}, true
	}
	return Result{}, false
}

func jsInterpreter(interp string) bool {
	return interp == "node" || interp == "tsx" || interp == "ts-node"
}

// codeAs is shell text that hands code to the interpreter inline.
func codeAs(interp, code string) string {
	switch {
	case strings.HasPrefix(interp, "python"):
		return interp + " -c " + quote(code)
	case interp == "php":
		return "php -r " + quote(strings.TrimPrefix(strings.TrimSpace(code), "<?php"))
	case interp == "tsx" || interp == "ts-node":
		return "node -e " + quote(code)
	}
	return interp + " -e " + quote(code)
}
