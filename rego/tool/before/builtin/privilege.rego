package ahp.tool.before.builtin

import data.ahp.lib.args
import data.ahp.lib.paths
import data.ahp.lib.shell
import input.ahp.shell.programs

# METADATA
# title: Running commands as another user
# description: |
#   Denies sudo, su, doas, pkexec, runuser and run0, whether they wrap the
#   command (sudo rm …) or run a shell (sudo -i, su -). Commands that only
#   ask sudo about itself (sudo -l, sudo -v, sudo -k, sudo -V) are allowed.
# custom:
#   severity: high
#   code: dev.ahp-opa.privilege.sudo
violation contains {
	"reason": concat(" ", [
		"Blocked running a command with elevated privileges (sudo, su, doas, pkexec).",
		"Run it without privileges, or ask the user to run the privileged step themselves.",
	]),
	"code": "dev.ahp-opa.privilege.sudo",
	"trigger": _command_trigger(input.ahp.shell.commands[i]),
} if {
	input.ahp.shell.classes.escalator
	some i in input.ahp.shell.classes.escalator
	_escalates(input.ahp.shell.commands[i])
}

_escalates(cmd) if shell.privileged(cmd)

_escalates(cmd) if {
	cmd.name in shell.escalators
	not _sudo_query(cmd)
}

_sudo_query(cmd) if {
	cmd.name == "sudo"
	count(cmd.args) > 0
	every a in cmd.args {
		a in {"-l", "-v", "-k", "-K", "-V", "-h", "--list", "--validate", "--reset-timestamp", "--version", "--help", "-n", "--non-interactive"}
	}
}

# METADATA
# title: Unsafe permission changes
# description: |
#   Denies chmod that sets the setuid or setgid bit (4755, u+s, g+s), makes
#   files world-writable recursively (chmod -R 777, -R o+w, -R a+rwx),
#   makes a system, startup or credential file world-writable (chmod o+w
#   /etc/passwd, chmod 777 ~/.ssh), makes a credential readable by others
#   (chmod 644 ~/.ssh/id_rsa), or changes a critical path recursively
#   (chmod -R … / or ~).
# custom:
#   severity: high
#   code: dev.ahp-opa.privilege.chmod-unsafe
violation contains {
	"reason": concat(" ", [
		"Blocked an unsafe chmod: setuid/setgid bits, recursive world-writable modes or recursive changes of system paths open the machine to privilege escalation.",
		"Use the narrowest mode on project files, for example `chmod -R u+rwX,go+rX ./dist` or `chmod +x ./script.sh`.",
	]),
	"code": "dev.ahp-opa.privilege.chmod-unsafe",
	"trigger": _command_trigger(cmd),
} if {
	programs.chmod
	some i in programs.chmod
	cmd := input.ahp.shell.commands[i]
	cmd.name == "chmod"
	_unsafe_chmod(cmd)
}

_chmod_modes(cmd) := [a | some a in args.operands(cmd.args); regex.match(`^([0-7]{3,4}|[ugoa]*[-+=][rwxXstugo]*(,[ugoa]*[-+=][rwxXstugo]*)*)$`, a)]

_unsafe_chmod(cmd) if {
	some m in _chmod_modes(cmd)
	_setid(m)
}

_unsafe_chmod(cmd) if {
	_chmod_recursive(cmd.args)
	some m in _chmod_modes(cmd)
	_world_writable(m)
}

_unsafe_chmod(cmd) if {
	_chmod_recursive(cmd.args)
	some p in cmd.paths
	paths.critical(p)
}

# Opening one file can be enough: a world-writable system file or
# startup file lets any local user run code as its owner, and a
# credential readable by others is no longer the user's alone.
_unsafe_chmod(cmd) if {
	some m in _chmod_modes(cmd)
	_world_writable(m)
	some p in cmd.paths
	_guarded_path(p)
}

_unsafe_chmod(cmd) if {
	some m in _chmod_modes(cmd)
	_world_readable(m)
	some p in cmd.paths
	_secret_path(p)
	not p.inside_workspace
}

_guarded_path(p) if {
	paths.critical(p)
	not startswith(p.path, "/dev/") # chmod 666 /dev/null restores a device
}

_guarded_path(p) if paths.startup_file(p)

_guarded_path(p) if _secret_path(p)

_secret_path(p) if paths.credential_file(p)

_secret_path(p) if paths.credential_dir(p)

_secret_path(p) if paths.ssh_private_key(p)

_world_readable(m) if regex.match(`^[0-7]?[0-7][0-7][4-7]$`, m)

_world_readable(m) if regex.match(`(^|,)[ug]*[oa][ugoa]*[+=][wxXst]*r`, m)

_world_readable(m) if regex.match(`(^|,)[+=][wxXst]*r`, m)

_chmod_recursive(a) if args.has_short_flag(a, "R")

_chmod_recursive(a) if args.has_long_flag(a, "--recursive", 5)

_setid(m) if regex.match(`^[2-7][0-7]{3}$`, m)

_setid(m) if regex.match(`(^|,)[ugoa]*[+=][rwxXt]*s`, m)

_world_writable(m) if regex.match(`^[0-7]?[0-7][0-7][2367]$`, m)

_world_writable(m) if regex.match(`(^|,)[ug]*[oa][ugoa]*[+=][rwxXst]*w`, m)

_world_writable(m) if regex.match(`(^|,)[+=][rwxXst]*w`, m)

# METADATA
# title: Giving files to root
# description: |
#   Denies chown or chgrp to root (root, 0, root:root, :root, :wheel), and
#   any recursive ownership change of a critical path (/, ~, /etc…).
# custom:
#   severity: high
#   code: dev.ahp-opa.privilege.chown-root
violation contains {
	"reason": concat(" ", [
		"Blocked changing file ownership to root or recursively on system paths; root-owned files in user space are a privilege-escalation path and lock the user out.",
		"Leave ownership as it is; if it must change, ask the user.",
	]),
	"code": "dev.ahp-opa.privilege.chown-root",
	"trigger": _command_trigger(cmd),
} if {
	input.ahp.tool.family == "shell"
	some name, ixs in programs
	name in {"chown", "chgrp"}
	some i in ixs
	cmd := input.ahp.shell.commands[i]
	_unsafe_chown(cmd)
}

_unsafe_chown(cmd) if {
	owner := args.operands(cmd.args)[0]
	_root_owner(cmd.name, owner)
}

_unsafe_chown(cmd) if {
	_chmod_recursive(cmd.args)
	some p in cmd.paths
	p.arg > 0
	paths.critical(p)
}

_root_owner("chown", owner) if regex.match(`^(root|0)([:.].*)?$`, owner)

_root_owner("chown", owner) if regex.match(`^[^:]*:(root|0|wheel)$`, owner)

_root_owner("chgrp", owner) if owner in {"root", "0", "wheel"}
