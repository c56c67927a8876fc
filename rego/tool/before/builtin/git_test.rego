package ahp.tool.before.builtin_test

test_git_push_force_denied if {
	denied_only(bash("git push --force"), push_code)
	denied_only(bash("git push origin main --force"), push_code)
	denied_only(bash("git push -f origin main"), push_code)
}

test_git_push_short_flag_cluster_denied if {
	denied_only(bash("git push -fu origin feature"), push_code)
	denied_only(bash("git push -uf origin feature"), push_code)
}

test_git_push_plus_refspec_denied if {
	denied_only(bash("git push origin +main"), push_code)
	denied_only(bash("git push origin +HEAD:refs/heads/main"), push_code)
	denied_only(bash("git push --force-with-lease origin +main"), push_code)
}

test_git_push_force_with_global_options_and_chains_denied if {
	denied_only(bash("git -C /repo push --force"), push_code)
	denied_only(bash("git -c push.default=current push -f"), push_code)
	denied_only(bash("git add . && git commit -m wip && git push -f"), push_code)
	denied_only(bash("  git   push   --force  "), push_code)
	denied_only(bash("/usr/bin/git push --force origin main"), push_code)
}

test_git_push_force_other_harnesses_denied if {
	denied_only(gemini("git push --force origin main"), push_code)
	denied_only(codex(["git", "push", "-f"]), push_code)
	denied_only(codex(["bash", "-lc", "git fetch && git push origin +main"]), push_code)
	denied_only(codex_exec("git push --force"), push_code)
}

test_git_push_force_with_lease_allowed if {
	allowed(bash("git push --force-with-lease"))
	allowed(bash("git push --force-with-lease=main:abc123 origin main"))
	allowed(bash("git push --force-with-lease --force-if-includes origin feature"))
}

test_git_push_plain_allowed if {
	allowed(bash("git push"))
	allowed(bash("git push -u origin feature-f"))
	allowed(bash("git push --follow-tags origin main"))
	allowed(bash("git push origin v1.0.0"))
}

test_git_force_outside_push_allowed if {
	allowed(bash("git fetch -f origin"))
	allowed(bash("git checkout -f main"))
	allowed(bash("git add -f dist/ && git push origin main"))
	allowed(bash(`git commit -m "never git push --force" && git push`))
	allowed(bash(`echo "git push -f"`))
}
