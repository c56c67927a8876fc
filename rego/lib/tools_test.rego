package ahp.lib.tools_test

import data.ahp.lib.tools

tool(name, kind, args) := {"tool": {"name": name, "kind": kind, "input": args}}

test_shell_tools_recognised if {
	every name in ["Bash", "run_shell_command", "shell", "exec_command", "local_shell"] {
		tools.is_shell with input as {"tool": {"name": name, "input": {"command": "ls"}}}
	}
	tools.is_shell with input as tool("terminal", "shell", {})
	not tools.is_shell with input as tool("Read", "file_read", {"file_path": "/x"})
}

test_command_string_and_argv if {
	tools.command == "ls -la" with input as tool("Bash", "shell", {"command": "ls -la"})
	tools.command == "bash -lc git status" with input as tool("shell", "", {"command": ["bash", "-lc", "git status"]})
	tools.command == "git status" with input as tool("exec_command", "", {"cmd": "git status"})
	not tools.command with input as tool("Write", "file_write", {"command": "ls"})
}

test_file_read_tools_and_paths if {
	tools.is_file_read with input as tool("Read", "", {})
	tools.is_file_read with input as tool("fetch_file", "file_read", {})
	not tools.is_file_read with input as tool("Bash", "shell", {})
	tools.file_path == "/a" with input as tool("Read", "", {"file_path": "/a"})
	tools.file_path == "/b" with input as tool("read_file", "", {"absolute_path": "/b", "filename": "c"})
	tools.file_paths == {"/b", "c"} with input as tool("read_file", "", {"absolute_path": "/b", "filename": "c"})
	tools.file_paths == {"x", "y"} with input as tool("read_many_files", "", {"paths": ["x", "y"]})
}
