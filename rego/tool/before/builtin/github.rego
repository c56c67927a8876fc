package ahp.tool.before.builtin

import data.ahp.lib.args
import data.ahp.lib.local
import input.ahp.shell.programs

# METADATA
# title: Destructive GitHub CLI calls
# description: |
#   Denies gh commands that delete or expose things on GitHub: repo delete,
#   archive and visibility changes, release and asset delete, secret and
#   variable delete, ssh-key/gpg-key delete, issue delete, run and cache
#   delete, label delete, workflow disable, codespace delete, project
#   delete, pr merge --admin (which bypasses branch protection), and
#   gh api with the DELETE method (taking a label, assignee or review
#   request off an issue or pull request excepted).
# custom:
#   severity: high
#   code: dev.ahp-opa.gh.destructive
violation contains {
	"reason": concat(" ", [
		"Blocked a GitHub CLI call that deletes, exposes or bypasses protection on GitHub; it cannot be undone.",
		"Describe the change and ask the user to make it.",
	]),
	"code": "dev.ahp-opa.gh.destructive",
	"trigger": concat(" ", array.concat(["gh"], array.slice(_gh_operands(cmd.args), 0, 2))),
} if {
	programs.gh
	some i in programs.gh
	cmd := input.ahp.shell.commands[i]
	not local.command(i)
	cmd.name == "gh"
	_gh_destructive(_gh_operands(cmd.args), cmd.args)
}

# The operands of gh, without the value of -R/--repo.
_gh_operands(a) := [x |
	some i, x in args.operands(a)
	not _gh_repo_value(a, x)
]

_gh_repo_value(a, x) if {
	some i, y in a
	y in {"-R", "--repo"}
	a[i + 1] == x
}

_gh_destructive(ops, _) if {
	[group, verb] := array.slice(ops, 0, 2)
	verb in {"delete", "delete-asset", "remove"}
	group in {"repo", "release", "secret", "variable", "ssh-key", "gpg-key", "issue", "run", "cache", "label", "codespace", "project", "gist", "ruleset", "environment", "extension"}
	not group == "extension"
}

_gh_destructive(ops, _) if array.slice(ops, 0, 2) in {["repo", "archive"], ["workflow", "disable"], ["repo", "rename"], ["auth", "refresh"]}

_gh_destructive(ops, a) if {
	array.slice(ops, 0, 2) == ["repo", "edit"]
	some o in args.options(a)
	startswith(o, "--visibility")
}

_gh_destructive(ops, a) if {
	array.slice(ops, 0, 2) == ["repo", "edit"]
	"--visibility" in a
}

_gh_destructive(ops, a) if {
	array.slice(ops, 0, 2) == ["pr", "merge"]
	"--admin" in a
}

_gh_destructive(ops, a) if {
	ops[0] == "api"
	some m in args.option_values(a, "-X", "--method")
	upper(m) == "DELETE"
	not _gh_reversible_delete(ops)
}

# Taking a label, an assignee or a review request off an issue or pull
# request is undone by putting it back: bots do it all day.
_gh_reversible_delete(ops) if {
	some op in array.slice(ops, 1, count(ops))
	regex.match(`^/?repos/.+/(issues|pulls)/[^/]+/(labels(/[^/]+)?|assignees|requested_reviewers)$`, op)
}
