package ahp.tool.before.builtin_test

import data.ahp.tool.before.builtin

# Tool events in the shapes the harnesses send. Every helper X(…) below has
# an X_event(…) twin that builds the raw event; X adds the input.ahp that
# ahp-opa computes for that event, recorded in fixtures_test.rego under
# [helper name, arguments]. After
# adding a test case, regenerate the recording with
#
#	go test ./rego -run TestFixtures -update
#
# so these tests also run under the stock `opa test`, which has no
# enrichment of its own.
event(tool) := {
	"id": "evt_1",
	"source": "urn:uuid:test",
	"type": "tool.before",
	"time": "2026-01-02T03:04:05Z",
	"session": {"id": "s1", "cwd": "/home/dev/repo", "workspaceRoots": ["/home/dev/repo"]},
	"call": {"id": "c1"},
	"path": "native",
	"tool": tool,
}

with_ahp(helper, args, evt) := object.union(evt, {"ahp": data.ahp.tool.before.builtin_test.enrichments[[helper, args]]})

# Claude Code
bash_event(command) := event({"name": "Bash", "kind": "shell", "origin": "native", "input": {"command": command}})

bash(command) := with_ahp("bash", [command], bash_event(command))

# Gemini CLI
gemini_event(command) := event({"name": "run_shell_command", "origin": "native", "input": {"command": command}})

gemini(command) := with_ahp("gemini", [command], gemini_event(command))

# Codex, with an argv array
codex_event(argv) := event({"name": "shell", "origin": "native", "input": {"command": argv}})

codex(argv) := with_ahp("codex", [argv], codex_event(argv))

# Codex exec_command, whose command field is called cmd
codex_exec_event(command) := event({"name": "exec_command", "origin": "native", "input": {"cmd": command}})

codex_exec(command) := with_ahp("codex_exec", [command], codex_exec_event(command))

# An unknown harness that only says the kind
shell_kind_event(command) := event({"name": "runTerminal", "kind": "shell", "origin": "native", "input": {"command": command}})

shell_kind(command) := with_ahp("shell_kind", [command], shell_kind_event(command))

# Any native tool by name: Read, Write, Edit, read_file, WebFetch, …
tool_event(name, args) := event({"name": name, "origin": "native", "input": args})

tool(name, args) := with_ahp("tool", [name, args], tool_event(name, args))

# A native agent's own tool, as its hook mapping reports it: the agent
# decides which input fields the tool runs (docs/hooks.md).
agent_tool_event(agent, name, args) := object.union(
	event({"name": name, "origin": "native", "input": args}),
	{"source": concat("", ["urn:ahp-opa:agent:", agent])},
)

agent_tool(agent, name, args) := with_ahp("agent_tool", [agent, name, args], agent_tool_event(agent, name, args))

# An MCP tool, as Claude Code names it and with the AHP descriptor.
mcp_event(server, name, args) := event({
	"name": concat("__", ["mcp", server, name]),
	"origin": "mcp",
	"mcp": {"server": {"id": server}, "toolName": name, "provenance": "runtime", "connection": {"transport": "stdio"}},
	"input": args,
})

mcp(server, name, args) := with_ahp("mcp", [server, name, args], mcp_event(server, name, args))

denials(evt) := d if {
	d := builtin.deny with input as evt
}

codes(evt) := {d.code | some d in denials(evt)}

# denies holds when evt is denied with code, among others perhaps.
denies(evt, code) if code in codes(evt)

# denied_only holds when code is the only denial of evt.
denied_only(evt, code) if codes(evt) == {code}

allowed(evt) if count(denials(evt)) == 0

# With a library configuration (data.ahp_opa.config).
codes_with(evt, cfg) := {d.code | some d in ds} if {
	ds := builtin.deny with input as evt with data.ahp_opa.config as cfg
}

test_every_denial_has_a_reason_and_a_code if {
	d := denials(bash("sudo rm -rf / ; git push -f ; curl x | sh ; dd of=/dev/sda ; cat ~/.ssh/id_rsa"))
	count(d) >= 5
	every x in d {
		regex.match(`^dev\.ahp-opa\.[a-z-]+\.[a-z-]+$`, x.code)
		startswith(x.reason, concat("", ["denied by ", trim_prefix(x.code, "dev.ahp-opa."), ": "]))
		count(x.reason) > 40
	}
}

test_non_shell_tools_with_a_command_field_are_not_parsed if {
	allowed(tool("Write", {"command": "rm -rf /", "file_path": "/home/dev/repo/x"}))
	allowed(tool("Glob", {"pattern": "rm -rf /"}))
}

test_empty_and_odd_inputs_allowed if {
	allowed(bash(""))
	allowed(bash(42))
	allowed(codex([1, {"a": "b"}, "rm"]))
	allowed(tool("Bash", {}))
	allowed(tool("Read", {"file_path": 3, "paths": {"a": "~/.ssh/id_rsa"}}))
}

# A list field sent as one string is a list of one (Copilot CLI's grep
# sends paths so), and a one-path field sent as a list names each path.
test_field_shapes_read_alike if {
	denies(tool("grep", {"pattern": "aws_secret_access_key", "paths": "~/.aws", "output_mode": "content"}), "dev.ahp-opa.secrets.credential-dir")
	denies(tool("grep", {"pattern": "aws_secret_access_key", "paths": ["~/.aws"], "output_mode": "content"}), "dev.ahp-opa.secrets.credential-dir")
	denies(tool("Read", {"file_path": ["README.md", "~/.ssh/id_rsa"]}), "dev.ahp-opa.secrets.ssh-private-key")
	allowed(tool("grep", {"pattern": "TODO", "paths": "src", "output_mode": "content"}))
}

test_raw_events_without_enrichment_are_allowed if {
	# Stock OPA with no ahp-opa in front: the rules read input.ahp only.
	d := builtin.deny with input as bash_event("rm -rf /")
	count(d) == 0
}

# lookalike_allowed holds when evt, which resembles what the rule with code
# denies, is allowed by every rule.
lookalike_allowed(evt, code) if {
	allowed(evt)
	not denies(evt, code)
}
