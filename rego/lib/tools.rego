# METADATA
# title: Tool-family detection
# description: |
#   Recognises the shell and file-read tools of the supported harnesses
#   (Claude Code, Gemini CLI, Codex and any harness that sets tool.kind) and
#   extracts the command string or the file paths from their input.
package ahp.lib.tools

# Names that shell tools carry in the harnesses we know about.
shell_tool_names := {
	"Bash", # Claude Code
	"run_shell_command", # Gemini CLI
	"shell", # Codex
	"exec_command", # Codex
	"local_shell", # Codex
}

# Names that file-read tools carry in the harnesses we know about.
file_read_tool_names := {
	"Read", # Claude Code
	"read_file", # Gemini CLI, Codex
	"read_many_files", # Gemini CLI
	"view", # Codex, Copilot
}

# Input keys that may hold the path of a file being read.
file_path_keys := ["file_path", "path", "absolute_path", "filename"]

is_shell if input.tool.kind == "shell"

is_shell if input.tool.name in shell_tool_names

is_file_read if input.tool.kind == "file_read"

is_file_read if input.tool.name in file_read_tool_names

# raw_command is the command exactly as the harness sent it: a string, or an
# argv array (Codex). Some Codex tools call the field "cmd".
raw_command := c if {
	is_shell
	c := input.tool.input.command
} else := c if {
	is_shell
	c := input.tool.input.cmd
}

# command is the shell command as one string; argv arrays are joined with
# single spaces.
command := raw_command if is_string(raw_command)

command := concat(" ", [a | some a in raw_command; is_string(a)]) if is_array(raw_command)

# file_paths holds every path a file-read tool was asked to read.
file_paths contains p if {
	is_file_read
	some k in file_path_keys
	p := input.tool.input[k]
	is_string(p)
}

file_paths contains p if {
	is_file_read
	some p in input.tool.input.paths
	is_string(p)
}

# file_path is the first path found, looking at the keys in file_path_keys
# order.
file_path := p if {
	i := min({i | some i, k in file_path_keys; is_string(input.tool.input[k])})
	is_file_read
	p := input.tool.input[file_path_keys[i]]
}
