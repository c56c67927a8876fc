package ahp.tool.before.builtin_test

# Structured MCP tools that act remotely are judged as the CLI that does
# the same (input.ahp.tool.equivalent): the rules of gh, git and kubectl
# apply to the GitHub and Kubernetes servers' tools.

test_remote_mcp_tools_denied if {
	denies(mcp("github", "merge_pull_request", {"owner": "acme", "repo": "api", "pullNumber": 42}), "dev.ahp-opa.gh.pr-merge")
	denies(mcp("github", "push_files", {"owner": "acme", "repo": "api", "branch": "main", "files": [{"path": "a.txt", "content": "x"}], "message": "m"}), "dev.ahp-opa.git.push-protected")
	denies(mcp("github", "create_or_update_file", {"owner": "acme", "repo": "api", "path": "README.md", "content": "x", "message": "m"}), "dev.ahp-opa.git.push-protected")
	denies(mcp("github", "delete_repository", {"owner": "acme", "repo": "api"}), "dev.ahp-opa.gh.destructive")
	denies(mcp("github", "run_workflow", {"owner": "acme", "repo": "api", "workflow_id": "deploy.yml", "ref": "main"}), "dev.ahp-opa.gh.workflow-run")
	denies(mcp("kubernetes", "resources_delete", {"apiVersion": "v1", "kind": "Namespace", "name": "prod"}), "dev.ahp-opa.infra.teardown")
	denies(mcp("kubernetes", "helm_uninstall", {"name": "api", "namespace": "prod"}), "dev.ahp-opa.infra.teardown")
}

test_remote_mcp_tools_evasions_denied if {
	# Field values never become shell syntax of their own.
	denies(mcp("github", "delete_repository", {"owner": "acme", "repo": "api; echo ok"}), "dev.ahp-opa.gh.destructive")
	denies(mcp("gh", "update_repository", {"owner": "acme", "repo": "api", "private": false}), "dev.ahp-opa.gh.destructive")
}

test_remote_mcp_tools_lookalikes_allowed if {
	allowed(mcp("github", "push_files", {"owner": "acme", "repo": "api", "branch": "feat/login", "files": [], "message": "m"}))
	allowed(mcp("github", "get_pull_request", {"owner": "acme", "repo": "api", "pullNumber": 42}))
	allowed(mcp("filesystem", "delete_file", {"path": "/home/dev/repo/tmp.txt"}))
	allowed(mcp("kubernetes", "pods_list", {"namespace": "prod"}))
}
