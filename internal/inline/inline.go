// Package inline reads programs given inline to interpreters — python -c,
// perl -e, node -e, ruby -e, php -r, awk programs, here-documents fed to
// python3 - — and lists what they do in the terms of the shell analysis:
// the command lines they hand to system, exec or subprocess, and the
// deletes, file reads and writes, and downloads they make, each as a
// command (shutil.rmtree(p) is rm -rf p, open(p).read() is cat p), so
// that the rules written for shell commands apply to them unchanged.
//
// The analysis is lexical and bounded: string literals, calls, known
// variables, concatenation of literals and path joins, per language. It
// does not parse the languages fully and never runs anything. Code it
// cannot follow (eval of computed text, decoded payloads) is reported as
// dynamic, so that a rule can be strict about it.
package inline

import (
	"slices"
	"strings"

	"github.com/ahp-opa/ahp-opa/internal/shell"
)

// ViaCode is the shell.Command.Via of a command that inline code runs.
const ViaCode = "code"

// Program is an inline program found in an interpreter's command line.
type Program struct {
	// Command is the index of the interpreter's command.
	Command int
	// Language is python, javascript, perl, ruby, php, lua, r, awk or
	// applescript.
	Language string
	// Source says where the code was: the option (-c, -e, -r, eval), the
	// awk program operand ("program"), or "stdin".
	Source string
	// CodeArgs are the indices in the command's Args() of the arguments
	// that hold the code: they name no file.
	CodeArgs []int
	// Calls lists, for each command the program runs, its index and the
	// call it comes from (os.system, shutil.rmtree).
	Calls []Call
	// Dynamic is set when the program runs code or commands computed at
	// run time: eval of a non-literal, a command line built from unknown
	// values.
	Dynamic bool
	// Decodes is set when the program decodes base64 or hex.
	Decodes bool
	// Network is set when the program fetches a URL or opens a socket.
	Network bool
	// ReverseShell is set when the program connects a socket to a shell
	// or to its own standard streams.
	ReverseShell bool
	// ExecutesStdin is set when the program runs code it reads from its
	// standard input: exec(sys.stdin.read()).
	ExecutesStdin bool
	// EnvDump is set when the program prints, serialises or sends the
	// whole environment (print(os.environ), console.log(process.env),
	// puts ENV.to_h, print_r(getenv())): every secret variable with it.
	EnvDump bool
	// PageSecrets is set when a web page's script reads the page's
	// cookies or storage and sends something over the network: the
	// page's login leaves for another host.
	PageSecrets bool
	// DynamicLookup is set when the program reaches a module or function
	// by a name computed at run time (getattr(m, name), __import__(x),
	// require(x)), which no reading of the code can follow. Lookups by
	// literal names ('sys'+'tem') are folded into plain calls instead.
	DynamicLookup bool
}

// Call is a command an inline program runs.
type Call struct {
	Command int
	Name    string
}

// Expand finds the inline programs of the commands in a and appends the
// commands they run to a.Commands, as nested commands (Via ViaCode,
// Parent the interpreter). Commands it appends are read in turn, so code
// that runs another interpreter's code is followed, to lim.MaxDepth.
func Expand(a *shell.Analysis, lim shell.Limits) []Program {
	if lim.MaxCommands <= 0 {
		lim = shell.DefaultLimits
	}
	var out []Program
	budget := 4 * lim.MaxBytes
	for i := 0; i < len(a.Commands); i++ {
		c := &a.Commands[i]
		if c.Depth >= lim.MaxDepth {
			continue
		}
		l, how, codes, at := programOf(a, i)
		if l == nil || len(codes) == 0 {
			continue
		}
		code := strings.Join(codes, "\n")
		budget -= len(code)
		if budget < 0 {
			if a.Incomplete == "" {
				a.Incomplete = "inline programs are too long to analyse"
			}
			break
		}
		f := &facts{}
		code, lookup := unfold(l.name, code)
		scan(l, code, f, 0)
		if f.truncated && a.Incomplete == "" {
			a.Incomplete = "an inline program is too long or too nested to analyse"
		}
		p := Program{Command: i, Language: l.name, Source: how, CodeArgs: at}
		p.Calls = emit(a, i, f.acts, lim)
		p.Dynamic = f.dynamic
		p.Decodes = f.decodes
		p.ExecutesStdin = f.executesStdin
		p.DynamicLookup = lookup
		p.Dynamic = p.Dynamic || lookup
		fetches := false
		for _, x := range f.acts {
			if x.kind == actFetch {
				fetches = true
			}
		}
		p.Network = fetches || f.socket
		p.EnvDump = f.wholeEnv && (f.shows || p.Network)
		p.PageSecrets = f.pageStore && p.Network
		p.ReverseShell = f.socket && (f.dup || f.pipes || spawnsShell(a, p.Calls))
		if fetches && f.evals {
			// Downloaded text run as code: the download feeds the
			// interpreter, as curl … | python3 would.
			for _, call := range p.Calls {
				if a.Commands[call.Command].Name == "curl" && a.Commands[call.Command].Parent == i {
					a.Commands[i].Inputs = append(a.Commands[i].Inputs, call.Command)
				}
			}
			slices.Sort(a.Commands[i].Inputs)
			a.Commands[i].Inputs = slices.Compact(a.Commands[i].Inputs)
		}
		feedShells(a, p.Calls)
		out = append(out, p)
	}
	return out
}

// feedShells links, within one program, the downloads to the shells that
// read their script from standard input: open(P, "|-", "sh"); print P
// `curl …` runs what curl prints, as curl … | sh would.
func feedShells(a *shell.Analysis, calls []Call) {
	var downloads []int
	for _, c := range calls {
		if n := a.Commands[c.Command].Name; n == "curl" || n == "wget" {
			downloads = append(downloads, c.Command)
		}
	}
	if len(downloads) == 0 {
		return
	}
	for _, c := range calls {
		cmd := &a.Commands[c.Command]
		if !shell.IsShell(cmd.Name) || len(cmd.Argv) > 1 && !slices.Contains(cmd.Argv[1:], "-s") && !slices.Contains(cmd.Argv[1:], "-") {
			continue
		}
		for _, d := range downloads {
			if d != c.Command && !slices.Contains(cmd.Inputs, d) {
				cmd.Inputs = append(cmd.Inputs, d)
			}
		}
		slices.Sort(cmd.Inputs)
	}
}

// spawnsShell reports whether one of the commands runs an interactive or
// stdin-reading shell.
func spawnsShell(a *shell.Analysis, calls []Call) bool {
	for _, c := range calls {
		cmd := &a.Commands[c.Command]
		if shell.IsShell(cmd.Name) {
			return true
		}
	}
	return false
}

// emit turns acts into commands appended to a, and returns them.
func emit(a *shell.Analysis, parent int, acts []act, lim shell.Limits) []Call {
	var calls []Call
	for _, x := range acts {
		if len(a.Commands) >= lim.MaxCommands {
			if a.Incomplete == "" {
				a.Incomplete = "inline programs run too many commands"
			}
			break
		}
		var sub *shell.Analysis
		switch x.kind {
		case actShell:
			sub = shell.Analyze(x.text, lim)
		case actArgv:
			sub = shell.AnalyzeArgv(x.argv, lim)
		case actRemoveAll:
			sub = synthetic("rm", "-rf", x.path)
		case actRemove:
			sub = synthetic("rm", x.path)
		case actRead:
			sub = synthetic("cat", x.path)
		case actCopy:
			sub = synthetic("cp", x.path, x.dest)
		case actMove:
			sub = synthetic("mv", x.path, x.dest)
		case actFetch:
			if x.dest != "" {
				sub = synthetic("curl", "-o", x.dest, x.path)
			} else {
				sub = synthetic("curl", x.path)
			}
		case actWrite, actAppend:
			op := ">"
			if x.kind == actAppend {
				op = ">>"
			}
			sub = &shell.Analysis{Commands: []shell.Command{{
				Parent:    -1,
				Redirects: []shell.Redirect{{Op: op, Target: x.path}},
			}}}
		}
		if sub == nil {
			continue
		}
		for _, idx := range appendAnalysis(a, sub, parent, lim) {
			calls = append(calls, Call{Command: idx, Name: x.call})
		}
	}
	return calls
}

// synthetic is the command a call stands for: shutil.rmtree(p) is
// rm -rf p. Words holding unknown values are marked dynamic.
func synthetic(argv ...string) *shell.Analysis {
	dyn := make([]bool, len(argv))
	for i, s := range argv {
		dyn[i] = strings.Contains(s, unknownValue)
	}
	return &shell.Analysis{Commands: []shell.Command{{
		Name: argv[0], Argv: argv, Dynamic: dyn, Parent: -1,
	}}}
}

// appendAnalysis appends the commands of sub to a under command parent and
// returns the indices of those appended.
func appendAnalysis(a *shell.Analysis, sub *shell.Analysis, parent int, lim shell.Limits) []int {
	base := len(a.Commands)
	p := &a.Commands[parent]
	depth, dir := p.Depth+1, p.Dir
	var added []int
	for _, c := range sub.Commands {
		if len(a.Commands) >= lim.MaxCommands {
			if a.Incomplete == "" {
				a.Incomplete = "inline programs run too many commands"
			}
			break
		}
		c.Depth += depth
		if c.Via == "" {
			c.Via = ViaCode
		}
		if c.Parent < 0 {
			c.Parent = parent
		} else {
			c.Parent += base
		}
		if len(c.Inputs) > 0 {
			in := make([]int, 0, len(c.Inputs))
			for _, j := range c.Inputs {
				if base+j < base+len(sub.Commands) {
					in = append(in, base+j)
				}
			}
			c.Inputs = in
		}
		if c.Dir == "" {
			c.Dir = dir
		}
		for i, d := range c.Dynamic {
			if !d && strings.Contains(c.Argv[i], unknownValue) {
				c.Dynamic[i] = true
			}
		}
		a.Commands = append(a.Commands, c)
		added = append(added, len(a.Commands)-1)
	}
	// Inputs may name commands that were not appended.
	for _, i := range added {
		c := &a.Commands[i]
		c.Inputs = slices.DeleteFunc(c.Inputs, func(j int) bool { return j >= len(a.Commands) || j == i })
		if c.Parent >= len(a.Commands) {
			c.Parent = parent
		}
	}
	if sub.Incomplete != "" && a.Incomplete == "" {
		a.Incomplete = sub.Incomplete
	}
	return added
}
