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
#   /var, …), a directory just below / or every entry of one (/*, ~/*);
#   and any rm of every entry of one (rm -f ~/*, find ~ -type f | xargs rm).
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
	"trigger": _path_trigger(p),
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
#   none), rmz, rip and the trash commands included. Deleting inside the
#   workspace, in temporary directories (/tmp, /var/tmp, …) and in the
#   system caches image builds empty (/var/cache, /var/lib/apt/lists) is
#   allowed; the user's caches (~/.cache/pip, ~/Library/Caches/…) are data
#   outside the workspace, which exceptions.paths can allow.
# custom:
#   severity: high
#   code: dev.ahp-opa.fs.rm-recursive-outside-workspace
violation contains {
	"reason": concat(" ", [
		"Blocked a recursive delete outside the workspace.",
		"Delete only inside the project directory; if this path must go, ask the user to delete it.",
	]),
	"code": "dev.ahp-opa.fs.rm-recursive-outside-workspace",
	"trigger": concat(" ", [_path_trigger(p), "(outside the workspace)"]),
} if {
	input.ahp.tool.family == "shell"
	some p in _deleted_recursively
	p.outside_workspace
	not paths.critical(p)
	not paths.temp(p)
	not paths.cache(p)
	not config.path_excepted(p)
}

# Each body starts with the program it is about: OPA's rule index skips it
# when the command does not run that program.
_deleted_recursively contains p if some p in _rm_deleted

_rm_deleted contains p if {
	programs.rm
	some i in programs.rm
	cmd := input.ahp.shell.commands[i]
	cmd.name == "rm"
	_recursive(cmd.args)
	some p in cmd.paths
}

# Every entry of a home or system directory (rm -f ~/*, a find of ~ fed to
# xargs rm) is as gone as the directory, recursive or not.
_deleted_recursively contains p if {
	programs.rm
	some i in programs.rm
	cmd := input.ahp.shell.commands[i]
	cmd.name == "rm"
	not _recursive(cmd.args)
	some p in cmd.paths
	p.glob
	paths.critical(p)
}

_deleted_recursively contains p if {
	programs.find
	some i in programs.find
	cmd := input.ahp.shell.commands[i]
	cmd.name == "find"
	_find_deletes(cmd, i)
	some p in _find_roots(cmd)
}

# mv takes its sources away: moving a home, / or a system directory
# (mv ~ /tmp/x, mv ~/* trash/) deletes it from where everything expects
# it. Only those count: moving an ordinary file out of home is everyday.
_deleted_recursively contains p if {
	programs.mv
	some i in programs.mv
	cmd := input.ahp.shell.commands[i]
	cmd.name == "mv"
	ops := [q | some q in cmd.paths]
	count(ops) > 1
	some k, p in ops
	k < count(ops) - 1
	paths.critical(p)
}

# rsync --delete (and --del, --delete-before, …) deletes whatever the
# destination holds that the source does not: rsync -a --delete empty/ ~/.
_deleted_recursively contains p if {
	programs.rsync
	some i in programs.rsync
	cmd := input.ahp.shell.commands[i]
	cmd.name == "rsync"
	some o in args.options(cmd.args)
	regex.match(`^--del(ete)?(-[a-z]+)?$`, o)
	ops := [q | some q in cmd.paths]
	count(ops) > 1
	p := ops[count(ops) - 1]
	not regex.match(`^[^/]*:`, p.raw)
}

# Deleters that take a directory with everything in it, whatever their
# options say: rmz (a fast rm), rip and the trash commands move or remove
# their operands whole; srm and wipe do with -r.
_deleted_recursively contains p if some p in _deleter_deleted

_deleter_deleted contains p if {
	some name in _whole_deleters
	programs[name]
	some i in programs[name]
	cmd := input.ahp.shell.commands[i]
	some p in cmd.paths
}

_deleter_deleted contains p if {
	some name in {"srm", "wipe"}
	programs[name]
	some i in programs[name]
	cmd := input.ahp.shell.commands[i]
	_recursive(cmd.args)
	some p in cmd.paths
}

_deleter_deleted contains p if {
	programs.gio
	some i in programs.gio
	cmd := input.ahp.shell.commands[i]
	cmd.args[0] in {"trash", "remove"}
	some p in cmd.paths
	p.arg > 0
}

_whole_deleters := {"rmz", "rip", "trash", "trash-put"}

_recursive(a) if args.has_short_flag(a, "r")

_recursive(a) if args.has_short_flag(a, "R")

_recursive(a) if args.has_long_flag(a, "--recursive", 5)

_find_deletes(cmd, _) if "-delete" in cmd.args

# A find whose expression only deletes: every file under its roots goes.
_find_deletes_all(cmd) if {
	every a in array.slice(cmd.args, count(_find_roots(cmd)), count(cmd.args)) {
		a in {"-delete", "-depth", "-mindepth", "1", "-xdev", "-mount", "-print"}
	}
}

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
# title: Deleting the workspace or its repository
# description: |
#   Denies a recursive delete of a workspace root itself (rm -rf .,
#   rm -rf "$PWD", rm -rf /path/to/repo, rm -rf ./* at the root,
#   find . -delete with no filter) or of a repository's .git directory
#   (or its objects and refs), which holds every commit not yet pushed.
#   Deleting build output inside the workspace stays allowed.
# custom:
#   severity: high
#   code: dev.ahp-opa.fs.delete-workspace
violation contains {
	"reason": concat(" ", [
		"Blocked deleting the workspace itself or its .git directory; unpushed commits and uncommitted work would be lost.",
		"Delete only generated directories (build, dist, node_modules), and ask the user before removing a repository.",
	]),
	"code": "dev.ahp-opa.fs.delete-workspace",
	"trigger": _path_trigger(p),
} if {
	input.ahp.tool.family == "shell"
	some p in _deleted_wholly
	_workspace_or_repository(p)
	not paths.critical(p)
	not config.path_excepted(p)
}

# _deleted_wholly holds the paths removed with everything under them: rm -r
# targets, and the roots of a find whose only action is -delete.
_deleted_wholly contains p if some p in _rm_deleted

_deleted_wholly contains p if some p in _deleter_deleted

_deleted_wholly contains p if {
	programs.find
	some i in programs.find
	cmd := input.ahp.shell.commands[i]
	cmd.name == "find"
	"-delete" in cmd.args
	_find_deletes_all(cmd)
	some p in _find_roots(cmd)
}

_workspace_or_repository(p) if p.path in input.ahp.workspace.roots

_workspace_or_repository(p) if {
	some root in input.ahp.workspace.roots
	p.path == concat("/", [root, "*"])
}

# A .git directory, unless it is a dependency's checkout the package manager
# fetches again (vendor/x/y/.git, node_modules/x/.git).
_workspace_or_repository(p) if {
	regex.match(`(^|/)\.git(/(objects|refs)(/.*)?)?$`, p.path)
	not paths.installed_dependency(p.path)
}

# $PWD is the working directory, which the shell analysis leaves unknown.
_workspace_or_repository(p) if {
	p.raw in {"$PWD", "${PWD}", "$(pwd)", "`pwd`", "$PWD/", "$PWD/*", "${PWD}/*"}
	input.ahp.workspace.cwd in input.ahp.workspace.roots
}

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
	"trigger": _path_trigger(p),
} if {
	input.ahp.writes
	some p in _written
	paths.system(p)
	not paths.within(p.path, "/dev")
	not config.path_excepted(p)
}

_written contains p if some p in data.ahp.lib.tools.written
