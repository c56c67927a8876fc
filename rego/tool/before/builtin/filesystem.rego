package ahp.tool.before.builtin

import data.ahp.lib.shell

# METADATA
# title: Recursive force delete of / or the home directory
# description: |
#   Denies rm with both recursive and force flags (-rf, -fr, -r -f, -Rf,
#   --recursive --force, ...) when an operand is the filesystem root or the
#   user's home directory: /, /*, ~, ~/, ~user, $HOME, ${HOME}, "$HOME".
#   Other targets such as build/, ./node_modules or /tmp/x stay allowed.
# custom:
#   severity: critical
#   code: dev.ahp-opa.fs.rm-rf-root-or-home
deny contains {
	"reason": concat(" ", [
		"Blocked `rm` with recursive and force flags aimed at the filesystem root or the home directory;",
		"this would destroy the system or all user data.",
		"Delete only the specific paths you need, for example `rm -rf ./build`.",
	]),
	"code": "dev.ahp-opa.fs.rm-rf-root-or-home",
} if {
	some cmd in shell.commands
	cmd.name == "rm"
	_rm_recursive(cmd.args)
	_rm_force(cmd.args)
	some target in shell.operands(cmd.args)
	_root_or_home(target)
}

_rm_recursive(args) if shell.has_short_flag(args, "r")

_rm_recursive(args) if shell.has_short_flag(args, "R")

_rm_recursive(args) if shell.has_long_flag(args, "--recursive", 5)

_rm_force(args) if shell.has_short_flag(args, "f")

_rm_force(args) if shell.has_long_flag(args, "--force", 5)

# / and /*, ~ and ~user, $HOME and ${HOME}, each optionally followed by
# slashes and a final * or . (~/, $HOME/*, //).
_root_or_home(path) if regex.match(`^(?:/+|(?:~[A-Za-z0-9_.-]*|\$HOME|\$\{HOME\})/*)(?:\*|\.)?$`, path)

# METADATA
# title: Recursive permission change of the filesystem root
# description: |
#   Denies chmod -R / chmod --recursive applied to / or /* whatever the mode
#   (777, a+rwx, ...): every file on the system would change mode, which
#   breaks setuid programs and opens the system to every user.
# custom:
#   severity: critical
#   code: dev.ahp-opa.fs.chmod-recursive-root
deny contains {
	"reason": concat(" ", [
		"Blocked a recursive chmod of the filesystem root;",
		"it would change the permissions of every file on the system.",
		"Change permissions only on the project paths that need it, for example `chmod -R u+rwX ./dist`.",
	]),
	"code": "dev.ahp-opa.fs.chmod-recursive-root",
} if {
	some cmd in shell.commands
	cmd.name == "chmod"
	_chmod_recursive(cmd.args)
	some target in shell.operands(cmd.args)
	_filesystem_root(target)
}

_chmod_recursive(args) if shell.has_short_flag(args, "R")

_chmod_recursive(args) if shell.has_long_flag(args, "--recursive", 5)

_filesystem_root(path) if regex.match(`^/+\*?$`, path)
