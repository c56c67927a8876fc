# METADATA
# title: ahp-opa built-in library
# description: |
#   Each built-in rule adds to `violation` an object with a reason for the
#   agent and a stable code. `deny` passes them on, except the codes the
#   user disabled in data.ahp_opa.config.disabled_rules and calls to MCP
#   tools the user exempted (docs/policy.md).
package ahp.tool.before.builtin

import data.ahp.lib.config

deny contains v if {
	some v in violation
	not v.code in config.disabled
	not config.tool_excepted
}
