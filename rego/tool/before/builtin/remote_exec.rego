package ahp.tool.before.builtin

import data.ahp.lib.shell

# METADATA
# title: Downloaded script piped into a shell
# description: |
#   Denies curl or wget whose output is piped into a shell (curl ... | sh,
#   wget -qO- ... | sudo bash, also through tee and the like), and shells fed
#   from a download through process or command substitution
#   (bash <(curl ...), sh -c "$(curl ...)", eval "$(curl ...)").
# custom:
#   severity: high
#   code: dev.ahp-opa.exec.curl-pipe-shell
deny contains {
	"reason": concat(" ", [
		"Blocked piping a downloaded script straight into a shell; the code would run unreviewed.",
		"Download it to a file first (e.g. `curl -fsSLo install.sh URL`), inspect it, then ask the user before running it.",
	]),
	"code": "dev.ahp-opa.exec.curl-pipe-shell",
} if {
	_download_run_by_shell
}

_downloaders := {"curl", "wget"}

_download_run_by_shell if {
	some pair in shell.pipes
	pair[0].name in _downloaders
	pair[1].name in shell.shells
}

# bash <(curl ...), . <(curl ...), sh -c "$(curl ...)", eval "$(curl ...)".
# This looks at the raw script text, so the same text inside an echo'd
# string also matches (a known, harmless false positive).
_download_run_by_shell if {
	some script in shell.scripts
	regex.match(
		`(?:^|[\s;&|(/])(?:(?:ba|z|da|k|mk|tc|c)?sh|source|eval|\.)\s+(?:-\S+\s+)*["']?[<$]\(\s*(?:curl|wget)(?:\s|\))`,
		script,
	)
}
