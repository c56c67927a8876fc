package ahp.lib.shell_test

import data.ahp.lib.shell

test_segments_split_on_operators_not_inside_quotes if {
	segs := shell.segments(`a 1 && b "x; y" | c 2>&1; d &>/dev/null & e || f`)
	[s.words | some s in segs] == [["a", "1"], ["b", "x; y"], ["c", "2>&1"], ["d", "&>/dev/null"], ["e"], ["f"]]
	[s.op | some s in segs] == ["", "&&", "|", ";", "&", "||"]
}

test_simple_command_skips_wrappers if {
	shell.simple_command(["sudo", "-u", "root", "rm", "-rf", "x"]) == {"name": "rm", "args": ["-rf", "x"]}
	shell.simple_command(["FOO=1", "env", "-i", "nice", "-n", "10", "/bin/ls", "-l"]) == {"name": "ls", "args": ["-l"]}
	shell.simple_command(["command", "-v", "mkfs"]) == {"name": "command", "args": ["-v", "mkfs"]}
	shell.simple_command(["then", "rm", "x"]) == {"name": "rm", "args": ["x"]}
}

test_options_and_operands if {
	shell.options(["-rf", "a", "--", "-b"]) == ["-rf"]
	shell.operands(["-rf", "a", "--", "-b"]) == ["a", "-b"]
	shell.has_short_flag(["-v", "-Rf"], "R")
	not shell.has_short_flag(["--force"], "f")
	shell.has_long_flag(["--recur"], "--recursive", 5)
	not shell.has_long_flag(["--re"], "--recursive", 5)
}

test_scripts_unwrap_sh_c_and_substitutions if {
	scripts := shell.scripts with input as {"tool": {"name": "Bash", "input": {"command": `bash -c "ls; echo $(pwd)"`}}}
	scripts == {`bash -c "ls; echo $(pwd)"`, "ls; echo $(pwd)", "pwd"}
}

test_pipes_follow_pipelines_only if {
	pipes := shell.pipes with input as {"tool": {"name": "Bash", "input": {"command": "a | b | c; d | e"}}}
	names := {[p[0].name, p[1].name] | some p in pipes}
	names == {["a", "b"], ["a", "c"], ["b", "c"], ["d", "e"]}
}
