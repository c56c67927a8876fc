package ahp.tool.before.builtin

import data.ahp.lib.args
import data.ahp.lib.config
import data.ahp.lib.local
import data.ahp.lib.paths
import input.ahp.shell.programs

# _git holds {"command": index, "sub": name, "args": rest, "global": options
# before the subcommand} for every git command line.
_git contains {"command": j, "sub": cmd.args[i], "args": array.slice(cmd.args, i + 1, count(cmd.args)), "global": array.slice(cmd.args, 0, i)} if {
	programs.git
	some j in programs.git
	cmd := input.ahp.shell.commands[j]
	cmd.name == "git"
	i := min({j | some j, a in cmd.args; not _git_global_option(cmd.args, j)})
}

_git_global_option(a, i) if startswith(a[i], "-")

# git options placed before the subcommand that take a separate value.
_git_global_option(a, i) if {
	i > 0
	a[i - 1] in {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--exec-path", "--super-prefix"}
}

# METADATA
# title: Force push
# description: |
#   Denies git push with --force, -f (alone or in a cluster such as -fu),
#   --mirror or a +refspec (git push origin +main) to a protected branch:
#   by default every branch (protected_branches: ["*"]). A push whose
#   target cannot be told (no refspec, HEAD) counts as protected.
#   --force-with-lease (with or without --force-if-includes) is allowed,
#   since it refuses to overwrite work it has not seen.
# custom:
#   severity: high
#   code: dev.ahp-opa.git.force-push
violation contains {
	"reason": concat(" ", [
		"Blocked `git push` with --force, -f or a +refspec; it can overwrite other people's commits on the remote.",
		"Use `git push --force-with-lease` instead, or push without forcing.",
	]),
	"code": "dev.ahp-opa.git.force-push",
	"trigger": trim_space(concat(" ", ["git push --force", _remote_of(g.args), target])),
} if {
	programs.git
	some g in _git
	not local.command(g.command)
	g.sub == "push"
	some target in _forced_targets(g.args)
	_protected(target)
}

# _remote_of names the remote a push goes to, "" when it names none.
_remote_of(a) := ops[0] if {
	ops := args.operands(a)
	count(ops) > 0
} else := ""

# _forced_targets lists the branches a push overwrites: every refspec when
# the push is forced, the + refspecs otherwise; "" stands for the branch
# an unnamed push goes to.
_forced_targets(a) := ts if {
	_forced(a)
	refspecs := array.slice(args.operands(a), 1, 1000)
	ts := _targets(refspecs)
}

_forced_targets(a) := [_target(r) | some r in array.slice(args.operands(a), 1, 1000); startswith(r, "+")] if not _forced(a)

_targets(refspecs) := [""] if count(refspecs) == 0

_targets(refspecs) := [_target(r) | some r in refspecs] if count(refspecs) > 0

_target(refspec) := t if {
	spec := trim_prefix(refspec, "+")
	parts := split(spec, ":")
	t := trim_prefix(parts[count(parts) - 1], "refs/heads/")
}

# git accepts abbreviated long options. Abbreviations of --force are
# ambiguous with --force-with-lease, and git refuses them, but an agent that
# types --forc means to force: they count, as do --mi(rror).
_forced(a) if {
	some o in args.options(a)
	count(o) >= 5
	startswith("--force", o)
}

_forced(a) if args.has_long_flag(a, "--mirror", 4)

_forced(a) if "f" in args.short_flags(a, {"o"})

_protected(target) if target in {"", "HEAD", "--all"}

_protected(target) if config.protected_branch(target)

# A tag named in full is a release others install from, whatever the
# branch globs say (git push origin :refs/tags/v1.0.0).
_protected(target) if startswith(target, "refs/tags/")

# METADATA
# title: Deleting remote branches
# description: |
#   Denies git push that deletes branches or tags on the remote: an empty
#   source (git push origin :main), --delete / -d (and abbreviations such
#   as --del), and --prune, when a deleted branch is protected (by default
#   every branch, protected_branches: ["*"]) or the ref is a tag
#   (refs/tags/…).
# custom:
#   severity: high
#   code: dev.ahp-opa.git.push-delete
violation contains {
	"reason": concat(" ", [
		"Blocked deleting a branch or tag on the remote with git push; others may still need it, and the remote keeps no reflog.",
		"Leave remote branches in place, or ask the user to delete them (e.g. after the pull request is merged).",
	]),
	"code": "dev.ahp-opa.git.push-delete",
	"trigger": concat(" ", ["git push --delete", target]),
} if {
	programs.git
	some g in _git
	not local.command(g.command)
	g.sub == "push"
	some target in _deleted_refs(g.args)
	_protected(target)
}

_deleted_refs(a) := ({_target(r) |
	some r in array.slice(args.operands(a), 1, 1000)
	startswith(r, ":")
	r != ":"
} | {_target(r) |
	_push_deletes(a)
	some r in array.slice(args.operands(a), 1, 1000)
}) | {"--prune" |
	args.has_long_flag(a, "--prune", 4)
}

_push_deletes(a) if args.has_long_flag(a, "--delete", 4)

_push_deletes(a) if "d" in args.short_flags(a, {"o"})

# METADATA
# title: Discarding uncommitted work
# description: |
#   Denies git commands that throw away work that exists nowhere else:
#   git reset --hard, git clean -f (unless -n, or -X, which removes only
#   ignored files), git checkout -- . or
#   git checkout . (the whole tree), git restore of the whole tree (without
#   only --staged), git switch --discard-changes, git switch -f and git
#   checkout -f, git stash drop and git stash clear.
# custom:
#   severity: high
#   code: dev.ahp-opa.git.discard-work
violation contains {
	"reason": concat(" ", [
		"Blocked a git command that discards uncommitted work (reset --hard, clean -f, checkout/restore of the whole tree, stash drop/clear); it cannot be undone.",
		"Use `git stash push` to set changes aside, or discard specific files after asking the user.",
	]),
	"code": "dev.ahp-opa.git.discard-work",
	"trigger": concat(" ", array.concat(["git", g.sub], array.slice(g.args, 0, 3))),
} if {
	programs.git
	some g in _git
	_discards(g.sub, g.args)
}

_discards("reset", a) if "--hard" in args.options(a)

_discards("clean", a) if {
	_clean_forced(a)
	not _dry_run(a)
	not _ignored_only(a)
}

_discards("checkout", a) if _whole_tree(a)

# Switching with local changes thrown away: git switch --discard-changes,
# git switch -f, git checkout -f BRANCH.
_discards("switch", a) if "--discard-changes" in args.options(a)

_discards("switch", a) if _forced(a)

_discards("checkout", a) if _forced(a)

_forced(a) if "--force" in args.options(a)

_forced(a) if "f" in args.short_flags(a, {"b", "B", "c", "C"})

_discards("restore", a) if {
	_whole_tree(a)
	not _staged_only(a)
}

_discards("stash", a) if args.operands(a)[0] in {"drop", "clear"}

_clean_forced(a) if "f" in args.short_flags(a, {"e"})

_clean_forced(a) if args.has_long_flag(a, "--force", 4)

_dry_run(a) if "n" in args.short_flags(a, {"e"})

# git clean -X removes only what .gitignore names (build output, caches):
# files the project declares regenerable, not work that exists nowhere
# else. -x (lower case) takes untracked work with them and still counts.
_ignored_only(a) if "X" in args.short_flags(a, {"e"})

_dry_run(a) if args.has_long_flag(a, "--dry-run", 4)

_whole_tree(a) if {
	some p in _pathspecs(a)
	p in {".", "*", ":/", ":/*", "./", "./*", ":(top)", ":(glob)**", "**"}
}

# Pathspecs are the operands after "--", or all the operands of restore.
_pathspecs(a) := array.slice(a, i + 1, count(a)) if {
	some i, x in a
	x == "--"
}

_pathspecs(a) := args.operands(a) if not "--" in a

_staged_only(a) if {
	some o in args.options(a)
	o in {"--staged", "-S"}
	not _worktree(a)
}

_worktree(a) if {
	some o in args.options(a)
	o in {"--worktree", "-W"}
}

# METADATA
# title: Rewriting or erasing history
# description: |
#   Denies rewriting history and dropping the safety nets that let lost
#   commits be recovered: git filter-branch, git filter-repo, BFG,
#   git reflog expire/delete, git gc --prune=now, git update-ref -d.
#   git filter-repo --analyze (a report) and --dry-run are allowed.
# custom:
#   severity: high
#   code: dev.ahp-opa.git.rewrite-history
violation contains {
	"reason": concat(" ", [
		"Blocked rewriting or erasing git history (filter-branch, filter-repo, reflog expire, gc --prune=now, update-ref -d); lost commits could not be recovered.",
		"Make new commits instead (e.g. `git revert`), and leave history rewrites to the user.",
	]),
	"code": "dev.ahp-opa.git.rewrite-history",
} if {
	input.ahp.tool.family == "shell"
	_rewrites_history
}

_rewrites_history if {
	programs.git
	some g in _git
	g.sub in {"filter-branch", "filter-repo"}
	not _asks_help(g.args)
	not _rewrite_rehearsed(g.sub, g.args)
}

# filter-repo --analyze only writes a report of the history's sizes and
# names, and --dry-run shows the rewrite without updating any ref.
_rewrite_rehearsed("filter-repo", a) if {
	some x in a
	x in {"--analyze", "--dry-run"}
}

# _asks_help holds for a command that only prints its usage.
_asks_help(a) if {
	some x in a
	x in {"--help", "-h"}
}

_rewrites_history if {
	some i in programs["git-filter-repo"]
	not _rewrite_rehearsed("filter-repo", input.ahp.shell.commands[i].args)
}

_rewrites_history if programs.bfg

_rewrites_history if programs["git-filter-branch"]

_rewrites_history if {
	programs.java
	some i in programs.java
	cmd := input.ahp.shell.commands[i]
	cmd.name == "java"
	some a in cmd.args
	regex.match(`(?i)bfg.*\.jar$`, a)
}

_rewrites_history if {
	programs.git
	some g in _git
	g.sub == "reflog"
	args.operands(g.args)[0] in {"expire", "delete"}
}

_rewrites_history if {
	programs.git
	some g in _git
	g.sub == "gc"
	some o in args.options(g.args)
	o in {"--prune=now", "--prune=all"}
}

_rewrites_history if {
	programs.git
	some g in _git
	g.sub == "update-ref"
	some o in args.options(g.args)
	o in {"-d", "--delete"}
}

# METADATA
# title: Skipping git hooks
# description: |
#   Denies skipping the repository's hooks: --no-verify on commit, push,
#   merge, rebase, am, cherry-pick and revert, git commit -n, pointing
#   core.hooksPath (git -c core.hooksPath=… or git config core.hooksPath)
#   at nothing, /dev/null or a directory outside the workspace (a project
#   folder such as husky's .husky/_ keeps hooks running),
#   and HUSKY=0 / HUSKY_SKIP_HOOKS / SKIP= in front of a git command.
# custom:
#   severity: medium
#   code: dev.ahp-opa.git.no-verify
violation contains {
	"reason": concat(" ", [
		"Blocked skipping git hooks (--no-verify, -n, core.hooksPath, HUSKY=0); the hooks run checks the project requires.",
		"Run the command without skipping hooks and fix what they report.",
	]),
	"code": "dev.ahp-opa.git.no-verify",
	"trigger": trigger,
} if {
	programs.git
	some trigger in _skips_hooks
}

# _skips_hooks names each way the call skips the hooks, as the evidence
# a reason quotes: git commit --no-verify, git -c core.hooksPath=/dev/null.
_skips_hooks contains concat(" ", ["git", g.sub, "--no-verify"]) if {
	some g in _git
	g.sub in {"commit", "push", "merge", "rebase", "am", "cherry-pick", "revert", "pull"}
	"--no-verify" in args.options(g.args)
}

_skips_hooks contains "git commit -n" if {
	some g in _git
	g.sub == "commit"
	"n" in args.short_flags(g.args, {"m", "F", "c", "C", "t"})
}

_skips_hooks contains concat("", ["git -c ", g.global[i + 1]]) if {
	some g in _git
	some i, o in g.global
	o == "-c"
	[key, value] := split(g.global[i + 1], "=")
	lower(key) == "core.hookspath"
	_no_hooks_dir(value)
}

_skips_hooks contains trim_space(concat(" ", ["git config", a, _value_after(g.args, k)])) if {
	some g in _git
	g.sub == "config"
	some k, a in g.args
	lower(a) == "core.hookspath"
	not _config_read(g.args)
	_no_hooks_dir(_value_after(g.args, k))
}

_value_after(a, k) := a[k + 1]

_value_after(a, k) := "" if count(a) == k + 1

# A hooks directory that turns the hooks off: none, /dev/null, or one
# outside the workspace. A project folder (.husky/_, .githooks) is how
# husky and similar tools install hooks, and keeps them running.
_no_hooks_dir(dir) if dir in {"", "/dev/null", "NUL", "nul"}

_no_hooks_dir(dir) if {
	regex.match(`^(/|~|\$)`, dir)
	not _in_workspace_dir(dir)
	not _workspace_relative(dir)
}

# "$(git rev-parse --show-toplevel)/.githooks", "$PWD/hooks": the project.
_workspace_relative(dir) if regex.match(`^(\$\(git rev-parse --show-toplevel\)|\$\{?PWD\}?|\$\(pwd\))(/|$)`, dir)

_in_workspace_dir(dir) if {
	some root in input.ahp.workspace.roots
	paths.within(dir, root)
}

_skips_hooks contains concat("", [name, "=", value, " git"]) if {
	programs.git
	some i in programs.git
	cmd := input.ahp.shell.commands[i]
	cmd.name == "git"
	some name, value in cmd.env
	_hook_skip_env(name, value)
}

_config_read(a) if {
	some o in args.options(a)
	o in {"--get", "--get-all", "--list", "-l", "--unset", "--unset-all"}
}

_config_read(a) if count(args.operands(a)) == 1

_hook_skip_env("HUSKY", "0")

_hook_skip_env("HUSKY_SKIP_HOOKS", _)

_hook_skip_env("SKIP", _)

_hook_skip_env("PRE_COMMIT_ALLOW_NO_CONFIG", _)

_hook_skip_env("LEFTHOOK", "0")
