package ahp.tool.before.builtin

import data.ahp.lib.config

# METADATA
# title: MCP tool outside the allowlist
# description: |
#   Once data.ahp_opa.config.mcp_allowlist is set, denies calls to MCP tools
#   it does not match. Entries are "server/tool" globs: "github/*" allows a
#   whole server, "*/search_*" a tool name on any server. With no allowlist
#   set, MCP tools are not restricted by this rule.
# custom:
#   severity: medium
#   code: dev.ahp-opa.mcp.not-allowlisted
violation contains {
	"reason": concat("", [
		"Blocked the MCP tool ", _mcp_name, " because it is not in the MCP allowlist.",
		" Use an allowed tool, or ask the user to add this one to mcp_allowlist.",
	]),
	"code": "dev.ahp-opa.mcp.not-allowlisted",
	"trigger": trigger,
} if {
	input.ahp.tool.mcp
	config.mcp_allowlist_set
	mcp := input.ahp.tool.mcp
	not config.mcp_allowed(mcp.server, mcp.tool)
	trigger := _mcp_name
}

_mcp_name := concat("/", [input.ahp.tool.mcp.server, input.ahp.tool.mcp.tool])
