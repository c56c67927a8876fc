# METADATA
# title: Reference policy for benchmarks
# description: |
#   28 deny rules of the kind a team writes for stock OPA: they read the
#   raw tool.before event (no input.ahp), match shell commands with regular
#   expressions and file paths with prefixes, and look for a private key
#   header in written content with a literal test. The benchmarks run it on
#   OPA's REST server and on ahp-opa alike (bench/http-vs-opa.sh).
package ahp.tool.before.reference

_shell_tools := {"Bash", "run_shell_command", "shell", "exec_command"}

_write_tools := {"Write", "Edit", "MultiEdit", "write_file", "replace", "create_file"}

_read_tools := {"Read", "read_file", "view", "read_many_files"}

_cmd := input.tool.input.command if {
	input.tool.name in _shell_tools
	is_string(input.tool.input.command)
}

_path := input.tool.input.file_path if is_string(input.tool.input.file_path)

_path := input.tool.input.path if {
	not input.tool.input.file_path
	is_string(input.tool.input.path)
}

_content := input.tool.input.content if is_string(input.tool.input.content)

_content := input.tool.input.new_string if is_string(input.tool.input.new_string)

_shell(code, reason, pattern) := {"code": code, "reason": reason} if regex.match(pattern, _cmd)

deny contains d if d := _shell("ref.rm-root", "Recursive delete of / or ~.", `\brm\s+-[a-zA-Z]*[rR][a-zA-Z]*f?\s+(/|~)(\s|$)`)

deny contains d if d := _shell("ref.force-push", "Force push.", `\bgit\s+push\b.*\s(-f|--force)(\s|$)`)

deny contains d if d := _shell("ref.reset-hard", "git reset --hard discards work.", `\bgit\s+reset\s+--hard\b`)

deny contains d if d := _shell("ref.clean", "git clean -f deletes files.", `\bgit\s+clean\s+-[a-zA-Z]*f`)

deny contains d if d := _shell("ref.no-verify", "Skipping hooks.", `\bgit\s+commit\b.*--no-verify`)

deny contains d if d := _shell("ref.curl-sh", "Piping downloads into a shell.", `\b(curl|wget)\b[^|]*\|\s*(sudo\s+)?(ba|z|da)?sh\b`)

deny contains d if d := _shell("ref.sudo", "sudo.", `(^|[;&|]\s*)sudo\s`)

deny contains d if d := _shell("ref.chmod-777", "World-writable modes.", `\bchmod\s+(-R\s+)?0?777\b`)

deny contains d if d := _shell("ref.dd", "dd onto a device.", `\bdd\b.*\bof=/dev/`)

deny contains d if d := _shell("ref.mkfs", "Formatting a disk.", `\bmkfs(\.[a-z0-9]+)?\s`)

deny contains d if d := _shell("ref.reverse-shell", "Reverse shell.", `/dev/tcp/|\bnc\s+(-[a-z]*e|.*\s-e\s)`)

deny contains d if d := _shell("ref.env-dump", "Printing the environment.", `(^|[;&|]\s*)(env|printenv)\s*($|[;&|])`)

deny contains d if d := _shell("ref.ssh-key", "Reading SSH keys.", `\.ssh/id_[a-z0-9_]+(\s|$)`)

deny contains d if d := _shell("ref.aws-creds", "Reading AWS credentials.", `\.aws/credentials`)

deny contains d if d := _shell("ref.dotenv", "Reading .env files.", `\b(cat|less|more|head|tail)\s+\S*\.env(\.[a-z]+)?(\s|$)`)

deny contains d if d := _shell("ref.publish", "Publishing a package.", `\b(npm|pnpm|yarn)\s+publish\b|\btwine\s+upload\b|\bcargo\s+publish\b`)

deny contains d if d := _shell("ref.terraform-destroy", "terraform destroy.", `\bterraform\s+destroy\b`)

deny contains d if d := _shell("ref.kubectl-delete", "Deleting a namespace.", `\bkubectl\s+delete\s+(ns|namespace)\b`)

deny contains d if d := _shell("ref.drop-table", "Dropping tables.", `(?i)\bdrop\s+(table|database)\b`)

deny contains d if d := _shell("ref.crontab", "Editing crontab.", `\bcrontab\s+(-r|-e|\S+$)`)

deny contains {"code": "ref.write-etc", "reason": "Writing system files."} if {
	input.tool.name in _write_tools
	startswith(_path, "/etc/")
}

deny contains {"code": "ref.write-ssh", "reason": "Writing SSH configuration."} if {
	input.tool.name in _write_tools
	contains(_path, "/.ssh/")
}

deny contains {"code": "ref.write-hooks", "reason": "Writing git hooks."} if {
	input.tool.name in _write_tools
	contains(_path, ".git/hooks/")
}

deny contains {"code": "ref.write-agent-config", "reason": "Writing the agent's settings."} if {
	input.tool.name in _write_tools
	regex.match(`(^|/)\.(claude|codex|gemini)/`, _path)
}

deny contains {"code": "ref.write-private-key", "reason": "Writing a private key."} if {
	input.tool.name in _write_tools
	contains(_content, "PRIVATE KEY-----")
}

deny contains {"code": "ref.read-env", "reason": "Reading .env files."} if {
	input.tool.name in _read_tools
	regex.match(`(^|/)\.env(\.[a-z]+)?$`, _path)
	not endswith(_path, ".example")
}

deny contains {"code": "ref.read-ssh-key", "reason": "Reading SSH keys."} if {
	input.tool.name in _read_tools
	regex.match(`/\.ssh/id_[a-z0-9_]+$`, _path)
}

deny contains {"code": "ref.fetch-metadata", "reason": "Cloud metadata endpoint."} if {
	input.tool.name == "WebFetch"
	contains(input.tool.input.url, "169.254.169.254")
}
