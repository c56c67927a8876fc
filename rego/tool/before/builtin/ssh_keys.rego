package ahp.tool.before.builtin

import data.ahp.lib.shell
import data.ahp.lib.tools

# METADATA
# title: Reading a private SSH key
# description: |
#   Denies file-read tools on a private key under a .ssh directory
#   (~/.ssh/id_*, $HOME/.ssh/id_*, /home/*/.ssh/id_*, /root/.ssh/id_*, ...;
#   *.pub files are public and allowed), and shell commands that mention such
#   a key or a glob that can match one (cat ~/.ssh/*), unless the command only
#   uses the key without printing it (ssh -i, ssh-add, ssh-keygen, chmod, ls,
#   ...). Copying the whole .ssh directory (cp -r ~/.ssh, tar, scp, rsync,
#   zip) is denied as well.
# custom:
#   severity: high
#   code: dev.ahp-opa.secrets.ssh-private-key
deny contains {
	"reason": concat(" ", [
		"Blocked reading or copying a private SSH key; key material must never reach the agent or leave the machine.",
		"Use the matching .pub file if you need the public key, or ask the user to configure access.",
	]),
	"code": "dev.ahp-opa.secrets.ssh-private-key",
} if {
	_ssh_private_key_access
}

_ssh_private_key_access if {
	tools.is_file_read
	some path in tools.file_paths
	_mentions_private_key(path)
}

_ssh_private_key_access if {
	some cmd in shell.commands
	not cmd.name in _ssh_key_safe_commands
	some arg in cmd.args
	_mentions_private_key(arg)
}

# Even a safe command may not read a key from a redirection: ssh h < ~/.ssh/id_rsa.
_ssh_private_key_access if {
	some cmd in shell.commands
	some i, arg in cmd.args
	_redirected_from(cmd.args, i)
	_mentions_private_key(arg)
}

_ssh_private_key_access if {
	some cmd in shell.commands
	cmd.name in _ssh_dir_copiers
	some arg in cmd.args
	regex.match(`(?:^|[^A-Za-z0-9_.-])\.ssh(?:[/\\]+\.?)*$`, arg)
}

# Commands that can take a key path without showing its contents.
_ssh_key_safe_commands := {
	"[", "chgrp", "chmod", "chown", "echo", "file", "ls", "ssh",
	"ssh-add", "ssh-copy-id", "ssh-keygen", "stat", "test",
}

_ssh_dir_copiers := {"cp", "rsync", "scp", "tar", "zip"}

_redirected_from(args, i) if startswith(args[i], "<")

_redirected_from(args, i) if {
	i > 0
	args[i - 1] == "<"
}

# A reference to a file in a .ssh directory whose name is a private key
# (id_rsa, id_ed25519_sk, id_work, ...) or a glob that could match one
# (*, id*). Names ending in .pub are public keys.
_mentions_private_key(s) if {
	some m in regex.find_all_string_submatch_n(`(?:^|[^A-Za-z0-9_.-])\.ssh[/\\]+([^/\\\s'"]*)`, s, -1)
	name := m[1]
	not endswith(name, ".pub")
	_private_key_name(name)
}

_private_key_name(name) if startswith(name, "id_")

_private_key_name(name) if {
	regex.match(`[*?\[]`, name)
	prefix := regex.replace(name, `[*?\[].*$`, "")
	startswith("id_", prefix)
}
