# METADATA
# title: Plain reference policy for benchmarks
# description: |
#   The shape of a first policy written for stock OPA: a table of 25
#   regular expressions over the shell command, iterated with
#   `some name, pattern in patterns`, and one rule that reads the session's
#   workspace roots with object.get. It reads the raw tool.before event and
#   no input.ahp, so ahp-opa enriches nothing for it. The benchmarks run it
#   on OPA's REST server and on ahp-opa alike (bench/hotpath-vs-opa.sh).
package ahp.tool.before.plain

_shell_tools := {"Bash", "run_shell_command", "shell", "exec_command"}

_cmd := input.tool.input.command if {
	input.tool.name in _shell_tools
	is_string(input.tool.input.command)
}

patterns := {
	"rm-root": `\brm\s+-[a-zA-Z]*[rR][a-zA-Z]*f?\s+(/|~)(\s|$)`,
	"force-push": `\bgit\s+push\b.*\s(-f|--force)(\s|$)`,
	"reset-hard": `\bgit\s+reset\s+--hard\b`,
	"clean": `\bgit\s+clean\s+-[a-zA-Z]*f`,
	"no-verify": `\bgit\s+commit\b.*--no-verify`,
	"curl-sh": `\b(curl|wget)\b[^|]*\|\s*(sudo\s+)?(ba|z|da)?sh\b`,
	"sudo": `(^|[;&|]\s*)sudo\s`,
	"chmod-777": `\bchmod\s+(-R\s+)?0?777\b`,
	"dd": `\bdd\b.*\bof=/dev/`,
	"mkfs": `\bmkfs(\.[a-z0-9]+)?\s`,
	"reverse-shell": `/dev/tcp/|\bnc\s+(-[a-z]*e|.*\s-e\s)`,
	"env-dump": `(^|[;&|]\s*)(env|printenv)\s*($|[;&|])`,
	"ssh-key": `\.ssh/id_[a-z0-9_]+(\s|$)`,
	"aws-creds": `\.aws/credentials`,
	"dotenv": `\b(cat|less|more|head|tail)\s+\S*\.env(\.[a-z]+)?(\s|$)`,
	"publish": `\b(npm|pnpm|yarn)\s+publish\b|\btwine\s+upload\b|\bcargo\s+publish\b`,
	"terraform-destroy": `\bterraform\s+destroy\b`,
	"kubectl-delete": `\bkubectl\s+delete\s+(ns|namespace)\b`,
	"drop-table": `(?i)\bdrop\s+(table|database)\b`,
	"crontab": `\bcrontab\s+(-r|-e|\S+$)`,
	"shutdown": `(^|[;&|]\s*)(shutdown|reboot|halt|poweroff)\b`,
	"history-wipe": `\bhistory\s+-c\b|>\s*~/\.(bash|zsh)_history`,
	"docker-privileged": `\b(docker|podman)\s+run\b.*--privileged`,
	"fork-bomb": `:\(\)\s*\{\s*:\|:&\s*\};:`,
	"kill-all": `\bkill\s+-9\s+-1\b|\bpkill\s+-9\s+-u\b`,
}

deny contains {"code": concat(".", ["plain", name]), "reason": sprintf("Blocked by the %s pattern.", [name])} if {
	some name, pattern in patterns
	regex.match(pattern, _cmd)
}

# A command that changes into a directory outside every workspace root.
deny contains {"code": "plain.cd-outside-workspace", "reason": "Changing into a directory outside the workspace."} if {
	roots := object.get(input, ["session", "workspaceRoots"], [])
	some m in regex.find_all_string_submatch_n(`(?:^|[;&|]\s*)cd\s+(/[^\s;&|]*)`, _cmd, -1)
	not _inside(m[1], roots)
}

_inside(dir, roots) if {
	some r in roots
	dir == r
}

_inside(dir, roots) if {
	some r in roots
	startswith(dir, concat("", [trim_suffix(r, "/"), "/"]))
}
