package ahp.tool.before.builtin

import data.ahp.lib.args
import data.ahp.lib.config
import data.ahp.lib.paths
import data.ahp.lib.tools

# The guard protects itself: an agent must not switch off or blind the
# hooks that judge it. Writing the agent's hook settings and the guard's
# own configuration and policy is dev.ahp-opa.agent.config-write
# (persistence.rego); the rules below cover every other way: removing or
# disabling those files, stopping the decision daemon or removing its
# socket, changing the guard's binaries, uninstalling it, and talking to
# the hook client or the daemon with made-up events.

# METADATA
# title: Removing or disabling the guard's settings
# description: |
#   Denies removing, moving, emptying or locking (chmod, chown, chattr)
#   the files that register the guard or configure it: every agent's hook
#   settings in user and project scope (.claude/settings*.json,
#   managed-settings.json, .gemini/settings.json, .codex/config.toml and
#   hooks.json, .cursor/hooks.json, Copilot's hooks/*.json, …), ahp-opa's
#   configuration (.config/ahp-opa/, ahp-opa.yaml) and the --config file
#   and --policy paths the running guard was started with (guard_paths),
#   by a shell command or a file tool that deletes. Reading them, and
#   writing them through the ordinary write rule, are judged elsewhere.
# custom:
#   severity: critical
#   code: dev.ahp-opa.guard.settings-tamper
violation contains {
	"reason": concat(" ", [
		"Blocked removing or disabling the agent's hook settings or the guard's configuration or policy; the agent may not switch off its own guard.",
		"Describe the change you need and ask the user to make it.",
	]),
	"code": "dev.ahp-opa.guard.settings-tamper",
	"trigger": trigger,
} if {
	some trigger in _guard_settings_tamper
}

_guard_settings_tamper contains concat(" ", [cmd.name, p.raw]) if {
	input.ahp.tool.family == "shell"
	some name, ixs in input.ahp.shell.programs
	name in _disabling_programs
	some i in ixs
	cmd := input.ahp.shell.commands[i]
	cmd.name == name
	not _harmless_mode(cmd)
	some p in cmd.paths
	_guard_file_or_dir(p)
}

_guard_file_or_dir(p) if _guard_file(p)

# The directories that hold them: rm -rf ~/.claude removes the settings.
_guard_file_or_dir(p) if regex.match(`(^|/)(\.claude|\.gemini|\.codex|\.cursor|\.copilot|\.github/hooks|\.config/ahp-opa|\.ahp|\.claude/hooks|\.gemini/hooks|\.codex/hooks|\.cursor/hooks|\.copilot/hooks|etc/claude-code|etc/gemini-cli|etc/codex)$`, p.path)

# chmod and setfacl that keep the file readable and writable by its
# owner do not disable it (chmod 644, chmod u+x, chmod go-w).
_harmless_mode(cmd) if {
	cmd.name == "chmod"
	some m in args.operands(cmd.args)
	regex.match(`^(0?[67][0-7]{2}|[go]*[-+=][rwxXst]*|[ugoa]*\+[rwxXst]+)$`, m)
}

# A file tool that deletes (Cursor's delete_file, Augment's remove-files,
# MCP filesystem delete tools).
_guard_settings_tamper contains concat(" ", [input.ahp.tool.name, p.raw]) if {
	input.ahp.tool.family in {"file_edit", "file_write", "mcp", "other"}
	regex.match(`(?i)(delete|remove|unlink|move|rename)`, input.ahp.tool.name)
	some p in input.ahp.tool.paths
	_guard_file(p)
}

_disabling_programs := {
	"rm", "unlink", "shred", "mv", "truncate", "chmod", "chown", "chgrp", "chattr",
	"setfacl", "srm", "wipe", "trash", "trash-put", "gio", "rmdir",
}

_guard_file(p) if paths.agent_config(p)

_guard_file(p) if config.guard_path(p)

_guard_file(p) if config.path_protected(p)

# METADATA
# title: Stopping the guard's decision daemon
# description: |
#   Denies stopping the ahp-opa daemon that answers the hooks, or
#   removing its socket: kill, pkill, killall or skill in a call that
#   names ahp-opa (pkill -f "ahp-opa daemon", kill $(pgrep ahp-opa),
#   kill $(cat …/ahp-opa/….pid)), systemctl or launchctl stopping,
#   disabling or unloading an ahp-opa unit, and rm, mv or chmod of its
#   runtime directory ($XDG_RUNTIME_DIR/ahp-opa, /tmp/ahp-opa-UID).
#   Looking at it (pgrep, ps, ls) is allowed.
# custom:
#   severity: critical
#   code: dev.ahp-opa.guard.daemon-stop
violation contains {
	"reason": concat(" ", [
		"Blocked stopping the guard's decision daemon or removing its socket; the agent may not switch off its own guard.",
		"If the daemon misbehaves, tell the user; `ahp-opa-hook` restarts it on its own when it is gone.",
	]),
	"code": "dev.ahp-opa.guard.daemon-stop",
	"trigger": trigger,
} if {
	some trigger in _guard_daemon_stop
}

_guard_daemon_stop contains _command_trigger(cmd) if {
	input.ahp.shell.mentions["ahp-opa"]
	some name, ixs in input.ahp.shell.programs
	name in {"kill", "pkill", "killall", "skill", "xkill", "taskkill", "stop-process"}
	some i in ixs
	cmd := input.ahp.shell.commands[i]
}

_guard_daemon_stop contains _command_trigger(cmd) if {
	input.ahp.shell.mentions["ahp-opa"]
	some i in input.ahp.shell.mentions["ahp-opa"]
	cmd := input.ahp.shell.commands[i]
	cmd.name in {"systemctl", "launchctl", "service", "sv", "rc-service"}
	some a in cmd.args
	a in {"stop", "disable", "mask", "kill", "unload", "bootout", "remove", "restart", "reload", "edit", "revert"}
}

_guard_daemon_stop contains concat(" ", [cmd.name, p.raw]) if {
	input.ahp.shell.mentions["ahp-opa"]
	some i in input.ahp.shell.mentions["ahp-opa"]
	cmd := input.ahp.shell.commands[i]
	cmd.name in _disabling_programs
	some p in cmd.paths
	_guard_runtime(p)
}

# The daemon's runtime directory and what is in it, also as written
# ("$XDG_RUNTIME_DIR/ahp-opa", "${TMPDIR}ahp-opa-501").
_guard_runtime(p) if regex.match(`(XDG_RUNTIME_DIR|TMPDIR)\}?/?ahp-opa(-[0-9]+)?(/|$)`, p.raw)

_guard_runtime(p) if regex.match(`^(/run/user/[0-9]+|/var/run/user/[0-9]+|/tmp|/private/tmp|/var/folders/.*/T|/private/var/folders/.*/T|.*/run)/ahp-opa(-[0-9]+)?(/.*)?$`, p.path)

# METADATA
# title: Changing the guard's binaries
# description: |
#   Denies removing, moving, replacing, linking over or changing the
#   permissions of the ahp-opa and ahp-opa-hook programs (chmod -x,
#   mv, rm, cp or ln -sf onto them, a redirect or a file tool writing
#   them): a hook whose program no longer runs fails, and an agent can
#   swap in one that allows everything. Running them, and reading them
#   (ls -l, file, sha256sum), are allowed.
# custom:
#   severity: critical
#   code: dev.ahp-opa.guard.binary-tamper
violation contains {
	"reason": concat(" ", [
		"Blocked changing the guard's programs (ahp-opa, ahp-opa-hook); the agent may not disable or replace its own guard.",
		"Ask the user to upgrade or reinstall ahp-opa.",
	]),
	"code": "dev.ahp-opa.guard.binary-tamper",
	"trigger": trigger,
} if {
	some trigger in _guard_binary_tamper
}

_guard_binary_tamper contains concat(" ", [cmd.name, p.raw]) if {
	input.ahp.shell.mentions["ahp-opa"]
	some i in input.ahp.shell.mentions["ahp-opa"]
	cmd := input.ahp.shell.commands[i]
	cmd.name in (_disabling_programs | {"cp", "ln", "install", "rsync", "dd", "tee", "sed", "strip", "upx", "patchelf"})
	some p in cmd.paths
	_guard_binary(p)
}

_guard_binary_tamper contains concat(" ", ["write", p.raw]) if {
	input.ahp.writes
	some p in tools.written
	_guard_binary(p)
}

_guard_binary(p) if {
	p.base in {"ahp-opa", "ahp-opa-hook", "ahp-opa.exe", "ahp-opa-hook.exe"}
	not _guard_runtime(p)
}

# METADATA
# title: Uninstalling the guard or switching it to observe
# description: |
#   Denies `ahp-opa install … --uninstall`, which removes the guard's hook
#   entries from the agent's settings, and `ahp-opa install … --observe`,
#   which keeps them but stops them from denying. A dry run
#   (--dry-run) is allowed.
# custom:
#   severity: critical
#   code: dev.ahp-opa.guard.uninstall
violation contains {
	"reason": concat(" ", [
		"Blocked uninstalling the guard or switching it to observe-only; the agent may not switch off its own guard.",
		"Ask the user to change the installation.",
	]),
	"code": "dev.ahp-opa.guard.uninstall",
	"trigger": _command_trigger(cmd),
} if {
	input.ahp.shell.programs["ahp-opa"]
	some i in input.ahp.shell.programs["ahp-opa"]
	cmd := input.ahp.shell.commands[i]
	args.operands(cmd.args)[0] == "install"
	some a in cmd.args
	a in {"--uninstall", "--observe", "--uninstall=true", "--observe=true"}
	not "--dry-run" in cmd.args
}

# METADATA
# title: Forging events for the guard
# description: |
#   Denies running ahp-opa's hook client or daemon from a tool call:
#   ahp-opa-hook, `ahp-opa hook` and `ahp-opa daemon`, piped into or not,
#   and talking to the daemon's socket (curl --unix-socket, socat, nc -U
#   on an ahp-opa socket). Only the agent runs its hooks; a made-up event
#   (a SessionEnd) resets the session's facts, and a daemon started by
#   the agent can answer for the real one. `ahp-opa eval`, `test`,
#   `version` and `--help` are allowed.
# custom:
#   severity: critical
#   code: dev.ahp-opa.guard.forged-event
violation contains {
	"reason": concat(" ", [
		"Blocked running the guard's hook client or daemon, or writing to its socket, from a tool call; only the agent sends hook events, and a made-up one could reset or bypass the guard.",
		"Use `ahp-opa eval` to see how a call would be judged.",
	]),
	"code": "dev.ahp-opa.guard.forged-event",
	"trigger": trigger,
} if {
	some trigger in _guard_forged_event
}

_guard_forged_event contains _command_trigger(cmd) if {
	input.ahp.shell.programs["ahp-opa-hook"]
	some i in input.ahp.shell.programs["ahp-opa-hook"]
	cmd := input.ahp.shell.commands[i]
	not _help_only(cmd.args)
}

_guard_forged_event contains _command_trigger(cmd) if {
	input.ahp.shell.programs["ahp-opa"]
	some i in input.ahp.shell.programs["ahp-opa"]
	cmd := input.ahp.shell.commands[i]
	args.operands(cmd.args)[0] in {"hook", "daemon"}
	not _help_only(cmd.args)
}

_guard_forged_event contains _command_trigger(cmd) if {
	input.ahp.shell.mentions["ahp-opa"]
	some i in input.ahp.shell.mentions["ahp-opa"]
	cmd := input.ahp.shell.commands[i]
	cmd.name in {"curl", "socat", "nc", "ncat", "netcat", "websocat", "python", "python3", "node"}
	some a in cmd.args
	regex.match(`(?i)(unix-socket|unix-connect|^-U$|\.sock|unix:)`, a)
}

_help_only(a) if {
	some x in a
	x in {"--help", "-h", "help", "--version"}
}
