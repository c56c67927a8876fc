package ahp.tool.before.builtin_test

# dev.ahp-opa.git.force-push

test_force_push_denied if {
	every c in [
		"git push --force",
		"git push origin main --force",
		"git push -f origin main",
		"git push -fu origin feature",
		"git push -uf origin feature",
		"git push origin +main",
		"git push origin +HEAD:refs/heads/main",
		"git push --force-with-lease origin +main",
		"git push --mirror backup",
		# Branch names with a slash are branches too: the default * covers them.
		"git push --force origin feature/login-form",
		`git push -f "https://bot:${TOKEN}@git.example.org/team/app.git" "bump/$NEXT"`,
	] {
		denied_only(bash(c), "dev.ahp-opa.git.force-push")
	}
}

test_force_push_evasions_denied if {
	every c in [
		"git -C /home/dev/repo push --force",
		"git -c push.default=current push -f",
		"git add . && git commit -m wip && git push -f",
		"/usr/bin/git push --force origin main",
		"g''it push -f",
		`bash -c "git push --force"`,
		"GIT_TRACE=1 git push -f",
		"timeout 60 git push -f",
	] {
		denies(bash(c), "dev.ahp-opa.git.force-push")
	}
	denies(gemini("git push --force origin main"), "dev.ahp-opa.git.force-push")
	denies(codex(["git", "push", "-f"]), "dev.ahp-opa.git.force-push")
	denies(codex(["bash", "-lc", "git fetch && git push origin +main"]), "dev.ahp-opa.git.force-push")
	denies(codex_exec("git push --force"), "dev.ahp-opa.git.force-push")
}

test_force_push_lookalikes_allowed if {
	every c in [
		"git push",
		"git push --force-with-lease",
		"git push --force-with-lease=feature:abc123 origin feature",
		"git push --force-with-lease --force-if-includes origin feature",
		"git push -u origin feature-f",
		"git fetch -f origin",
		"git add -f build/out.txt",
		"git add -f dist/ && git push origin feature",
		`git commit -m "never git push --force" && git push`,
		`echo "git push -f"`,
		"git push -o ci.skip origin feature",
	] {
		lookalike_allowed(bash(c), "dev.ahp-opa.git.force-push")
	}

	# --follow-tags pushes tags, the push-protected rule's, and forces nothing.
	denied_only(bash("git push --follow-tags origin feature"), "dev.ahp-opa.git.push-protected")

	# Plain pushes to main are the push-protected rule's.
	not denies(bash("git push --force-with-lease=main:abc123 origin main"), "dev.ahp-opa.git.force-push")
	not denies(bash("git push -o ci.skip origin main"), "dev.ahp-opa.git.force-push")
}

test_force_push_protected_branches if {
	cfg := {"protected_branches": ["main", "release/*"]}
	codes_with(bash("git push -f origin feature"), cfg) == set()
	codes_with(bash("git push origin +feature/x"), cfg) == set()
	codes_with(bash("git push -f origin main"), cfg) == {"dev.ahp-opa.git.force-push"}
	codes_with(bash("git push -f origin HEAD:release/1.2"), cfg) == {"dev.ahp-opa.git.force-push"}
	codes_with(bash("git push -f"), cfg) == {"dev.ahp-opa.git.force-push"}
}

# dev.ahp-opa.git.discard-work

test_discard_work_denied if {
	every c in [
		"git reset --hard",
		"git reset --hard HEAD~3",
		"git clean -fdx",
		"git clean -f",
		"git clean --force -d",
		"git checkout -- .",
		"git checkout .",
		"git checkout HEAD -- .",
		"git restore .",
		"git restore --staged --worktree .",
		"git stash drop",
		"git stash clear",
	] {
		denied_only(bash(c), "dev.ahp-opa.git.discard-work")
	}
}

test_discard_work_evasions_denied if {
	denies(bash("git -C ~/repo reset --hard origin/main"), "dev.ahp-opa.git.discard-work")
	denies(bash("git fetch && git reset --hard @{u}"), "dev.ahp-opa.git.discard-work")
	denies(bash(`sh -c "git clean -xdf"`), "dev.ahp-opa.git.discard-work")
	denies(codex(["git", "reset", "--hard"]), "dev.ahp-opa.git.discard-work")
	denies(bash("G=git; $G reset --hard"), "dev.ahp-opa.git.discard-work")
}

test_discard_work_lookalikes_allowed if {
	every c in [
		"git reset",
		"git reset --soft HEAD~1",
		"git reset HEAD file.txt",
		"git clean -n",
		"git clean -nfd",
		"git clean --dry-run -f",
		"git clean -fdX",
		"git clean -X -f -d",
		"git checkout main",
		"git checkout -- src/file.go",
		"git restore --staged .",
		"git restore src/file.go",
		"git stash",
		"git stash pop",
		"git stash list",
		`git commit -m "git reset --hard fixes it"`,
	] {
		lookalike_allowed(bash(c), "dev.ahp-opa.git.discard-work")
	}
}

# dev.ahp-opa.git.rewrite-history

test_rewrite_history_denied if {
	every c in [
		"git filter-branch --tree-filter 'rm -f secrets.txt' HEAD",
		"git filter-repo --path secrets.txt --invert-paths",
		"git reflog expire --expire=now --all",
		"git reflog delete HEAD@{1}",
		"git gc --prune=now",
		"git update-ref -d refs/heads/main",
		"bfg --delete-files id_rsa",
		"java -jar bfg-1.14.0.jar --strip-blobs-bigger-than 10M",
	] {
		denied_only(bash(c), "dev.ahp-opa.git.rewrite-history")
	}
}

test_rewrite_history_evasions_denied if {
	denies(bash("git -c core.pager=cat filter-branch -f HEAD"), "dev.ahp-opa.git.rewrite-history")
	denies(bash("git reflog expire --all && git gc --prune=now --aggressive"), "dev.ahp-opa.git.rewrite-history")
	denies(codex(["bash", "-lc", "git filter-repo --force"]), "dev.ahp-opa.git.rewrite-history")
}

test_rewrite_history_lookalikes_allowed if {
	lookalike_allowed(bash("git reflog"), "dev.ahp-opa.git.rewrite-history")
	lookalike_allowed(bash("git reflog show main"), "dev.ahp-opa.git.rewrite-history")
	lookalike_allowed(bash("git gc"), "dev.ahp-opa.git.rewrite-history")
	lookalike_allowed(bash("git update-ref refs/heads/tmp HEAD"), "dev.ahp-opa.git.rewrite-history")
	lookalike_allowed(bash("git log --all --oneline | grep filter-branch"), "dev.ahp-opa.git.rewrite-history")
	lookalike_allowed(bash("git revert HEAD"), "dev.ahp-opa.git.rewrite-history")

	# a report of the history, or a rewrite shown and not done
	lookalike_allowed(bash("git filter-repo --analyze"), "dev.ahp-opa.git.rewrite-history")
	lookalike_allowed(bash("git-filter-repo --dry-run --path docs --invert-paths"), "dev.ahp-opa.git.rewrite-history")
	denies(bash("git-filter-repo --path docs --invert-paths --force"), "dev.ahp-opa.git.rewrite-history")
	denies(bash("git filter-branch --analyze HEAD"), "dev.ahp-opa.git.rewrite-history")
}

# dev.ahp-opa.git.no-verify

test_no_verify_denied if {
	every c in [
		"git commit --no-verify -m wip",
		"git commit -n -m wip",
		"git commit -nm wip",
		"git commit -anm wip",
		"git push --no-verify",
		"git merge --no-verify feature",
		"git -c core.hooksPath=/dev/null commit -m x",
		"git config core.hooksPath /dev/null",
		"git config core.hooksPath ''",
		"git config --global core.hooksPath /tmp/nohooks",
		"git -c core.hooksPath=~/empty commit -m x",
		"HUSKY=0 git commit -m x",
		"SKIP=lint git commit -m x",
	] {
		denied_only(bash(c), "dev.ahp-opa.git.no-verify")
	}
}

test_no_verify_evasions_denied if {
	denies(bash("git add -A && git commit --no-verify -m x && git push"), "dev.ahp-opa.git.no-verify")
	denies(bash("env HUSKY=0 git commit -m x"), "dev.ahp-opa.git.no-verify")
	denies(bash(`bash -c 'git commit -n -m "x"'`), "dev.ahp-opa.git.no-verify")
	denies(codex(["git", "commit", "--no-verify", "-m", "x"]), "dev.ahp-opa.git.no-verify")
}

test_no_verify_lookalikes_allowed if {
	every c in [
		"git commit -m 'add -n flag'",
		"git commit -m -n",
		"git commit -mn",
		`git commit -m "skip --no-verify"`,
		"git config core.hooksPath",
		"git config --unset core.hooksPath",
		"git log -n 5",
		"git push -n origin main",
		"HUSKY=1 git commit -m x",
		"git config core.hooksPath .husky/_",
		"git config core.hooksPath .githooks",
		"git -c core.hooksPath=/home/dev/repo/.githooks commit -m x",
		`git config core.hooksPath "$(git rev-parse --show-toplevel)/.githooks"`,
	] {
		lookalike_allowed(bash(c), "dev.ahp-opa.git.no-verify")
	}
}

# Abbreviated and destructive push spellings.

test_force_push_abbreviations_denied if {
	every c in [
		"git push --forc origin main",
		"git push --for origin main",
		"git push --mir backup",
		"git push -f https://github.com/org/app.git HEAD:main",
	] {
		denies(bash(c), "dev.ahp-opa.git.force-push")
	}
}

# dev.ahp-opa.git.push-delete

test_push_delete_denied if {
	every c in [
		"git push origin :main",
		"git push origin :refs/heads/production",
		"git push origin --delete release",
		"git push origin --del main",
		"git push -d origin main",
		"git push --prune origin refs/heads/*:refs/heads/*",
		"git push origin :refs/tags/v1.0.0",
	] {
		denied_only(bash(c), "dev.ahp-opa.git.push-delete")
	}
}

test_push_delete_lookalikes_allowed if {
	every c in [
		"git push origin feature/x",
		"git push origin HEAD:feature/x",
		"git branch -d feature/x",
		"git fetch --prune",
		"git remote prune origin",
	] {
		lookalike_allowed(bash(c), "dev.ahp-opa.git.push-delete")
	}
	codes_with(bash("git push origin --delete feature/x"), {"protected_branches": ["main"]}) == set()
	lookalike_allowed(bash("git tag -d v1.0.0-rc1"), "dev.ahp-opa.git.push-delete")
}

test_push_delete_evasions_denied if {
	denies(codex(["git", "push", "origin", ":main"]), "dev.ahp-opa.git.push-delete")
	denies(bash(`bash -c "git push --delete origin release"`), "dev.ahp-opa.git.push-delete")
	denies(bash("git -C /home/dev/repo push origin --del production"), "dev.ahp-opa.git.push-delete")
}

# A reason quotes the evidence whole: the remote and the branch pushed,
# the option that skips the hooks.
test_git_reasons_quote_the_evidence if {
	some d in denials(bash("git push --force origin main"))
	startswith(d.reason, "denied by git.force-push: git push --force origin main. ")
	some e in denials(bash("git commit --no-verify -m wip"))
	startswith(e.reason, "denied by git.no-verify: git commit --no-verify. ")
	some f in denials(bash("HUSKY=0 git commit -m wip"))
	startswith(f.reason, "denied by git.no-verify: HUSKY=0 git. ")
}

# Switching branches with local changes thrown away.
test_discard_work_on_switch if {
	denies(bash("git switch --discard-changes main"), "dev.ahp-opa.git.discard-work")
	denies(bash("git checkout -f main"), "dev.ahp-opa.git.discard-work")
	allowed(bash("git switch -c feature/x"))
	allowed(bash("git checkout -b fix"))
	allowed(bash("git switch main"))
}
