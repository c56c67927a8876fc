package ahp.tool.before.builtin

import data.ahp.lib.args
import data.ahp.lib.config
import data.ahp.lib.shell

# METADATA
# title: Opening a session whose input no hook sees
# description: |
#   Denies starting a shell, an interpreter, a database client or a
#   remote shell with no script, on a tool that can type into it later
#   without asking a hook: Codex's exec_command (its write_stdin calls no
#   hook; `cat ~/.ssh/id_rsa` typed that way returned the key), Augment's
#   launch-process, Desktop Commander's start_process, and any tool asked
#   for a terminal (tty: true). Such a session is code nobody can analyse.
#   Commands with their script (bash -c …, python3 app.py, psql -c …,
#   ssh host uptime) are judged as usual; a team that accepts the risk
#   sets library.allow_interactive_sessions: true.
# custom:
#   severity: high
#   code: dev.ahp-opa.exec.interactive-session
violation contains {
	"reason": concat(" ", [
		"Blocked starting an interactive shell, interpreter or client whose later input is typed without passing the guard; what runs in it cannot be checked.",
		"Run each command on its own (bash -c '…', python3 script.py, psql -c '…'), or ask the user to allow interactive sessions.",
	]),
	"code": "dev.ahp-opa.exec.interactive-session",
	"trigger": _command_trigger(cmd),
} if {
	input.ahp.tool.family == "shell"
	_later_input
	some i, cmd in input.ahp.shell.commands
	_opens_session(cmd)
	not _session_fed(i, cmd)
	not _prints_and_exits(cmd)
	not config.interactive_sessions_allowed
}

# Tools that can type into what they started, unseen.
_later_input if input.ahp.agent == "codex"

_later_input if lower(input.ahp.tool.name) in {"exec_command", "launch-process", "launch_process", "start_process", "start_interactive_process", "create_terminal", "open_terminal"}

_later_input if input.tool.input.tty == true

# A command whose input is already given (a pipe, a redirection, a
# here-document) runs that and ends.
_session_fed(_, cmd) if count(object.get(cmd, "inputs", [])) > 0

_session_fed(_, cmd) if {
	some r in cmd.redirects
	r.op in {"<", "<<", "<<-", "<<<", "<>"}
}

# Asked for its version or usage, a program prints it and ends: no later
# input is read. Only spellings that mean that for the programs named
# (bash -v is verbose mode, not the version).
_prints_and_exits(cmd) if {
	some a in cmd.args
	a in {"--version", "--help", "-version", "-help"}
}

_prints_and_exits(cmd) if {
	startswith(cmd.name, "python")
	some a in cmd.args
	a in {"-V", "-VV", "-h"}
}

_prints_and_exits(cmd) if {
	cmd.name in {"node", "deno", "bun", "php"}
	some a in cmd.args
	a in {"-v", "-h"}
}

_opens_session(cmd) if {
	cmd.name in shell.shells
	not _runs_code(cmd.args, {"c"})
	count(args.operands(cmd.args)) == 0
}

_opens_session(cmd) if {
	cmd.name in (shell.interpreters | {"python3.11", "python3.12", "python3.13", "irb", "ipython", "bpython", "ptpython", "ghci", "iex", "erl", "node", "deno", "bun", "julia", "R", "r", "scala", "clj", "lein", "sbcl", "guile", "racket", "lua", "php", "jshell", "pry"})
	not _runs_code(cmd.args, {"c", "e", "m", "p", "r", "E"})
	not "repl" in cmd.args
	count(args.operands(cmd.args)) == 0
}

_opens_session(cmd) if {
	cmd.name in {"deno", "bun", "node"}
	args.operands(cmd.args) == ["repl"]
}

_opens_session(cmd) if {
	cmd.name in {"psql", "mysql", "mariadb", "sqlite3", "duckdb", "mongosh", "mongo", "redis-cli", "valkey-cli", "cqlsh", "clickhouse-client", "sqlcmd", "pgcli", "mycli", "litecli", "usql"}
	not _db_script(cmd.args)
	not _db_statement(cmd)
}

# ssh host with no remote command: a login shell on another machine.
_opens_session(cmd) if {
	cmd.name in {"ssh", "mosh", "telnet"}
	count(args.operands(cmd.args)) == 1
	not _ssh_value_only(cmd.args)
}

# docker exec -it c bash, kubectl exec -it pod -- sh.
_opens_session(cmd) if {
	cmd.name in {"docker", "podman", "nerdctl", "kubectl", "oc"}
	some a in cmd.args
	a in {"-it", "-ti", "-i", "--interactive", "--stdin"}
	last := cmd.args[count(cmd.args) - 1]
	last in (shell.shells | shell.interpreters)
}

_runs_code(a, letters) if {
	some o in args.options(a)
	not startswith(o, "--")
	some l in letters
	contains(substring(o, 1, -1), l)
}

_runs_code(a, _) if {
	some o in a
	o in {"--command", "--eval", "--print", "--execute", "--module"}
}

_db_script(a) if {
	some o in a
	regex.match(`^(-c|-e|-f|-x|--command|--execute|--eval|--file|-i|--input-file|-Q|-q|--query|--help|--version|-V|-l|--list)(=.*)?$`, o)
}

# sqlite3 DB "SELECT …", redis-cli GET k: a statement after the target
# is a script (psql and mysql take none: their operands are names).
_db_statement(cmd) if {
	cmd.name in {"sqlite3", "duckdb", "litecli"}
	count(args.operands(cmd.args)) >= 2
}

_db_statement(cmd) if {
	cmd.name in {"redis-cli", "valkey-cli"}
	count(args.operands(cmd.args)) >= 1
}

_ssh_value_only(a) if {
	some o in a
	o in {"-V", "-G", "-Q", "-O"}
}
