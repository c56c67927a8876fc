package ahp.tool.before.builtin_test

# The guard protects itself: dev.ahp-opa.guard.*

# dev.ahp-opa.guard.settings-tamper

test_guard_settings_tamper_denied if {
	every c in [
		"rm .claude/settings.json",
		"rm -f ~/.claude/settings.json",
		"mv ~/.gemini/settings.json /tmp/gemini.bak",
		"rm -rf ~/.codex/hooks.json",
		"rm -rf .cursor/hooks.json",
		"rm ~/.copilot/hooks/guard.json",
		"chmod 000 ~/.claude/settings.json",
		"truncate -s 0 .claude/settings.local.json",
		"rm -rf ~/.config/ahp-opa",
		"rm -rf ~/.claude",
		"sudo rm /etc/claude-code/managed-settings.json",
	] {
		denies(bash(c), "dev.ahp-opa.guard.settings-tamper")
	}
	denies(tool("delete_file", {"target_file": ".claude/settings.json"}), "dev.ahp-opa.guard.settings-tamper")
}

test_guard_settings_tamper_guard_paths_denied if {
	# The --config file and --policy paths the guard runs with.
	cfg := {"guard_paths": ["/etc/ahp-opa/policy", "~/work/ahp-opa.yaml"]}
	"dev.ahp-opa.guard.settings-tamper" in codes_with(bash("rm -rf /etc/ahp-opa/policy"), cfg)
	"dev.ahp-opa.guard.settings-tamper" in codes_with(bash("mv /etc/ahp-opa/policy/deny.rego /tmp/"), cfg)
	"dev.ahp-opa.agent.config-write" in codes_with(bash("echo 'package x' > /etc/ahp-opa/policy/deny.rego"), cfg)
	"dev.ahp-opa.agent.config-write" in codes_with(tool("Write", {"file_path": "/etc/ahp-opa/policy/allow.rego", "content": "package x"}), cfg)
	not "dev.ahp-opa.guard.settings-tamper" in codes_with(bash("rm -rf /etc/nginx/conf.d/old"), cfg)
}

test_guard_settings_tamper_lookalikes_allowed if {
	every c in [
		"cat .claude/settings.json",
		"ls -la ~/.claude",
		"chmod 644 .claude/settings.json",
		"rm -rf .claude-cache",
		"rm src/settings.json",
		"jq . ~/.gemini/settings.json",
		"git diff .claude/settings.json",
	] {
		lookalike_allowed(bash(c), "dev.ahp-opa.guard.settings-tamper")
	}
	lookalike_allowed(tool("Read", {"file_path": "/home/dev/repo/.claude/settings.json"}), "dev.ahp-opa.guard.settings-tamper")
}

# dev.ahp-opa.guard.daemon-stop

test_guard_daemon_stop_denied if {
	every c in [
		`pkill -f "ahp-opa daemon"`,
		"killall ahp-opa",
		"kill $(pgrep -f ahp-opa)",
		"kill -9 $(cat /run/user/1000/ahp-opa/d-abc.pid)",
		"systemctl --user stop ahp-opa.service",
		"launchctl bootout gui/501/dev.ahp-opa.daemon",
		"rm -rf /run/user/1000/ahp-opa",
		"rm /tmp/ahp-opa-1000/d-3k2j.sock",
	] {
		denies(bash(c), "dev.ahp-opa.guard.daemon-stop")
	}
}

test_guard_daemon_stop_evasions_denied if {
	denies(codex(["bash", "-lc", "pkill -f ahp-opa"]), "dev.ahp-opa.guard.daemon-stop")
	denies(bash("sudo pkill -9 -f ahp-opa-hook"), "dev.ahp-opa.guard.daemon-stop")
}

test_guard_daemon_stop_lookalikes_allowed if {
	every c in [
		"pgrep -fa ahp-opa",
		"ps aux | grep ahp-opa",
		"ls -la /run/user/1000/ahp-opa",
		"pkill -f 'node server.js'",
		"kill %1",
		"systemctl --user status ahp-opa.service",
	] {
		lookalike_allowed(bash(c), "dev.ahp-opa.guard.daemon-stop")
	}
}

# dev.ahp-opa.guard.binary-tamper

test_guard_binary_tamper_denied if {
	every c in [
		"chmod -x /usr/local/bin/ahp-opa-hook",
		"rm ~/.local/bin/ahp-opa",
		"mv /usr/local/bin/ahp-opa /usr/local/bin/ahp-opa.off",
		"ln -sf /bin/true ~/.local/bin/ahp-opa-hook",
		"cp /bin/true /usr/local/bin/ahp-opa-hook",
		"printf '#!/bin/sh\\necho {}' > ~/.local/bin/ahp-opa-hook",
	] {
		denies(bash(c), "dev.ahp-opa.guard.binary-tamper")
	}
	denies(tool("Write", {"file_path": "/home/dev/.local/bin/ahp-opa-hook", "content": "#!/bin/sh\necho '{}'"}), "dev.ahp-opa.guard.binary-tamper")
}

test_guard_binary_tamper_lookalikes_allowed if {
	every c in ["ls -l /usr/local/bin/ahp-opa", "sha256sum /usr/local/bin/ahp-opa-hook", "ahp-opa version", "file ~/.local/bin/ahp-opa", "go build -o bin/ahp-opa-dev ./cmd/ahp-opa"] {
		lookalike_allowed(bash(c), "dev.ahp-opa.guard.binary-tamper")
	}
}

test_guard_binary_tamper_evasions_denied if {
	denies(bash("sudo chattr +i /usr/local/bin/ahp-opa"), "dev.ahp-opa.guard.binary-tamper")
	denies(codex(["bash", "-c", "chmod 000 /usr/local/bin/ahp-opa-hook"]), "dev.ahp-opa.guard.binary-tamper")
}

# dev.ahp-opa.guard.uninstall

test_guard_uninstall_denied if {
	every c in [
		"ahp-opa install claude-code --uninstall",
		"ahp-opa install codex --scope user --uninstall",
		"ahp-opa install gemini-cli --observe",
		"~/.local/bin/ahp-opa install copilot --uninstall",
	] {
		denies(bash(c), "dev.ahp-opa.guard.uninstall")
	}
}

test_guard_uninstall_evasions_denied if {
	denies(codex(["ahp-opa", "install", "claude-code", "--uninstall=true"]), "dev.ahp-opa.guard.uninstall")
}

test_guard_uninstall_lookalikes_allowed if {
	every c in ["ahp-opa install claude-code --uninstall --dry-run", "ahp-opa install --help", "ahp-opa version"] {
		lookalike_allowed(bash(c), "dev.ahp-opa.guard.uninstall")
	}
}

# dev.ahp-opa.guard.forged-event

test_guard_forged_event_denied if {
	every c in [
		`echo '{"hook_event_name":"SessionEnd","session_id":"s1"}' | ahp-opa-hook claude-code`,
		"ahp-opa-hook codex < /tmp/event.json",
		`printf '{"hook_event_name":"SessionStart"}' | ahp-opa hook claude-code`,
		"ahp-opa daemon --socket /run/user/1000/ahp-opa/d-x.sock",
		"curl --unix-socket /run/user/1000/ahp-opa/d-x.sock http://d/v1/decide -d @ev.json",
	] {
		denies(bash(c), "dev.ahp-opa.guard.forged-event")
	}
}

test_guard_forged_event_evasions_denied if {
	denies(codex(["bash", "-lc", "cat ev.json | ~/.local/bin/ahp-opa-hook gemini-cli"]), "dev.ahp-opa.guard.forged-event")
	denies(bash("socat - UNIX-CONNECT:/tmp/ahp-opa-1000/d-1.sock < ev.json"), "dev.ahp-opa.guard.forged-event")
}

test_guard_forged_event_lookalikes_allowed if {
	every c in ["ahp-opa eval event.json", "ahp-opa test policy/", "ahp-opa-hook --help", "ahp-opa hook --help", "ahp-opa version"] {
		lookalike_allowed(bash(c), "dev.ahp-opa.guard.forged-event")
	}
}
