package ahp.tool.before.builtin

import data.ahp.lib.args
import data.ahp.lib.shell
import input.ahp.shell.programs

# METADATA
# title: Downloaded script run in a second step
# description: |
#   Denies downloading a script and running it in the same call, the
#   two-step form of curl … | sh: curl -o x.sh URL && sh x.sh,
#   curl -O URL/setup.sh; bash setup.sh, wget URL && chmod +x x && ./x,
#   curl … > x.py && python3 x.py, and source of a downloaded file. The
#   file counts when the shell, interpreter or source runs it as its
#   script, or it is run directly, by its path or by its name once saved
#   in a directory of PATH (curl -o ~/.local/bin/x … && x). A repository
#   cloned and a script in it run (git clone URL ~/.d && ~/.d/install.sh)
#   is the same act.
# custom:
#   severity: high
#   code: dev.ahp-opa.exec.download-and-run
violation contains {
	"reason": concat(" ", [
		"Blocked fetching a script (a download or a fresh clone) and running it in one go; it would run unreviewed.",
		"Fetch it, show it to the user, and let them decide whether to run it.",
	]),
	"code": "dev.ahp-opa.exec.download-and-run",
	"trigger": trigger,
} if {
	some trigger in _fetched_and_run
}

_fetched_and_run contains concat(" ", [cmd.argv[0], base]) if {
	input.ahp.shell.classes.downloader
	some base in _downloaded
	some cmd in input.ahp.shell.commands
	_runs_script(cmd, base)
}

_fetched_and_run contains concat(" ", ["git clone", dir, "then", cmd.argv[0]]) if {
	programs.git
	some dir in _cloned
	some cmd in input.ahp.shell.commands
	_runs_from(cmd, dir)
}

# _cloned holds the last path segment of each directory git clone fills:
# the one named, or the repository's name.
_cloned contains regex.replace(trim_right(ops[2], "/"), `^.*/`, "") if {
	some i in programs.git
	ops := args.operands(input.ahp.shell.commands[i].args)
	ops[0] == "clone"
	count(ops) > 2
}

_cloned contains regex.replace(regex.replace(trim_right(ops[1], "/"), `^.*[/:]`, ""), `\.git$`, "") if {
	some i in programs.git
	ops := args.operands(input.ahp.shell.commands[i].args)
	ops[0] == "clone"
	count(ops) == 2
}

# A script inside the clone, run directly or by a shell or interpreter.
_runs_from(cmd, dir) if {
	dir != ""
	contains(concat("", ["/", cmd.argv[0]]), concat("", ["/", dir, "/"]))
}

_runs_from(cmd, dir) if {
	dir != ""
	cmd.name in (shell.shells | shell.interpreters)
	not shell._shell_c(cmd.args)
	op := args.operands(cmd.args)[0]
	contains(concat("", ["/", op]), concat("", ["/", dir, "/"]))
}

# _downloaded holds the names of the files downloaders write.
_downloaded contains p.base if {
	some w in shell.writes
	input.ahp.shell.commands[w.command].name in shell.downloaders
	p := w.path
}

# curl -sSLo x.sh, wget -qO x.sh: the output option at the end of a cluster.
_downloaded contains p.base if {
	some i in input.ahp.shell.classes.downloader
	cmd := input.ahp.shell.commands[i]
	some p in cmd.paths
	p.arg > 0
	regex.match(`^(-[a-zA-Z]*[oO]|--output|--output-document)$`, cmd.args[p.arg - 1])
}

_downloaded contains base if {
	some i in input.ahp.shell.classes.downloader
	cmd := input.ahp.shell.commands[i]
	some o in args.options(cmd.args)
	regex.match(`^--(output|output-document)=.`, o)
	base := regex.replace(o, `^[^=]*=(.*/)?`, "")
}

# curl -O URL and plain wget URL save under the URL's last path segment.
_downloaded contains base if {
	some i in input.ahp.shell.classes.downloader
	cmd := input.ahp.shell.commands[i]
	_remote_name(cmd)
	some u in cmd.urls
	base := regex.replace(u.path, `^.*/`, "")
	base != ""
}

_remote_name(cmd) if {
	cmd.name == "curl"
	some o in args.options(cmd.args)
	regex.match(`^(-[a-zA-Z]*O[a-zA-Z]*|--remote-name|--remote-name-all)$`, o)
}

_remote_name(cmd) if {
	cmd.name in {"wget", "wget2"}
	not _wget_output(cmd.args)
}

_wget_output(a) if {
	some o in args.options(a)
	regex.match(`^(-[a-zA-Z]*O|--output-document(=.*)?)$`, o)
}

# The script a shell, interpreter or source runs is its first operand.
_runs_script(cmd, base) if {
	cmd.name in ((shell.shells | shell.interpreters) | {"source", "."})
	not shell._shell_c(cmd.args)
	op := args.operands(cmd.args)[0]
	regex.replace(op, `^.*/`, "") == base
}

# A file saved in a directory of PATH runs by its name.
_runs_script(cmd, base) if {
	not contains(cmd.argv[0], "/")
	cmd.name == base
	some i in input.ahp.shell.classes.downloader
	some p in input.ahp.shell.commands[i].paths
	p.base == base
	regex.match(`(^|/)(bin|\.local/bin|sbin)$`, regex.replace(p.path, `/[^/]*$`, ""))
}

# ./install.sh, /tmp/i.sh: the file itself is the program.
_runs_script(cmd, base) if {
	contains(cmd.argv[0], "/")
	regex.replace(cmd.argv[0], `^.*/`, "") == base
}
