package ahp.tool.before.builtin_test

# dev.ahp-opa.gh.destructive

test_gh_destructive_denied if {
	every c in [
		"gh repo delete org/app --yes",
		"gh repo archive org/app",
		"gh repo edit --visibility public",
		"gh release delete v1.0.0",
		"gh secret delete TOKEN",
		"gh issue delete 12",
		"gh api -X DELETE repos/org/app",
		"gh api --method delete /repos/org/app/branches/main/protection",
		"gh workflow disable ci.yml",
	] {
		denied_only(bash(c), "dev.ahp-opa.gh.destructive")
	}
}

test_gh_destructive_evasions_denied if {
	denies(bash("GH_TOKEN=x gh repo delete org/app --yes"), "dev.ahp-opa.gh.destructive")
	denies(bash(`bash -c "gh api -XDELETE repos/org/app"`), "dev.ahp-opa.gh.destructive")
	denies(bash("gh -R org/app release delete v1 -y"), "dev.ahp-opa.gh.destructive")
	denies(codex(["gh", "repo", "delete", "org/app"]), "dev.ahp-opa.gh.destructive")
	denies(bash("gh pr merge 5 --admin --squash"), "dev.ahp-opa.gh.destructive")
}

test_gh_destructive_lookalikes_allowed if {
	every c in [
		"gh repo view",
		"gh pr create --fill",
		"gh issue list",
		"gh api repos/org/app",
		"gh api -X GET repos/org/app/pulls",
		"gh release view v1",
		"gh repo edit --description x",
	] {
		lookalike_allowed(bash(c), "dev.ahp-opa.gh.destructive")
	}

	# A merge is the gh.pr-merge rule's, not a destructive call.
	not denies(bash("gh pr merge 5 --squash"), "dev.ahp-opa.gh.destructive")
}
