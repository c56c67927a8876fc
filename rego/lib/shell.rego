# METADATA
# title: Shell command helpers
# description: |
#   Helpers over input.ahp.shell, the parsed form of a shell tool's command
#   that ahp-opa adds to the input (docs/policy.md has the schema): program
#   sets, the data flow between commands, and the files commands read and
#   write.
package ahp.lib.shell

import data.ahp.lib.args
import input.ahp.shell.programs

commands := input.ahp.shell.commands

# agent_text(cmd) holds when the agent wrote the text of cmd: typed in
# this call (no provenance), not read from a definition the project
# committed. Heuristics of style (decoding, eval of variables, dynamic
# lookups, unpinned or fetched tool runs) judge what an agent improvised;
# in a project's own wrapper scripts and build files they are the idiom.
# What a command does (publishes, deletes, reads a credential) is judged
# wherever its text was written, so effect rules do not use this.
agent_text(cmd) if not cmd.provenance

agent_text(cmd) if cmd.provenance.kind != "repository"

# A definition the session wrote (a file tool, a redirect, a copy; see
# input.ahp.session.files_written) is the agent's text, however it is run.
agent_text(cmd) if cmd.provenance.file in input.ahp.session.files_written

# Programs whose script comes from -c, an operand or standard input.
shells := {
	"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "fish",
	"csh", "tcsh", "rbash", "ksh93", "pdksh", "oksh", "loksh",
}

# Language runtimes that run code from standard input when given no script.
interpreters := {
	"python", "python2", "python3", "pypy", "pypy3", "perl", "ruby", "node",
	"nodejs", "php", "lua", "luajit", "deno", "bun", "pwsh", "powershell",
	"osascript", "tclsh", "wish", "rscript", "jshell", "irb", "ipython",
}

# Programs that fetch URLs.
downloaders := {
	"curl", "wget", "wget2", "aria2c", "http", "https", "xh", "fetch",
	"lwp-request", "lwp-download", "axel", "curlie", "lynx", "w3m", "links",
	"links2", "elinks",
}

# Programs that move raw bytes over the network.
network_tools := {
	"nc", "ncat", "netcat", "nc.traditional", "nc.openbsd", "socat",
	"telnet", "cryptcat", "pwncat",
}

# Programs that run another program with more privileges.
escalators := {"sudo", "doas", "pkexec", "runuser", "su", "sudoedit", "run0"}

# Python-style code flags: python -c, perl -e, node -e/-p, ruby -e, php -r.
_code_flags := {"c", "e", "p", "r", "E", "m"}

# privileged holds for a command run through sudo, doas and the like.
privileged(cmd) if {
	some w in cmd.wrappers
	w in escalators
}

# code_from_stdin holds for a shell or interpreter that runs its standard
# input as code: `sh`, `bash -s`, `python3`, `python3 -`.
code_from_stdin(cmd) if {
	cmd.name in shells
	not _shell_c(cmd.args)
	count(_shell_operands(cmd.args)) == 0
}

code_from_stdin(cmd) if {
	cmd.name in shells
	not _shell_c(cmd.args)
	args.has_short_flag(cmd.args, "s")
}

code_from_stdin(cmd) if {
	cmd.name in (shells | interpreters)
	args.operands(cmd.args)[0] == "-"
}

code_from_stdin(cmd) if {
	cmd.name in interpreters
	not _code_flag(cmd.args)
	count(args.operands(cmd.args)) == 0
}

# php reads its script from stdin when "--" comes before any script name:
# curl -sS https://getcomposer.org/installer | php -- --install-dir=bin.
# The values of -d and -c are not script names.
code_from_stdin(cmd) if {
	cmd.name == "php"
	not _code_flag(cmd.args)
	some i, a in cmd.args
	a == "--"
	every j, o in array.slice(cmd.args, 0, i) {
		_php_option_word(cmd.args, j, o)
	}
}

_php_option_word(_, _, o) if startswith(o, "-")

_php_option_word(a, j, _) if {
	j > 0
	a[j - 1] in {"-d", "-c"}
}

# _shell_c holds when a shell's options include -c (alone or clustered).
_shell_c(a) if {
	some o in args.options(a)
	not startswith(o, "--")
	contains(o, "c")
}

_code_flag(a) if {
	some o in args.options(a)
	not startswith(o, "--")
	some c in _code_flags
	contains(o, c)
}

# A shell's operands, skipping the values of -o/+o/-O/+O.
_shell_operands(a) := [x |
	some i, x in a
	not regex.match(`^[-+]`, x)
	not _shell_option_value(a, i)
]

_shell_option_value(a, i) if {
	i > 0
	a[i - 1] in {"-o", "+o", "-O", "+O", "--rcfile", "--init-file"}
}

# code_flows holds [j, i] when command j runs the output of command i as
# code: i is piped into a shell reading its script from stdin, is the
# substitution a shell, interpreter, eval or source runs (bash <(curl …),
# sh -c "$(curl …)", eval "$(…)"), or reaches sh -c through a variable.
code_flows contains [j, i] if {
	input.ahp.shell.classes.shell
	some j in input.ahp.shell.classes.shell
	cmd := input.ahp.shell.commands[j]
	some i in cmd.inputs
	_executes(cmd, j, input.ahp.shell.commands[i])
}

code_flows contains [j, i] if {
	input.ahp.shell.classes.interpreter
	some j in input.ahp.shell.classes.interpreter
	cmd := input.ahp.shell.commands[j]
	some i in cmd.inputs
	_executes(cmd, j, input.ahp.shell.commands[i])
}

code_flows contains [j, i] if {
	some name, ixs in programs
	name in {"eval", "source", "."}
	some j in ixs
	cmd := input.ahp.shell.commands[j]
	some i in cmd.inputs
	_executes(cmd, j, input.ahp.shell.commands[i])
}

# A command whose code the analysis could not read (input.ahp.shell
# .dynamic_code: eval or sh -c of an unknown value, a program name that is
# a substitution, xargs sh -c '{}' on unknown input) runs what feeds it:
# $(curl …) alone, X=$(curl …); $X.
code_flows contains [j, i] if {
	input.ahp.shell.dynamic_code
	some j in input.ahp.shell.dynamic_code
	some i in input.ahp.shell.commands[j].inputs
}

_executes(cmd, _, _) if cmd.name in {"eval", "source", "."}

_executes(cmd, _, _) if {
	cmd.name in shells
	_shell_c(cmd.args)
}

_executes(cmd, _, _) if code_from_stdin(cmd)

# Inline code that runs what it reads on stdin: exec(sys.stdin.read()).
_executes(cmd, _, _) if cmd.code.executes_stdin

_executes(cmd, j, src) if {
	cmd.name in (shells | interpreters)
	src.parent == j
}

# decoder holds for a command that decodes or deobfuscates its input.
decoder(cmd) if {
	cmd.name in {"base64", "base32", "basenc", "gbase64"}
	some a in args.options(cmd.args)
	regex.match(`^(-[a-zA-Z]*[dD][a-zA-Z]*|--decode)$`, a)
}

# tr rewrites characters (rot13, deleting filler): text that only runs
# after tr has hidden the command it is.
decoder(cmd) if {
	cmd.name == "tr"
	count(cmd.args) > 0
}

decoder(cmd) if {
	cmd.name == "xxd"
	args.has_short_flag(cmd.args, "r")
}

decoder(cmd) if {
	cmd.name == "openssl"
	some a in cmd.args
	a in {"-d", "base64", "-a", "-base64"}
}

decoder(cmd) if cmd.name in {"uudecode", "rev"}

decoder(cmd) if {
	cmd.name == "printf"
	some a in cmd.args
	regex.match(`\\x[0-9a-fA-F]{2}|\\[0-7]{3}`, a)
}

# Operations on redirections that write their target.
write_ops := {">", ">>", ">|", "&>", "&>>", "<>"}

# writes holds {"command": i, "path": p} for each file command i writes:
# output redirections, tee, cp/mv/install/ln destinations, sed -i and
# curl -o / wget -O outputs, dd of=, and the files of apply_patch.
writes contains {"command": i, "path": r.path} if {
	input.ahp.tool.family == "shell"
	some i, cmd in input.ahp.shell.commands
	some r in cmd.redirects
	r.op in {">", ">>", ">|", "&>", "&>>", "<>"}
	r.path
}

writes contains {"command": i, "path": p} if {
	input.ahp.tool.family == "shell"
	some name, ixs in programs
	name in {"tee", "truncate", "sponge", "apply_patch", "applypatch"}
	some i in ixs
	input.ahp.shell.commands[i].name == name
	some p in input.ahp.shell.commands[i].paths
}

writes contains {"command": i, "path": p} if {
	input.ahp.tool.family == "shell"
	some name, ixs in programs
	name in {"cp", "mv", "install", "ln", "rsync", "ditto"}
	some i in ixs
	cmd := input.ahp.shell.commands[i]
	cmd.name == name
	ops := [q | some q in cmd.paths]
	count(ops) > 1
	p := ops[count(ops) - 1]
}

writes contains {"command": i, "path": p} if {
	input.ahp.tool.family == "shell"
	some name, ixs in programs
	name in {"sed", "perl", "gsed"}
	some i in ixs
	cmd := input.ahp.shell.commands[i]
	some o in args.options(cmd.args)
	regex.match(`^(-i|--in-place|-[a-zA-Z]*i)`, o)
	some p in cmd.paths
}

writes contains {"command": i, "path": p} if {
	input.ahp.tool.family == "shell"
	some name, ixs in programs
	name in {"curl", "wget"}
	some i in ixs
	cmd := input.ahp.shell.commands[i]
	some p in cmd.paths
	p.arg > 0
	cmd.args[p.arg - 1] in {"-o", "--output", "-O", "--output-document"}
}

writes contains {"command": i, "path": p} if {
	input.ahp.tool.family == "shell"
	programs.dd
	some i in programs.dd
	cmd := input.ahp.shell.commands[i]
	some p in cmd.paths
	startswith(cmd.args[p.arg], "of=")
}

# Commands that take file names without showing the files' contents.
non_reading := {
	"ls", "stat", "file", "test", "[", "chmod", "chown", "chgrp", "touch",
	"rm", "rmdir", "mkdir", "ssh", "ssh-add", "ssh-keygen", "ssh-copy-id",
	"echo", "printf", "git", "cd", "pushd", "popd", "realpath", "readlink",
	"basename", "dirname", "wc", "du", "find", "which", "type", "command",
	"mv", "ln", "tee", "truncate", "shred", "source", ".", "open", "code",
	"xdg-open", "exa", "eza", "tree", "lsof", "fuser", "unlink", "setfacl",
	"getfacl", "chattr", "lsattr", "sops", "age", "gpg", "direnv", "dotenv",
	"docker", "docker-compose", "podman", "export", "declare", "trap", "bfg",
	"git-filter-repo", "",
}

# reads holds {"command": i, "path": p} for each file a command may show
# or copy: a file argument of any command not in non_reading (a copy's
# destination excepted), and input redirections.
reads contains {"command": i, "path": p} if {
	input.ahp.tool.family == "shell"
	some i, cmd in input.ahp.shell.commands
	not cmd.name in {"ls", "stat", "file", "test", "[", "chmod", "chown", "chgrp", "touch", "rm", "rmdir", "mkdir", "ssh", "ssh-add", "ssh-keygen", "ssh-copy-id", "echo", "printf", "git", "cd", "pushd", "popd", "realpath", "readlink", "basename", "dirname", "wc", "du", "find", "which", "type", "command", "mv", "ln", "tee", "truncate", "shred", "source", ".", "open", "code", "xdg-open", "exa", "eza", "tree", "lsof", "fuser", "unlink", "setfacl", "getfacl", "chattr", "lsattr", "sops", "age", "gpg", "direnv", "dotenv", "docker", "docker-compose", "podman", "export", "declare", "trap", "bfg", "git-filter-repo", ""}
	some p in cmd.paths
	not _destination(cmd, p)
	not _loaded_config(cmd, p)
}

reads contains {"command": i, "path": r.path} if {
	input.ahp.tool.family == "shell"
	some i, cmd in input.ahp.shell.commands
	some r in cmd.redirects
	r.op in {"<", "<>"}
	r.path
}

_destination(cmd, p) if {
	cmd.name in {"cp", "install", "rsync", "scp", "ditto"}
	last := max({q.arg | some q in cmd.paths})
	p.arg == last
}

# mv and ln put a file where the agent's tools read freely: moving or
# linking a file into the workspace (mv ~/.aws/credentials ./c.txt,
# ln -s ~/.ssh/id_rsa key) exposes it as a copy would. A file already
# in the workspace, or a destination outside it (dotfile installers), is
# no read.
reads contains {"command": i, "path": p} if {
	input.ahp.tool.family == "shell"
	some name in ["mv", "ln"]
	some i in programs[name]
	cmd := input.ahp.shell.commands[i]
	ops := [q | some q in cmd.paths]
	some k, p in ops
	p.outside_workspace
	_into_workspace(cmd, ops, k)
}

_into_workspace(_, ops, k) if {
	count(ops) > 1
	k < count(ops) - 1
	not ops[count(ops) - 1].outside_workspace
}

# ln -s TARGET with no link name links into the working directory.
_into_workspace(cmd, ops, 0) if {
	cmd.name == "ln"
	count(ops) == 1
	count(args.operands(cmd.args)) == 1
}

# The value of an output option names a file the command writes:
# openssl req -keyout key.pem -out cert.pem, curl -o, sort -o, gcc -o.
_destination(cmd, p) if {
	p.arg > 0
	cmd.args[p.arg - 1] in _output_options
	not cmd.name in {"grep", "egrep", "fgrep", "zgrep", "rg", "unzip"} # -o is a flag there
}

_output_options := {"-o", "-out", "-keyout", "--out", "--output", "-output", "--output-file", "--outfile"}

# A virtual environment's directory is created, not read: python -m venv
# .env, virtualenv .venv, uv venv .env: its operands are where it writes.
_destination(cmd, p) if {
	cmd.name in interpreters
	some i, a in cmd.args
	a == "-m"
	cmd.args[i + 1] in _environment_creators
	p.arg > i + 1
	every o in array.slice(cmd.args, 0, i) { startswith(o, "-") } # -m after a script belongs to the script
}

_destination(cmd, _) if cmd.name == "virtualenv"

_destination(cmd, p) if {
	cmd.name == "uv"
	cmd.args[0] == "venv"
	p.arg > 0
}

_environment_creators := {"venv", "virtualenv"}

# The value of a configuration-file or key option is loaded by the
# program that needs it, not shown: dotnet restore --configfile
# /run/secrets/nuget.config, kubectl --kubeconfig ~/.kube/prod get pods,
# cosign sign --key cosign.key, curl --key client.key, jarsigner
# -keystore release.jks. The file still counts as read when any other
# command names it.
_loaded_config(cmd, p) if {
	p.arg > 0
	lower(cmd.args[p.arg - 1]) in _loading_options
}

_loaded_config(cmd, p) if {
	some o in _loading_options
	startswith(lower(cmd.args[p.arg]), concat("", [o, "="]))
}

_loading_options := {
	"--configfile", "-configfile", "--config-file", "--kubeconfig",
	"--key", "-key", "--private-key", "--key-file", "--keyfile", "--client-key",
	"--tls-key", "--tlskey", "--ssl-key", "--sslkey", "--signing-key",
	"--keystore", "-keystore", "--identity-file", "--cert", "-cert", "--tlscert",
}

# words lists every argument of every command, and the bodies of here-
# documents: text a rule may search when no structure fits (code passed
# to python -c, for one).
words contains w if {
	input.ahp.tool.family == "shell"
	some cmd in input.ahp.shell.commands
	some w in cmd.args
}

# hosts holds the hosts a command contacts: the host of every URL in its
# arguments.
hosts contains u.host if {
	input.ahp.tool.family == "shell"
	some cmd in input.ahp.shell.commands
	some u in cmd.urls
}
