package ahp.tool.before.builtin

import data.ahp.lib.args
import data.ahp.lib.config
import data.ahp.lib.paths
import data.ahp.lib.shell
import data.ahp.lib.tools
import input.ahp.shell.programs

# METADATA
# title: Writing SSH authorized_keys
# description: |
#   Denies writing ~/.ssh/authorized_keys (or authorized_keys2, or any file
#   in /etc/ssh) with a file tool or a shell command (echo key >>
#   ~/.ssh/authorized_keys, tee -a, cp), and ssh-copy-id: each lets someone
#   log in to the machine.
# custom:
#   severity: critical
#   code: dev.ahp-opa.persistence.authorized-keys
violation contains {
	"reason": concat(" ", [
		"Blocked changing SSH authorized_keys; it would let someone log in to this machine.",
		"Ask the user to add SSH keys themselves.",
	]),
	"code": "dev.ahp-opa.persistence.authorized-keys",
	"trigger": trigger,
} if {
	some trigger in _authorizes_key
}

_authorizes_key contains _path_trigger(p) if {
	input.ahp.writes
	some p in tools.written
	paths.authorized_keys(p)
	not config.path_excepted(p)
}

_authorizes_key contains "ssh-copy-id" if programs["ssh-copy-id"]

# METADATA
# title: Changing shell startup files or scheduled jobs
# description: |
#   Denies writing files that run code at login or on a schedule: ~/.bashrc,
#   ~/.zshrc, ~/.profile and their kin, fish config, autostart entries,
#   systemd user units, LaunchAgents, /etc/profile.d and cron directories;
#   and installing cron jobs with crontab (crontab -l is allowed).
# custom:
#   severity: high
#   code: dev.ahp-opa.persistence.startup-files
violation contains {
	"reason": concat(" ", [
		"Blocked changing a shell startup file or scheduled job; code placed there runs on every login or on a timer.",
		"Set variables for a single command instead (FOO=1 cmd) or in the project's own files, and ask the user to change their startup files.",
	]),
	"code": "dev.ahp-opa.persistence.startup-files",
	"trigger": trigger,
} if {
	some trigger in _persists
}

_persists contains _path_trigger(p) if {
	input.ahp.writes
	some p in tools.written
	paths.startup_file(p)
	not config.path_excepted(p)
}

# A file copied, linked or moved into a directory keeps its name:
# cp dots/.bashrc ~ writes ~/.bashrc.
_persists contains _path_trigger(dest) if {
	input.ahp.writes
	some name in {"cp", "mv", "ln", "install", "rsync", "ditto"}
	programs[name]
	some i in programs[name]
	cmd := input.ahp.shell.commands[i]
	ops := [q | some q in cmd.paths]
	count(ops) > 1
	dest := ops[count(ops) - 1]
	is_string(dest.home_rel)
	some k, src in ops
	k < count(ops) - 1
	paths.startup_file({"path": concat("/", [dest.path, src.base]), "base": src.base, "home_rel": trim_left(concat("/", [dest.home_rel, src.base]), "/")})
	not config.path_excepted(dest)
}

_persists contains "crontab" if {
	programs.crontab
	some i in programs.crontab
	not _crontab_read(input.ahp.shell.commands[i])
}

_crontab_read(cmd) if {
	some o in args.options(cmd.args)
	o in {"-l", "-V", "--help"}
}

# METADATA
# title: Writing git hooks
# description: |
#   Denies creating or changing files in .git/hooks (and husky hook
#   scripts) with a file tool or a shell command: hooks run code on every
#   commit, checkout or push, unseen.
# custom:
#   severity: high
#   code: dev.ahp-opa.git.hooks-write
violation contains {
	"reason": concat(" ", [
		"Blocked writing a git hook; hooks run code on every commit, checkout or push.",
		"Propose the hook to the user as a file in the repository (e.g. scripts/pre-commit) and let them install it.",
	]),
	"code": "dev.ahp-opa.git.hooks-write",
	"trigger": _path_trigger(p),
} if {
	input.ahp.writes
	some p in tools.written
	paths.git_hook(p)
	not config.path_excepted(p)
}

# METADATA
# title: Changing the agent's own settings
# description: |
#   Denies writing the files that configure coding agents' hooks,
#   permissions and MCP servers — .claude/settings*.json, .gemini/
#   settings.json, .codex/config.toml, .cursor/hooks.json, .mcp.json, …
#   — and ahp-opa's own configuration, plus the paths listed in
#   protected_paths: an agent that rewrites them can switch its guard off.
# custom:
#   severity: critical
#   code: dev.ahp-opa.agent.config-write
violation contains {
	"reason": concat(" ", [
		"Blocked changing the agent's own settings, hooks or guard policy; the agent may not loosen its own limits.",
		"Describe the change you need and ask the user to make it.",
	]),
	"code": "dev.ahp-opa.agent.config-write",
	"trigger": _path_trigger(p),
} if {
	input.ahp.writes
	some p in tools.written
	_agent_config(p)
}

_agent_config(p) if paths.agent_config(p)

_agent_config(p) if config.path_protected(p)

# The configuration and policy the running guard was started with.
_agent_config(p) if config.guard_path(p)

# METADATA
# title: Hijacking a command through PATH
# description: |
#   Denies writing a program named like a trusted command (sudo, su, git,
#   ssh, gpg, python, node, docker, kubectl, …) into a user bin directory
#   that comes early in PATH (~/.local/bin, ~/bin, ~/.cargo/bin, ~/go/bin,
#   npm/yarn/bun/deno bins, pyenv/rbenv/asdf shims): the next time the user
#   types the command, the planted one runs, with their password.
#   Installing programs under their own names is allowed.
# custom:
#   severity: critical
#   code: dev.ahp-opa.persistence.path-hijack
violation contains {
	"reason": concat(" ", [
		"Blocked placing a program named like a trusted command (sudo, git, ssh, …) in a user bin directory on PATH; it would run instead of the real one.",
		"Give your tool its own name, or ask the user to install it.",
	]),
	"code": "dev.ahp-opa.persistence.path-hijack",
	"trigger": concat(" ", ["write", p.raw]),
} if {
	input.ahp.writes
	some p in tools.written
	_path_hijack(p)
	not config.path_excepted(p)
}

_path_hijack(p) if {
	_bin_dir(p.home_rel)
	_path_hijack_name(p)
}

# Cheap first test: the path is in some bin or shims directory of a home.
_bin_dir(rel) if contains(rel, "bin/")

_bin_dir(rel) if contains(rel, "shims/")

_path_hijack_name(p) if regex.match(`^(\.local/bin|bin|\.bin|\.cargo/bin|go/bin|\.go/bin|\.npm-global/bin|\.npm/bin|\.yarn/bin|\.bun/bin|\.deno/bin|\.volta/bin|\.pyenv/shims|\.rbenv/shims|\.asdf/shims|\.nix-profile/bin|\.local/share/mise/shims)/(sudo|su|doas|pkexec|passwd|login|git|ssh|scp|sftp|ssh-add|ssh-agent|gpg|gpg2|ls|cd|cat|ps|env|sh|bash|zsh|fish|python|python3|pip|pip3|node|npm|npx|pnpm|yarn|curl|wget|docker|kubectl|aws|gcloud|az|gh|make|go|cargo|rustc|java|ruby|terraform|op|security|keychain)$`, p.home_rel)

# METADATA
# title: Detached loops that call out
# description: |
#   Denies a fetch or a network connection that repeats in an endless loop
#   and outlives the call: started in the background, under nohup or
#   setsid, as a transient systemd unit, through at, or in a detached or
#   restarting container (docker run -d --restart=always). This is how a
#   beacon or a command-and-control loop is kept alive. Loops that poll a
#   loopback address (a local health check) are allowed.
# custom:
#   severity: critical
#   code: dev.ahp-opa.persistence.beacon
violation contains {
	"reason": concat(" ", [
		"Blocked a detached loop that keeps contacting a remote host; it outlives this session, like a beacon or a command-and-control channel.",
		"Run a single request in the foreground instead, and ask the user before starting anything that keeps running.",
	]),
	"code": "dev.ahp-opa.persistence.beacon",
	"trigger": trigger,
} if {
	input.ahp.tool.family == "shell"
	some trigger in _beacons
}

_beacons contains _command_trigger(cmd) if {
	some cmd in input.ahp.shell.commands
	cmd.repeats
	cmd.name in (shell.downloaders | shell.network_tools)
	_outlives_call(cmd)
	not _loopback_only(cmd)
}

_outlives_call(cmd) if cmd.background

_outlives_call(cmd) if {
	some w in object.get(cmd, "where", [])
	w in {"detached", "later", "persistent"}
}

_loopback_only(cmd) if {
	count(object.get(cmd, "urls", [])) > 0
	every u in cmd.urls {
		config.local_host(u.host)
	}
}
