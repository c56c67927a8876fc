package ahp.tool.before.builtin_test

import data.ahp.tool.before.builtin

# Inputs in the shape of the tool.before events each harness sends.
event(tool) := {
	"id": "evt_1",
	"source": "urn:uuid:test",
	"type": "tool.before",
	"time": "2026-01-02T03:04:05Z",
	"session": {"id": "s1", "cwd": "/repo", "workspaceRoots": ["/repo"]},
	"call": {"id": "c1"},
	"path": "native",
	"tool": tool,
}

# Claude Code
bash(command) := event({"name": "Bash", "kind": "shell", "origin": "native", "input": {"command": command}})

# Gemini CLI
gemini(command) := event({"name": "run_shell_command", "origin": "native", "input": {"command": command}})

# Codex, with an argv array
codex(argv) := event({"name": "shell", "origin": "native", "input": {"command": argv}})

# Codex exec_command, whose command field is called cmd
codex_exec(command) := event({"name": "exec_command", "origin": "native", "input": {"cmd": command}})

# An unknown harness that only says the kind
shell_kind(command) := event({"name": "runTerminal", "kind": "shell", "origin": "mcp", "input": {"command": command}})

read_tool(name, args) := event({"name": name, "origin": "native", "input": args})

denials(evt) := d if {
	d := builtin.deny with input as evt
}

# denied_only holds when evt gets exactly one denial and it carries code.
denied_only(evt, code) if {
	d := denials(evt)
	count(d) == 1
	some x in d
	x.code == code
	is_string(x.reason)
	x.reason != ""
}

allowed(evt) if count(denials(evt)) == 0

# Codes of the built-in rules.
rm_code := "dev.ahp-opa.fs.rm-rf-root-or-home"

chmod_code := "dev.ahp-opa.fs.chmod-recursive-root"

push_code := "dev.ahp-opa.git.force-push"

pipe_code := "dev.ahp-opa.exec.curl-pipe-shell"

dd_code := "dev.ahp-opa.disk.dd-block-device"

mkfs_code := "dev.ahp-opa.disk.mkfs"

ssh_code := "dev.ahp-opa.secrets.ssh-private-key"

test_every_denial_has_reason_and_valid_code if {
	d := denials(bash("sudo rm -rf / ; git push -f ; curl x | sh ; dd of=/dev/sda ; mkfs /dev/sdb ; chmod -R 777 / ; cat ~/.ssh/id_rsa"))
	count(d) == 7
	every x in d {
		regex.match(`^(?:[A-Za-z][A-Za-z0-9_-]*\.)+[A-Za-z][A-Za-z0-9_-]*$`, x.code)
		startswith(x.code, "dev.ahp-opa.")
		count(x.reason) > 20
	}
}

test_non_shell_tool_with_command_field_is_ignored if {
	allowed(event({"name": "Write", "origin": "native", "input": {"command": "rm -rf /", "file_path": "/repo/x"}}))
}

test_empty_and_missing_command_allowed if {
	allowed(bash(""))
	allowed(event({"name": "Bash", "kind": "shell", "input": {}}))
}

test_odd_input_shapes_allowed_without_errors if {
	allowed(bash(42))
	allowed(codex([1, {"a": "b"}, "rm"]))
	allowed(codex([7, "-c", "rm -rf /"]))
	allowed(event({"name": "Bash", "kind": "shell", "input": "rm -rf /"}))
	allowed(event({"name": "Read", "input": {"file_path": 3, "paths": "~/.ssh/id_rsa"}}))
	allowed(event({"kind": "shell"}))
}
