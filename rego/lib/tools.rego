# METADATA
# title: Tool families and the files and hosts a call touches
# description: |
#   ahp-opa classifies every tool into a family (input.ahp.tool.family:
#   shell, file_read, file_write, file_edit, search, fetch, mcp, task,
#   other) whatever the harness calls it. These helpers combine what file
#   tools and shell commands read, write and contact, so that one rule
#   covers both.
package ahp.lib.tools

import data.ahp.lib.shell

family := input.ahp.tool.family

is_shell if family == "shell"

# Families whose paths are files the tool shows to the agent.
reading_families := {"file_read", "search"}

# Families whose paths are files the tool changes.
writing_families := {"file_write", "file_edit"}

# read holds every path object a call may show or copy.
read contains p if {
	input.ahp.tool.family == "file_read"
	some p in input.ahp.tool.paths
}

read contains p if {
	input.ahp.tool.family == "search"
	some p in input.ahp.tool.paths
}

read contains r.path if {
	input.ahp.tool.family == "shell"
	some r in shell.reads
}

# written holds every path object a call may change.
written contains p if {
	input.ahp.tool.family == "file_write"
	some p in input.ahp.tool.paths
}

written contains p if {
	input.ahp.tool.family == "file_edit"
	some p in input.ahp.tool.paths
}

written contains w.path if {
	input.ahp.tool.family == "shell"
	some w in shell.writes
}

# hosts holds every host a call contacts: URLs of fetch tools and in shell
# arguments.
hosts contains u.host if some u in input.ahp.tool.urls

hosts contains h if {
	input.ahp.tool.family == "shell"
	some h in shell.hosts
}

# urls holds every URL object of the call.
urls contains u if some u in input.ahp.tool.urls

urls contains u if {
	input.ahp.tool.family == "shell"
	some cmd in input.ahp.shell.commands
	some u in cmd.urls
}

# Input fields in which file tools carry the text they write.
_content_keys := ["content", "new_string", "new_str", "file_text", "code_edit", "text", "patch", "input", "diff", "new_source", "contents", "CodeContent", "file_content", "new_str_1"]

# content holds the text a file tool writes.
content contains s if {
	input.ahp.tool.family == "file_write"
	some k in _content_keys
	s := input.tool.input[k]
	is_string(s)
}

content contains s if {
	input.ahp.tool.family == "file_edit"
	some k in _content_keys
	s := input.tool.input[k]
	is_string(s)
}

content contains s if {
	input.ahp.tool.family == "file_write"
	some e in input.tool.input.edits
	s := e.new_string
	is_string(s)
}

content contains s if {
	input.ahp.tool.family == "file_edit"
	some e in input.tool.input.edits
	s := e.new_string
	is_string(s)
}

# The edits of an MCP filesystem server's edit_file and Windsurf's
# replacement chunks.
content contains s if {
	input.ahp.tool.family in writing_families
	some e in input.tool.input.edits
	s := e.newText
	is_string(s)
}

content contains s if {
	input.ahp.tool.family in writing_families
	some e in input.tool.input.ReplacementChunks
	s := e.ReplacementContent
	is_string(s)
}

# Codex's apply_patch carries its patch as command.
content contains s if {
	input.ahp.tool.family in writing_families
	input.tool.name == "apply_patch"
	s := input.tool.input.command
	is_string(s)
}
