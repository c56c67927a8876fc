package ahp.tool.before.builtin

# METADATA
# title: Shell command that cannot be parsed
# description: |
#   Denies a shell command, or a script nested in it (bash -c '…', eval),
#   that is not valid shell syntax: a shell still runs the commands before
#   the error, and text the policy cannot read cannot be checked.
# custom:
#   severity: medium
#   code: dev.ahp-opa.shell.unparseable
violation contains {
	"reason": concat(" ", [
		"Blocked a shell command that could not be parsed, so it could not be checked.",
		"Rewrite it in plain POSIX or bash syntax, splitting long one-liners into simpler commands.",
	]),
	"code": "dev.ahp-opa.shell.unparseable",
} if {
	input.ahp.shell.parse_error
}

# METADATA
# title: Shell command too large or too deeply nested to check
# description: |
#   Denies a shell command the analysis had to stop on: longer than the
#   size limit, nested deeper than the depth limit (bash -c inside
#   bash -c …), or running more commands than the command limit.
# custom:
#   severity: medium
#   code: dev.ahp-opa.shell.too-complex
violation contains {
	"reason": concat(" ", [
		"Blocked a shell command too large or too deeply nested to check.",
		"Split it into smaller commands, or write long scripts to a file first and run the file.",
	]),
	"code": "dev.ahp-opa.shell.too-complex",
} if {
	input.ahp.shell.incomplete
}

# METADATA
# title: Shell tool whose command is ambiguous
# description: |
#   Denies a call to a shell tool whose input holds the command, or the
#   directory it runs in, in more than one field with different values
#   ({"command": "rm -rf ~", "action": {"command": ["true"]}}). For a tool
#   of unknown shape (an MCP shell server, an AHP harness) which field runs
#   cannot be known, and the one checked may not be the one run. A native
#   agent's own shell tool is read at the field the agent executes and is
#   ambiguous only when the agent's own forms disagree.
# custom:
#   severity: high
#   code: dev.ahp-opa.shell.ambiguous-command
violation contains {
	"reason": concat(" ", [
		"Blocked a shell call whose input gives the command or its directory twice, with different values, so the one checked may not be the one run.",
		"Send the command in one field only.",
	]),
	"code": "dev.ahp-opa.shell.ambiguous-command",
	"trigger": concat(" ", [input.ahp.tool.name, "with", concat(" and ", input.ahp.shell.ambiguous)]),
} if {
	input.ahp.shell.ambiguous
}
