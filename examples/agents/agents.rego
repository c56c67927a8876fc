# METADATA
# title: One policy, two agents treated differently
# description: |
#   Codex runs unattended here, so it may not reach the network at all;
#   Claude Code works next to a person, so it may fetch but may not write
#   outside the workspace. Every other agent gets neither rule. The agent
#   comes from input.ahp.agent, set by `ahp-opa hook AGENT`.
package ahp.tool.before.agents

_network_programs := {"curl", "wget", "nc", "ssh", "scp", "rsync"}

deny contains {
	"reason": "Codex runs without a person here and may not reach the network; vendor what you need or ask for it in the task.",
	"code": "com.example.agents.codex-offline",
} if {
	input.ahp.agent == "codex"
	input.ahp.tool.family == "fetch"
}

deny contains {
	"reason": sprintf("Codex runs without a person here and may not reach the network (%s).", [name]),
	"code": "com.example.agents.codex-offline",
} if {
	input.ahp.agent == "codex"
	some name, _ in input.ahp.shell.programs
	name in _network_programs
}

deny contains {
	"reason": sprintf("Claude Code may only write inside the workspace; %s is outside it.", [p.path]),
	"code": "com.example.agents.claude-workspace-only",
} if {
	input.ahp.agent == "claude-code"
	input.ahp.tool.family in {"file_write", "file_edit"}
	some p in input.ahp.tool.paths
	p.outside_workspace
}
