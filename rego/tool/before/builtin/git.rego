package ahp.tool.before.builtin

import data.ahp.lib.shell

# METADATA
# title: Force push
# description: |
#   Denies git push with --force, -f (alone or in a cluster such as -fu) or a
#   +refspec (git push origin +main), which can overwrite commits on the
#   remote. --force-with-lease (with or without --force-if-includes) is
#   allowed because it refuses to overwrite work it has not seen.
# custom:
#   severity: high
#   code: dev.ahp-opa.git.force-push
deny contains {
	"reason": concat(" ", [
		"Blocked `git push` with --force, -f or a +refspec; it can overwrite other people's commits on the remote.",
		"Use `git push --force-with-lease` instead, or push without forcing.",
	]),
	"code": "dev.ahp-opa.git.force-push",
} if {
	some cmd in shell.commands
	cmd.name == "git"
	sub := _git_subcommand(cmd.args)
	sub.name == "push"
	_forced_push(sub.args)
}

# git options placed before the subcommand that take a separate value.
_git_value_options := {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--exec-path"}

_git_subcommand(args) := {"name": args[i], "args": array.slice(args, i + 1, count(args))} if {
	i := min({j | some j, a in args; not _git_global_option(args, j)})
}

_git_global_option(args, i) if startswith(args[i], "-")

_git_global_option(args, i) if {
	i > 0
	args[i - 1] in _git_value_options
}

# git accepts abbreviated long options, but every abbreviation of --force is
# ambiguous with --force-with-lease, so only the exact spelling counts.
_forced_push(args) if "--force" in shell.options(args)

_forced_push(args) if shell.has_short_flag(args, "f")

_forced_push(args) if {
	some refspec in shell.operands(args)
	startswith(refspec, "+")
}
