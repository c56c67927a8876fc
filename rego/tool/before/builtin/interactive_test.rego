package ahp.tool.before.builtin_test

# dev.ahp-opa.exec.interactive-session

# Codex's default shell tool (exec_command) as its hook reports it.
codex_bash_event(command) := agent_tool_event("codex", "Bash", {"command": command})

codex_bash(command) := with_ahp("codex_bash", [command], codex_bash_event(command))

test_interactive_session_denied if {
	every c in ["bash", "bash -i", "zsh -l", "python3", "python3 -i", "node", "psql -h db.internal app", "ssh prod-bastion", "docker exec -it web bash", "kubectl exec -it api-0 -- sh", "deno repl"] {
		denies(codex_bash(c), "dev.ahp-opa.exec.interactive-session")
	}
	denied_only(tool("exec_command", {"cmd": "bash", "tty": true}), "dev.ahp-opa.exec.interactive-session")
	denied_only(tool("launch-process", {"command": "python3", "wait": false}), "dev.ahp-opa.exec.interactive-session")
	# bash -v is verbose mode, not the version: the shell still waits for input.
	denies(codex_bash("bash -v"), "dev.ahp-opa.exec.interactive-session")
}

test_interactive_session_evasions_denied if {
	denies(tool("start_process", {"command": "sh"}), "dev.ahp-opa.exec.interactive-session")
	denies(tool("run_terminal", {"command": "ipython", "tty": true}), "dev.ahp-opa.exec.interactive-session")
	# What is typed afterwards is judged as shell input when a hook sees it.
	denies(tool("write_stdin", {"session_id": 1, "chars": "cat ~/.ssh/id_rsa\n"}), "dev.ahp-opa.secrets.ssh-private-key")
}

test_interactive_session_lookalikes_allowed if {
	every c in ["bash -c 'make test'", "bash scripts/ci.sh", "python3 -m pytest", "python3 app.py", "node server.js", "psql -c 'select 1' app", "ssh prod-bastion uptime", "echo 'print(1)' | python3", "python3 < script.py", "sqlite3 app.db '.tables'", "docker exec web ls", "python3 --version", "python3 -V", "bash --version", "node -v", "psql --version", "php -h"] {
		lookalike_allowed(codex_bash(c), "dev.ahp-opa.exec.interactive-session")
	}
	# Claude's Bash has no way to type into it later: bash with no script
	# reads an empty input and ends.
	lookalike_allowed(tool("Bash", {"command": "python3"}), "dev.ahp-opa.exec.interactive-session")
	"dev.ahp-opa.exec.interactive-session" in codes_with(agent_tool("codex", "Bash", {"command": "bash"}), {})
	not "dev.ahp-opa.exec.interactive-session" in codes_with(agent_tool("codex", "Bash", {"command": "bash"}), {"allow_interactive_sessions": true})
}
