package ahp.tool.before.builtin

import data.ahp.lib.args
import data.ahp.lib.config
import data.ahp.lib.paths
import input.ahp.shell.programs

# METADATA
# title: Recursive delete of /, a home or a system directory
# description: |
#   Denies a recursive rm (-r, -R, --recursive, with or without -f) and
#   find … -delete or find … -exec rm whose target is the file system root,
#   a home directory (~, $HOME, /home/u), a system directory (/etc, /usr,
#   /var, …), a directory just below / or every entry of one (/*, ~/*).
#   Paths are resolved first, so ../.., "$HOME"/ and ~root count.
# custom:
#   severity: critical
#   code: dev.ahp-opa.fs.rm-recursive-critical
violation contains {
	"reason": concat(" ", [
		"Blocked a recursive delete of the file system root, a home directory or a system directory;",
		"it would destroy the system or the user's data.",
		"Delete only the specific paths you need inside the workspace, for example `rm -rf ./build`.",
	]),
	"code": "dev.ahp-opa.fs.rm-recursive-critical",
} if {
	input.ahp.tool.family == "shell"
	some p in _deleted_recursively
	paths.critical(p)
	not config.path_excepted(p)
}

# METADATA
# title: Recursive delete outside the workspace
# description: |
#   Denies a recursive rm, or find … -delete, whose target lies outside the
#   session's workspace roots (the working directory when the session names
#   none). Deleting inside the workspace and in temporary directories
#   (/tmp, /var/tmp, …) is allowed; exceptions.paths can allow more.
# custom:
#   severity: high
#   code: dev.ahp-opa.fs.rm-recursive-outside-workspace
violation contains {
	"reason": concat(" ", [
		"Blocked a recursive delete outside the workspace.",
		"Delete only inside the project directory; if this path must go, ask the user to delete it.",
	]),
	"code": "dev.ahp-opa.fs.rm-recursive-outside-workspace",
} if {
	input.ahp.tool.family == "shell"
	some p in _deleted_recursively
	p.outside_workspace
	not paths.critical(p)
	not paths.temp(p)
	not config.path_excepted(p)
}

# Each body starts with the program it is about: OPA's rule index skips it
# when the command does not run that program.
_deleted_recursively contains p if {
	programs.rm
	some i in programs.rm
	cmd := input.ahp.shell.commands[i]
	cmd.name == "rm"
	_recursive(cmd.args)
	some p in cmd.paths
}

_deleted_recursively contains p if {
	programs.find
	some i in programs.find
	cmd := input.ahp.shell.commands[i]
	cmd.name == "find"
	_find_deletes(cmd, i)
	some p in _find_roots(cmd)
}

_recursive(a) if args.has_short_flag(a, "r")

_recursive(a) if args.has_short_flag(a, "R")

_recursive(a) if args.has_long_flag(a, "--recursive", 5)

_find_deletes(cmd, _) if "-delete" in cmd.args

_find_deletes(_, i) if {
	some child in input.ahp.shell.commands
	child.via == "find-exec"
	child.parent == i
	child.name in {"rm", "shred", "unlink"}
}

# The starting points of find: the paths before the first expression.
_find_roots(cmd) := [p |
	some p in cmd.paths
	every i in numbers.range(0, p.arg) {
		not regex.match(`^[-(!]`, cmd.args[i])
	}
]

# METADATA
# title: Writing system files
# description: |
#   Denies changing files in system directories (/etc, /usr, /bin, /boot,
#   /var, /Library, C:/Windows, …) with a file tool or a shell command that
#   writes (>, >>, tee, cp, mv, install, sed -i, dd of=). /dev is left to
#   the disk rules, temporary directories are allowed.
# custom:
#   severity: high
#   code: dev.ahp-opa.fs.write-system
violation contains {
	"reason": concat(" ", [
		"Blocked writing to a system directory; changing system files can break the machine for every user.",
		"Keep changes inside the workspace, and ask the user to make system changes themselves.",
	]),
	"code": "dev.ahp-opa.fs.write-system",
} if {
	input.ahp.writes
	some p in _written
	paths.system(p)
	not paths.within(p.path, "/dev")
	not config.path_excepted(p)
}

_written contains p if some p in data.ahp.lib.tools.written
