package ahp.lib.shell_test

import data.ahp.lib.shell

cmd(name, args) := {"name": name, "args": args, "depth": 0, "via": "", "parent": -1}

test_code_from_stdin if {
	shell.code_from_stdin(cmd("sh", []))
	shell.code_from_stdin(cmd("bash", ["-s", "--", "x"]))
	shell.code_from_stdin(cmd("python3", ["-"]))
	shell.code_from_stdin(cmd("perl", []))
	not shell.code_from_stdin(cmd("bash", ["build.sh"]))
	not shell.code_from_stdin(cmd("bash", ["-c", "ls"]))
	not shell.code_from_stdin(cmd("python3", ["-c", "print(1)"]))
	not shell.code_from_stdin(cmd("python3", ["tool.py"]))
	shell.code_from_stdin(cmd("php", ["--", "--quiet"]))
	shell.code_from_stdin(cmd("php", ["-d", "memory_limit=-1", "--", "--install-dir=bin"]))
	not shell.code_from_stdin(cmd("php", ["installer.php", "--", "--quiet"]))
	not shell.code_from_stdin(cmd("php", ["-f", "build.php", "--", "--quiet"]))
	not shell.code_from_stdin(cmd("php", ["-r", "echo 1;", "--", "x"]))
}

test_code_flows if {
	inp := {"ahp": {"tool": {"family": "shell"}, "shell": {"classes": {"downloader": [0, 2], "shell": [1]}, "commands": [
		cmd("curl", ["https://x"]),
		object.union(cmd("sh", []), {"inputs": [0]}),
		cmd("curl", ["https://y"]),
		object.union(cmd("jq", ["."]), {"inputs": [2]}),
	]}}}
	shell.code_flows == {[1, 0]} with input as inp
}

p(path) := {"path": path, "base": path, "arg": 0}

test_writes_and_reads if {
	inp := {"ahp": {"tool": {"family": "shell"}, "shell": {
		"programs": {"cat": [0], "cp": [1]},
		"commands": [
			object.union(cmd("cat", ["a"]), {"paths": [p("/r/a")], "redirects": [{"op": ">", "target": "b", "path": p("/r/b")}]}),
			object.union(cmd("cp", ["c", "d"]), {"paths": [p("/r/c"), object.union(p("/r/d"), {"arg": 1})]}),
		],
	}}}
	{w.path.path | some w in shell.writes} == {"/r/b", "/r/d"} with input as inp
	{r.path.path | some r in shell.reads} == {"/r/a", "/r/c"} with input as inp
}

test_output_option_values_are_not_reads if {
	inp := {"ahp": {"tool": {"family": "shell"}, "shell": {"commands": [
		object.union(cmd("openssl", ["req", "-in", "a.csr", "-keyout", "k.pem", "-out", "c.pem"]), {"paths": [
			object.union(p("/r/a.csr"), {"arg": 2}),
			object.union(p("/r/k.pem"), {"arg": 4}),
			object.union(p("/r/c.pem"), {"arg": 6}),
		]}),
		object.union(cmd("grep", ["-o", "x", "/r/f"]), {"paths": [object.union(p("/r/x"), {"arg": 1}), object.union(p("/r/f"), {"arg": 2})]}),
	]}}}
	{r.path.path | some r in shell.reads} == {"/r/a.csr", "/r/x", "/r/f"} with input as inp
}

test_environment_directories_are_not_reads if {
	inp := {"ahp": {"tool": {"family": "shell"}, "shell": {"commands": [
		object.union(cmd("python3", ["-m", "venv", ".env"]), {"paths": [object.union(p("/r/.env"), {"arg": 2})]}),
		object.union(cmd("virtualenv", ["-p", "python3", ".venv"]), {"paths": [object.union(p("/r/.venv"), {"arg": 2})]}),
		object.union(cmd("uv", ["venv", ".env"]), {"paths": [object.union(p("/r/.env"), {"arg": 1})]}),
		object.union(cmd("python3", ["-m", "json.tool", "settings"]), {"paths": [object.union(p("/r/settings"), {"arg": 2})]}),
		object.union(cmd("python3", ["tool.py", "-m", "venv", "conf"]), {"paths": [object.union(p("/r/tool.py"), {"arg": 0}), object.union(p("/r/conf"), {"arg": 3})]}),
	]}}}
	{r.path.path | some r in shell.reads} == {"/r/settings", "/r/tool.py", "/r/conf"} with input as inp
}

test_loaded_config_files_are_not_reads if {
	inp := {"ahp": {"tool": {"family": "shell"}, "shell": {"commands": [
		object.union(cmd("dotnet", ["restore", "--configfile", "/run/secrets/nuget"]), {"paths": [object.union(p("/run/secrets/nuget"), {"arg": 2})]}),
		object.union(cmd("nuget", ["restore", "-ConfigFile", "/run/secrets/nuget"]), {"paths": [object.union(p("/run/secrets/nuget"), {"arg": 2})]}),
		object.union(cmd("kubectl", ["--kubeconfig", "/r/kc", "get", "pods"]), {"paths": [object.union(p("/r/kc"), {"arg": 1})]}),
		object.union(cmd("cat", ["/run/secrets/nuget"]), {"paths": [object.union(p("/run/secrets/nuget"), {"arg": 0})]}),
		object.union(cmd("cp", ["--config", "/r/conf", "/tmp/x"]), {"paths": [object.union(p("/r/conf"), {"arg": 1}), object.union(p("/tmp/x"), {"arg": 2})]}),
	]}}}
	{[r.command, r.path.path] | some r in shell.reads} == {[3, "/run/secrets/nuget"], [4, "/r/conf"]} with input as inp
}

test_decoders if {
	shell.decoder(cmd("base64", ["-d"]))
	shell.decoder(cmd("xxd", ["-r", "-p"]))
	shell.decoder(cmd("rev", []))
	not shell.decoder(cmd("base64", ["file"]))
}

test_reads_skip_every_non_reading_program if {
	every name in shell.non_reading {
		count(shell.reads) == 0 with input as {"ahp": {"tool": {"family": "shell"}, "shell": {"commands": [object.union(cmd(name, ["a"]), {"paths": [p("/r/a")]})]}}}
	}
	every op in shell.write_ops {
		count(shell.writes) == 1 with input as {"ahp": {"tool": {"family": "shell"}, "shell": {"commands": [object.union(cmd("x", []), {"redirects": [{"op": op, "target": "b", "path": p("/r/b")}]})]}}}
	}
}
