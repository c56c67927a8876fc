// Package shell reads shell commands the way a shell would run them, so that
// policies can match the programs a command runs rather than its text.
//
// Analyze parses a script with mvdan.cc/sh and lists every simple command it
// can run: through pipelines, lists, subshells, control flow, functions,
// command and process substitution, and wrappers such as sudo, env, timeout
// or xargs, which are unwrapped to the command they run. Scripts handed to a
// nested shell (bash -c '…', su -c, eval, here-documents fed to a shell,
// text echoed into a shell, find -exec, trap, alias) are parsed in turn, to
// a bounded depth, and so are commands handed to somewhere else (ssh and
// other remote shells, docker and kubectl exec, nohup, at), each marked
// with where it runs, and PowerShell code given to pwsh, read into the
// POSIX commands it amounts to by package powershell. Quotes and escapes are resolved ($'\x72m' is rm), brace
// expansion is applied, and variables assigned a literal earlier in the
// script are substituted.
//
// The analysis errs on the side of finding too much: a command that might
// run is listed. It never runs anything and never touches the file system.
package shell

import (
	"fmt"
	"strings"
)

// Limits bound the work one analysis may do. A script that exceeds them is
// reported as Incomplete rather than partly analysed in silence.
type Limits struct {
	// MaxBytes bounds the script, and a quarter of the total bytes of the
	// nested scripts parsed on its behalf.
	MaxBytes int
	// MaxDepth bounds nesting: each nested shell, eval, substitution or
	// find -exec adds one level.
	MaxDepth int
	// MaxCommands bounds the number of commands listed.
	MaxCommands int
	// MaxFields bounds the words a single brace expansion may produce.
	MaxFields int
}

// DefaultLimits suit commands sent by coding agents, which can carry whole
// files in here-documents.
var DefaultLimits = Limits{MaxBytes: 128 << 10, MaxDepth: 8, MaxCommands: 1024, MaxFields: 256}

// Analysis is what a script runs.
type Analysis struct {
	// Commands lists every simple command, in the order they appear. A
	// command found inside another (a substitution in its arguments, the
	// script of its -c flag) comes after it.
	Commands []Command
	// ParseError is set when the script, or a script nested in it, is not
	// valid shell syntax. Commands then holds what could be read before
	// the error.
	ParseError string
	// Incomplete is set when a limit stopped the analysis; it says which.
	Incomplete string
}

// Command is one simple command after wrappers are removed.
type Command struct {
	// Name is the program, normalised: the last path element of argv[0],
	// lower-cased, without a .exe suffix. "" for a statement made only of
	// redirections.
	Name string
	// Argv is the command line after quote removal, starting with the
	// program as written (/bin/rm). Unresolved expansions stay as written:
	// $HOME, ~, $(date).
	Argv []string
	// Wrappers lists, outermost first, the wrapper programs this command
	// was found inside on the same command line: sudo, env, xargs, timeout.
	Wrappers []string
	// Env holds NAME=value assignments that apply to the command: prefix
	// assignments and those given to env.
	Env []Assign
	// Redirects lists the command's redirections with a file target, and
	// its here-documents and here-strings.
	Redirects []Redirect
	// Depth is 0 for the script itself and grows by one for each nested
	// script or substitution around the command.
	Depth int
	// Via says how a nested command is reached: ViaCommandSubst,
	// ViaProcessSubst, ViaShell, ViaEval, ViaFindExec, ViaTrap, ViaAlias;
	// "" at depth 0.
	Via string
	// Parent is the index of the command that runs this one, or whose
	// arguments hold the substitution it is in; -1 when none.
	Parent int
	// Inputs are the indices of the commands whose output can reach this
	// command: through a pipe, a command or process substitution in its
	// words, or a variable assigned from one. It is transitively closed.
	Inputs []int
	// Background is set for a command run with &.
	Background bool
	// Dynamic marks, for each element of Argv, whether it holds an
	// expansion whose value is unknown.
	Dynamic []bool
	// DynamicCode is set when the command runs code whose text cannot be
	// known statically: eval or sh -c of an unknown expansion, a program
	// name that is one ($x, $(curl …)), xargs sh -c '{}' fed unknown
	// input. Rules can be strict about it.
	DynamicCode bool
	// Unbounded is set when the command starts copies of itself without
	// bound: a function calling itself in the background or a pipeline
	// (:(){ :|:& };:), or a background command in an endless loop.
	Unbounded bool
	// Where lists, outermost first, the places the command runs in other
	// than here and now: WhereRemote, WhereContainer, WhereNode,
	// WhereDetached, WhereLater, WherePersistent. Empty for a command this
	// shell runs.
	Where []string
	// Repeats is set for a command inside a loop that never ends
	// (while :; do …; done), which runs it again and again.
	Repeats bool
	// Dir is the directory an earlier cd or pushd in the script moved to,
	// as written (relative paths are relative to the session's directory);
	// "" when the script has not changed directory.
	Dir string
}

// Args returns the arguments after the program name.
func (c *Command) Args() []string {
	if len(c.Argv) == 0 {
		return nil
	}
	return c.Argv[1:]
}

// Assign is an environment assignment.
type Assign struct {
	Name, Value string
}

// Redirect is a redirection with a file target, a here-document or a
// here-string.
type Redirect struct {
	// Op is the operator: >, >>, <, <>, &>, &>>, >|, <<, <<-, <<<.
	Op string
	// Fd is the file descriptor written before the operator ("2" in 2>x),
	// or "".
	Fd string
	// Target is the file name after quote removal; "" for here-documents.
	Target string
	// Body is the text of a here-document or here-string.
	Body string
}

// Writes reports whether the redirection writes to its target.
func (r Redirect) Writes() bool {
	switch r.Op {
	case ">", ">>", ">|", "&>", "&>>", "<>":
		return true
	}
	return false
}

// Ways a nested command is reached.
const (
	ViaCommandSubst = "command-substitution"
	ViaProcessSubst = "process-substitution"
	ViaShell        = "shell"
	ViaEval         = "eval"
	ViaFindExec     = "find-exec"
	ViaTrap         = "trap"
	ViaAlias        = "alias"
	// ViaPowerShell marks the commands PowerShell code amounts to
	// (pwsh -c 'Remove-Item …' reads as rm …).
	ViaPowerShell = "powershell"
	// ViaCmd marks the commands a cmd.exe line amounts to (cmd /c
	// "rd /s /q x" reads as rm -r -f x).
	ViaCmd = "cmd"
)

// Places a command runs in, other than this shell, now.
const (
	// WhereRemote is another host: ssh, mosh, gcloud compute ssh, SSM.
	WhereRemote = "remote"
	// WhereContainer is a container or a pod: docker exec, kubectl exec.
	WhereContainer = "container"
	// WhereNode is a cluster node's host, reached through a debugging
	// pod that mounts its root file system (kubectl debug node/…).
	WhereNode = "node"
	// WhereDetached outlives the call that starts it: nohup, setsid, a
	// transient systemd unit, a detached container.
	WhereDetached = "detached"
	// WhereLater runs at a later time: at, batch, a timer.
	WhereLater = "later"
	// WherePersistent comes back after a reboot or a crash: a container
	// with a restart policy.
	WherePersistent = "persistent"
)

// Analyze lists the commands a script runs.
func Analyze(script string, lim Limits) *Analysis {
	a := newAnalyzer(lim)
	defer a.release()
	if len(script) > lim.MaxBytes {
		a.out.Incomplete = fmt.Sprintf("the command is longer than %d bytes", lim.MaxBytes)
		return &a.out
	}
	a.script(script, scope{parent: -1}, false)
	a.uncalledFunctions()
	return a.finish()
}

// AnalyzeArgv lists the commands run by an argv array, as sent by harnesses
// that execute a program directly (["bash", "-lc", "…"]). No shell parses
// the array, so its elements are taken as they are.
func AnalyzeArgv(argv []string, lim Limits) *Analysis {
	a := newAnalyzer(lim)
	defer a.release()
	n := 0
	for _, s := range argv {
		n += len(s) + 1
	}
	if n > lim.MaxBytes {
		a.out.Incomplete = fmt.Sprintf("the command is longer than %d bytes", lim.MaxBytes)
		return &a.out
	}
	if len(argv) > 0 {
		idx := a.reserve(scope{parent: -1})
		if idx >= 0 {
			words := make([]field, len(argv))
			for i, s := range argv {
				words[i] = field{text: s}
			}
			a.exec(idx, words, nil, nil, scope{parent: -1}, false)
		}
	}
	a.uncalledFunctions()
	return a.finish()
}

// Normalize returns the program name a command word runs: the last path
// element, lower-cased (case-insensitive file systems run RM as rm), without
// a .exe suffix.
func Normalize(word string) string {
	if i := strings.LastIndexAny(word, `/\`); i >= 0 {
		word = word[i+1:]
	}
	word = strings.ToLower(word)
	return strings.TrimSuffix(word, ".exe")
}
