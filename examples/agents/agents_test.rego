package ahp.tool.before.agents_test

import data.ahp.tool.before.agents

codes(doc) := {d.code | some d in agents.deny with input as doc}

fetch(agent) := {"ahp": {"agent": agent, "tool": {"family": "fetch"}}}

shell(agent, program) := {"ahp": {"agent": agent, "tool": {"family": "shell"}, "shell": {"programs": {program: [0]}}}}

write(agent, path, outside) := {"ahp": {
	"agent": agent,
	"tool": {"family": "file_write", "paths": [object.union({"path": path}, {k: true | outside; some k in {"outside_workspace"}})]},
}}

test_codex_fetch_denied if {
	codes(fetch("codex")) == {"com.example.agents.codex-offline"}
}

test_codex_curl_denied if {
	codes(shell("codex", "curl")) == {"com.example.agents.codex-offline"}
}

test_codex_build_allowed if {
	codes(shell("codex", "go")) == set()
}

test_claude_fetch_allowed if {
	codes(fetch("claude-code")) == set()
}

test_claude_curl_allowed if {
	codes(shell("claude-code", "curl")) == set()
}

test_claude_write_outside_denied if {
	codes(write("claude-code", "/etc/hosts", true)) == {"com.example.agents.claude-workspace-only"}
}

test_claude_write_inside_allowed if {
	codes(write("claude-code", "/repo/main.go", false)) == set()
}

test_codex_write_outside_not_this_rule if {
	codes(write("codex", "/tmp/out", true)) == set()
}

test_plain_ahp_harness_untouched if {
	codes({"ahp": {"tool": {"family": "fetch"}}}) == set()
}
