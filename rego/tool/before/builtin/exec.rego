package ahp.tool.before.builtin

import data.ahp.lib.args
import data.ahp.lib.shell
import input.ahp.shell.programs

# METADATA
# title: Downloaded code run by a shell
# description: |
#   Denies running what a download prints: curl or wget piped into a shell
#   or an interpreter that reads code from stdin (curl … | sh, wget -qO- … |
#   sudo bash, curl … | tee x | python3, curl … | php -- --quiet), a
#   download in a process or command substitution a shell runs
#   (bash <(curl …), sh -c "$(curl …)"),
#   and eval or source of downloaded text, also through a variable
#   (X=$(curl …); eval "$X"). Piping a download into a program that reads it
#   as data (jq, python3 -c '…json…', grep) stays allowed.
# custom:
#   severity: high
#   code: dev.ahp-opa.exec.curl-pipe-shell
violation contains {
	"reason": concat(" ", [
		"Blocked running downloaded code straight from the network; it would run unreviewed.",
		"Download it to a file first (e.g. `curl -fsSLo install.sh URL`), inspect it, then ask the user before running it.",
	]),
	"code": "dev.ahp-opa.exec.curl-pipe-shell",
	"trigger": concat(" ", [input.ahp.shell.commands[flow[1]].name, "into", input.ahp.shell.commands[flow[0]].name]),
} if {
	input.ahp.shell.classes.downloader
	some flow in shell.code_flows
	input.ahp.shell.commands[flow[1]].name in shell.downloaders
	not _project_installer(flow)
}

# A project's committed script that installs a tool with its installer
# from a code forge over HTTPS (a CI lint target's golangci-lint, a
# cargo-binstall bootstrap) made that choice when it was committed; the
# same line typed by the agent, or a download from anywhere else, is
# judged.
_project_installer(flow) if {
	not shell.agent_text(input.ahp.shell.commands[flow[0]])
	dl := input.ahp.shell.commands[flow[1]]
	count(dl.urls) > 0
	every u in dl.urls {
		u.scheme == "https"
		u.host in _forge_hosts
	}
}

_forge_hosts := {
	"github.com", "raw.githubusercontent.com", "objects.githubusercontent.com", "gist.githubusercontent.com",
	"gitlab.com", "bitbucket.org", "codeberg.org",
}

# METADATA
# title: Decoded or obfuscated code run by a shell
# description: |
#   Denies running text that was decoded or reversed just before, a common
#   way to hide a command: base64 -d / base32 -d / xxd -r / openssl -d /
#   rev / printf of \x escapes piped into a shell or eval'd, and interpreter
#   one-liners that exec a base64 payload.
# custom:
#   severity: high
#   code: dev.ahp-opa.exec.decode-and-execute
violation contains {
	"reason": concat(" ", [
		"Blocked running decoded or obfuscated text as code; the command it hides cannot be reviewed.",
		"Run the plain command instead, written out in full.",
	]),
	"code": "dev.ahp-opa.exec.decode-and-execute",
} if {
	input.ahp.tool.family == "shell"
	_decode_and_execute
}

_decode_and_execute if {
	input.ahp.tool.family == "shell"
	some flow in shell.code_flows
	shell.decoder(input.ahp.shell.commands[flow[1]])
	shell.agent_text(input.ahp.shell.commands[flow[0]])
}

# Inline code, also fed on stdin, that decodes text and runs code it
# cannot show: exec(base64.b64decode(…)), eval(decode_base64(…)).
_decode_and_execute if {
	input.ahp.shell.classes.interpreter
	some i in input.ahp.shell.classes.interpreter
	cmd := input.ahp.shell.commands[i]
	cmd.code.decodes
	cmd.code.dynamic_code
	shell.agent_text(cmd)
}

_decode_and_execute if {
	input.ahp.shell.classes.interpreter
	some i in input.ahp.shell.classes.interpreter
	cmd := input.ahp.shell.commands[i]
	cmd.name in shell.interpreters
	shell.agent_text(cmd)
	some a in cmd.args
	regex.match(`(?i)(exec|eval|system|popen|spawn)\s*\(.*(b64decode|base64|decode\(|fromcharcode|atob\(|unhexlify|fromhex|\.decode\(.hex)`, a)
}

# METADATA
# title: Reverse shell
# description: |
#   Denies commands that hand a shell to a remote machine: redirections to
#   /dev/tcp or /dev/udp, nc/ncat -e or -c, socat exec:/system:, network
#   tools piped into a shell or fed by one (nc host port | sh,
#   sh -i | nc host port), awk's /inet/ files, and interpreter one-liners
#   that connect a socket to a process.
# custom:
#   severity: critical
#   code: dev.ahp-opa.exec.reverse-shell
violation contains {
	"reason": concat(" ", [
		"Blocked a reverse shell: the command would give a remote machine control of this one.",
		"Do not open network shells; ask the user if remote access is needed.",
	]),
	"code": "dev.ahp-opa.exec.reverse-shell",
} if {
	input.ahp.tool.family == "shell"
	_reverse_shell
}

_reverse_shell if {
	input.ahp.tool.family == "shell"
	some cmd in input.ahp.shell.commands
	some r in cmd.redirects
	regex.match(`^/dev/(tcp|udp)/`, r.target)
}

_reverse_shell if {
	input.ahp.shell.classes.network
	some i in input.ahp.shell.classes.network
	cmd := input.ahp.shell.commands[i]
	cmd.name in shell.network_tools
	some o in args.options(cmd.args)
	regex.match(`^(-[a-zA-Z]*[ec][a-zA-Z]*|--exec|--sh-exec|--lua-exec)(=.*)?$`, o)
}

_reverse_shell if {
	programs.socat
	some i in programs.socat
	cmd := input.ahp.shell.commands[i]
	cmd.name == "socat"
	some a in cmd.args
	regex.match(`(?i)^(exec|system):`, a)
}

# Network input run as code: nc host port | sh.
_reverse_shell if {
	input.ahp.shell.classes.network
	some flow in shell.code_flows
	input.ahp.shell.commands[flow[1]].name in shell.network_tools
}

# A shell whose output goes to the network: sh -i 2>&1 | nc host port.
_reverse_shell if {
	input.ahp.shell.classes.network
	some k in input.ahp.shell.classes.network
	cmd := input.ahp.shell.commands[k]
	cmd.name in shell.network_tools
	some i in cmd.inputs
	input.ahp.shell.commands[i].name in shell.shells
	input.ahp.shell.commands[i].parent != k
}

_reverse_shell if {
	some name, ixs in programs
	name in {"awk", "gawk"}
	some i in ixs
	cmd := input.ahp.shell.commands[i]
	some a in cmd.args
	contains(a, "/inet/")
}

# Inline code, also fed on stdin, that connects a socket to a shell or to
# its own standard streams.
_reverse_shell if {
	input.ahp.shell.classes.interpreter
	some i in input.ahp.shell.classes.interpreter
	input.ahp.shell.commands[i].code.reverse_shell
}

_reverse_shell if {
	input.ahp.shell.classes.interpreter
	some i in input.ahp.shell.classes.interpreter
	cmd := input.ahp.shell.commands[i]
	cmd.name in shell.interpreters
	some a in cmd.args
	regex.match(`(?i)sock`, a)
	regex.match(`(?i)(subprocess|pty\.spawn|dup2|/bin/(ba)?sh|fsockopen|child_process|exec\(|spawn\()`, a)
}

# METADATA
# title: Fork bomb
# description: |
#   Denies a command that starts copies of itself without bound: a shell
#   function that calls itself in a pipeline or in the background
#   (:(){ :|:& };:, bomb() { bomb | bomb & }; bomb), also inside a nested
#   script, and a job started in the background on every turn of a loop
#   that never ends (while true; do … & done). It would exhaust the
#   machine's processes.
# custom:
#   severity: high
#   code: dev.ahp-opa.exec.fork-bomb
violation contains {
	"reason": concat(" ", [
		"Blocked a command that starts copies of itself without bound (a fork bomb);",
		"it would exhaust the machine's processes.",
		"Run a bounded number of jobs instead, and wait for them.",
	]),
	"code": "dev.ahp-opa.exec.fork-bomb",
} if {
	input.ahp.shell.unbounded
}
