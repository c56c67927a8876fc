# Rules that depend on what already happened in the session. ahp-opa keeps
# per-session facts from the decisions it made and the tool.after
# observations it received, and passes them as input.ahp.session.
package ahp.tool.before.session_guard

# Programs that move data over the network.
network_programs := {"curl", "wget", "nc", "ncat", "netcat", "socat", "scp", "sftp", "ftp", "rsync", "http", "https"}

# METADATA
# title: No network transfer after a secret was read
# description: >-
#   Once the session has read a secret (a .env file, a private key, cloud
#   credentials), any network transfer could carry it away.
# custom:
#   code: com.example.session.egress-after-secret
#   severity: high
deny contains {
	"reason": "This session has read a secret file, so network transfers are blocked for the rest of it. Ask the user to run this command, or start a new session.",
	"code": "com.example.session.egress-after-secret",
} if {
	input.ahp.session.secrets_touched
	network_call
}

network_call if input.ahp.tool.family == "fetch"

network_call if {
	some cmd in input.ahp.shell.commands
	cmd.name in network_programs
}

# The shell-call budget: data.ahp_opa_examples.max_shell_per_minute, 30
# when unset.
default max_shell_per_minute := 30

max_shell_per_minute := data.ahp_opa_examples.max_shell_per_minute

recent_shell_calls := [r |
	some r in input.ahp.session.recent
	r.family == "shell"
	time.now_ns() - r.time_ns < 60 * 1000000000
]

# METADATA
# title: Shell call rate limit
# description: A runaway agent loop shows as a burst of shell calls.
# custom:
#   code: com.example.session.shell-rate
#   severity: medium
deny contains {
	"reason": sprintf("More than %d shell commands in the last minute; pause and check with the user before running more.", [max_shell_per_minute]),
	"code": "com.example.session.shell-rate",
} if {
	input.ahp.tool.family == "shell"
	count(recent_shell_calls) >= max_shell_per_minute
}
