package ahp.tool.before.builtin_test

# dev.ahp-opa.mcp.not-allowlisted

test_mcp_not_allowlisted_denied if {
	cfg := {"mcp_allowlist": ["github/*", "*/search_*"]}
	codes_with(mcp("slack", "post_message", {"text": "hi"}), cfg) == {"dev.ahp-opa.mcp.not-allowlisted"}
	codes_with(mcp("filesystem", "write_file", {"path": "x"}), cfg) == {"dev.ahp-opa.mcp.not-allowlisted"}
	codes_with(mcp("gitlab", "create_issue", {}), cfg) == {"dev.ahp-opa.mcp.not-allowlisted"}
}

test_mcp_not_allowlisted_empty_list_denies_all if {
	codes_with(mcp("github", "get_issue", {}), {"mcp_allowlist": []}) == {"dev.ahp-opa.mcp.not-allowlisted"}
	d := builtin_deny_with(mcp("github", "get_issue", {}), {"mcp_allowlist": []})
	some x in d
	contains(x.reason, "github/get_issue")
}

test_mcp_not_allowlisted_allowed if {
	cfg := {"mcp_allowlist": ["github/*", "*/search_*"]}
	codes_with(mcp("github", "create_issue", {}), cfg) == set()
	codes_with(mcp("docs", "search_pages", {}), cfg) == set()
	codes_with(tool("Read", {"file_path": "/home/dev/repo/x"}), cfg) == set()
	codes_with(bash("ls"), cfg) == set()

	# Without an allowlist, MCP tools are not restricted.
	lookalike_allowed(mcp("slack", "post_message", {"text": "hi"}), "dev.ahp-opa.mcp.not-allowlisted")
}

test_mcp_tool_exception if {
	evt := mcp("postgres", "query", {"sql": "DROP TABLE scratch"})
	"dev.ahp-opa.db.destructive-statement" in codes(evt)
	codes_with(evt, {"exceptions": {"mcp_tools": ["postgres/*"]}}) == set()
	codes_with(evt, {"exceptions": {"mcp_tools": ["mysql/*"]}}) == {"dev.ahp-opa.db.destructive-statement"}
}

builtin_deny_with(evt, cfg) := d if {
	d := data.ahp.tool.before.builtin.deny with input as evt with data.ahp_opa.config as cfg
}
