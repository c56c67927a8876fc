package ahp.tool.before.builtin_test

# Everyday commands from public projects that the library once denied
# (rego/corpus/realworld-*.jsonl), each next to the dangerous form its rule
# still denies.

# dev.ahp-opa.secrets.credential-file: a key a command creates is written,
# not read.

test_generated_test_key_allowed if {
	every c in [
		"openssl req -x509 -newkey rsa:4096 -keyout key.pem -out cert.pem -days 365 -nodes",
		"openssl genrsa -out testdata/server.key 2048",
		"openssl req -new -newkey rsa:4096 -x509 -sha256 -days 365 -nodes -out cert.pem -keyout key.pem",
	] {
		lookalike_allowed(bash(c), "dev.ahp-opa.secrets.credential-file")
	}
}

test_reading_a_key_denied if {
	denies(bash("openssl rsa -in deploy/server.key -text"), "dev.ahp-opa.secrets.credential-file")
	denies(bash("sort -o /tmp/out ~/.aws/credentials"), "dev.ahp-opa.secrets.credential-file")
}

# dev.ahp-opa.secrets.env-dump: a secret piped into a login that reads it
# on stdin, and a test of a secret inside $(…), print nothing. Storing the
# password is a credential write of its own (effect.config-change,
# approvable), so the logins are only checked not to count as a dump.

test_secret_into_password_stdin_allowed if {
	every c in [
		`echo "$CR_PAT" | docker login ghcr.io -u USERNAME --password-stdin`,
		`echo "${DOCKER_PASSWORD}" | docker login -u "${DOCKER_USERNAME}" --password-stdin`,
		`printf '%s' "$GITHUB_TOKEN" | helm registry login ghcr.io -u me --password-stdin`,
		`echo "$GH_TOKEN" | gh auth login --with-token`,
	] {
		not denies(bash(c), "dev.ahp-opa.secrets.env-dump")
	}
	lookalike_allowed(bash(`echo "token_set=$([ -n "$NPM_TOKEN" ] && echo yes || echo no)"`), "dev.ahp-opa.secrets.env-dump")
	denied_only(bash(`echo "$CR_PAT" | docker login ghcr.io -u USERNAME --password-stdin`), "dev.ahp-opa.effect.config-change")
}

test_secret_printed_next_to_login_denied if {
	every c in [
		`echo "$CR_PAT" | tee /dev/stderr | docker login ghcr.io -u me --password-stdin`,
		`echo "$CR_PAT"; docker login ghcr.io -u me --password-stdin`,
		`echo "$CR_PAT" | docker login ghcr.io -u me`,
		`echo "$(echo $GITHUB_TOKEN)"`,
		`echo "token=$GITHUB_TOKEN $(date)"`,
	] {
		denies(bash(c), "dev.ahp-opa.secrets.env-dump")
	}
}

# dev.ahp-opa.infra.teardown: docker image prune alone removes only
# dangling layers.

test_docker_image_prune_dangling_allowed if {
	lookalike_allowed(bash("docker image prune -f"), "dev.ahp-opa.infra.teardown")
	lookalike_allowed(bash("docker image prune"), "dev.ahp-opa.infra.teardown")
}

test_docker_image_prune_all_denied if {
	denies(bash("docker image prune -af"), "dev.ahp-opa.infra.teardown")
	denies(bash("docker image prune --all --force"), "dev.ahp-opa.infra.teardown")
	denies(bash("docker system prune -f"), "dev.ahp-opa.infra.teardown")
}

# dev.ahp-opa.git.rewrite-history: asking a history tool for its usage
# rewrites nothing.

test_history_tool_help_allowed if {
	lookalike_allowed(bash("git filter-branch --help"), "dev.ahp-opa.git.rewrite-history")
	lookalike_allowed(bash("git filter-repo -h"), "dev.ahp-opa.git.rewrite-history")
}

test_history_tool_run_denied if {
	denies(bash("git filter-branch --index-filter 'git rm --cached secrets.txt' HEAD"), "dev.ahp-opa.git.rewrite-history")
	denies(bash("git filter-repo --path secrets.txt --invert-paths"), "dev.ahp-opa.git.rewrite-history")
}

# dev.ahp-opa.gh.destructive: taking a label off a pull request is undone
# by putting it back.

test_gh_api_remove_label_allowed if {
	lookalike_allowed(bash(`gh api --method DELETE "repos/astral-sh/uv/issues/123/labels/bot%3Arebase" --silent`), "dev.ahp-opa.gh.destructive")
	lookalike_allowed(bash("gh api -X DELETE repos/org/app/pulls/7/requested_reviewers -f 'reviewers[]=octocat'"), "dev.ahp-opa.gh.destructive")
	lookalike_allowed(bash(`gh api --method DELETE "repos/$GITHUB_REPOSITORY/issues/$PR/labels/bot%3Arebase" --silent`), "dev.ahp-opa.gh.destructive")
}

test_gh_api_delete_content_denied if {
	denies(bash("gh api -X DELETE repos/org/app/issues/comments/99"), "dev.ahp-opa.gh.destructive")
	denies(bash("gh api -X DELETE repos/org/app/git/refs/heads/main"), "dev.ahp-opa.gh.destructive")
	denies(bash("gh api -X DELETE repos/org/app/labels/bug"), "dev.ahp-opa.gh.destructive")
}
