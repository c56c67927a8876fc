package ahp.tool.before.team_test

import data.ahp.tool.before.builtin

# These tests check how data.json changes the built-in library, so they need
# it loaded: run them with `ahp-opa test --with-builtin examples/policy`.

no_verify := event({"shell": {"command": "git commit --no-verify -m wip", "commands": [{"args": ["commit", "--no-verify", "-m", "wip"], "argv": ["git", "commit", "--no-verify", "-m", "wip"], "depth": 0, "name": "git", "parent": -1, "paths": [{"arg": 0, "base": "commit", "home_rel": "repo/commit", "inside_workspace": true, "path": "/home/dev/repo/commit", "raw": "commit"}, {"arg": 3, "base": "wip", "home_rel": "repo/wip", "inside_workspace": true, "path": "/home/dev/repo/wip", "raw": "wip"}], "via": ""}], "programs": {"git": [0]}}, "tool": {"family": "shell", "name": "Bash"}, "version": 1, "workspace": {"cwd": "/home/dev/repo", "home": "/home/dev", "roots": ["/home/dev/repo"]}})

scratch_clean := event({"shell": {"command": "rm -rf ~/scratch/old-build", "commands": [{"args": ["-rf", "~/scratch/old-build"], "argv": ["rm", "-rf", "~/scratch/old-build"], "depth": 0, "name": "rm", "parent": -1, "paths": [{"arg": 1, "base": "old-build", "home_rel": "scratch/old-build", "outside_workspace": true, "path": "/home/dev/scratch/old-build", "raw": "~/scratch/old-build"}], "via": ""}], "programs": {"rm": [0]}}, "tool": {"family": "shell", "name": "Bash"}, "version": 1, "workspace": {"cwd": "/home/dev/repo", "home": "/home/dev", "roots": ["/home/dev/repo"]}})

codes(d) := {x.code | some x in d}

test_disabled_builtin_rule if {
	# data.json disables dev.ahp-opa.git.no-verify …
	d := builtin.deny with input as no_verify
	count(d) == 0

	# … which would deny this commit otherwise.
	d2 := builtin.deny with input as no_verify with data.ahp_opa.config as {}
	codes(d2) == {"dev.ahp-opa.git.no-verify"}
}

test_path_exception if {
	# ~/scratch/** is an exception, so cleaning it is allowed …
	d := builtin.deny with input as scratch_clean
	count(d) == 0

	# … while without it the delete is outside the workspace.
	d2 := builtin.deny with input as scratch_clean with data.ahp_opa.config as {}
	codes(d2) == {"dev.ahp-opa.fs.rm-recursive-outside-workspace"}
}

test_protected_branches_parameter if {
	# With protected_branches ["main", "release/*"], force-pushing a
	# feature branch is allowed and main is not.
	count(builtin.deny) == 0 with input as push("feature/x")
	d := builtin.deny with input as push("main")
	codes(d) == {"dev.ahp-opa.git.force-push"}
}

# A hand-written input: only what the git rules read.
push(branch) := {"ahp": {"shell": {
	"programs": {"git": [0]},
	"commands": [{"name": "git", "args": ["push", "-f", "origin", branch], "depth": 0, "parent": -1, "via": ""}],
}}}
