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
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-c" || a == "-s" || strings.HasPrefix(a, "-") && strings.ContainsAny(strings.TrimLeft(a, "-"), "cs") && !strings.HasPrefix(a, "--"):
			return Result{}, false // the script is text, or read from stdin
		case a == "-o" || a == "-O" || a == "--rcfile" || a == "--init-file":
			i++
		case a == "--":
			if i+1 < len(args) {
				return r.shellOperand(args[i+1], args[i+2:], dynamic, i+2)
			}
			return Result{}, false
		case strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+"):
		default:
			return r.shellOperand(a, args[i+1:], dynamic, i+1)
		}
	}
	return Result{}, false
}

func (r *reader) shellOperand(file string, args []string, dynamic []bool, at int) (Result, bool) {
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
	return Result{Kind: "script", From: name, Steps: []Step{{From: name, Script: text, Dir: r.ws.Dir}}}, true
}
