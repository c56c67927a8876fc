package ahp.tool.before.builtin

import data.ahp.lib.args
import input.ahp.shell.programs

# METADATA
# title: Granting capabilities or privileged groups
# description: |
#   Denies setcap (file capabilities turn a program into a root-equivalent
#   one) and adding a user to a group that amounts to root: sudo, wheel,
#   admin, adm, root, docker, lxd, libvirt, disk, shadow, through usermod
#   -aG / -G / --groups, gpasswd -a / -M, adduser or addgroup USER GROUP,
#   and macOS dseditgroup. Reading them (getcap, id, groups) is allowed.
# custom:
#   severity: critical
#   code: dev.ahp-opa.privilege.capability-or-group
violation contains {
	"reason": concat(" ", [
		"Blocked granting file capabilities or membership of a privileged group (sudo, wheel, docker, …); either gives root-level access.",
		"Ask the user to change capabilities or group membership themselves.",
	]),
	"code": "dev.ahp-opa.privilege.capability-or-group",
	"trigger": concat(" ", [cmd.name, what]),
} if {
	some name, ixs in programs
	_granter[name]
	some i in ixs
	cmd := input.ahp.shell.commands[i]
	cmd.name == name
	some what in _grants(name, cmd.args)
}

_granter := {"setcap", "usermod", "gpasswd", "adduser", "addgroup", "dseditgroup", "useradd"}

_privileged_groups := {"sudo", "wheel", "admin", "adm", "root", "docker", "lxd", "lxc", "libvirt", "disk", "shadow", "sudoers"}

_grants("setcap", a) := {ops[0]} if {
	ops := args.operands(a)
	count(ops) >= 2
	not "-v" in a
	not "-r" in a
}

_grants(name, a) := {g |
	some v in _group_values(a)
	some g in split(v, ",")
	g in _privileged_groups
} if name in {"usermod", "useradd"}

_group_values(a) := array.concat(
	[a[i + 1] |
		some i, o in a
		regex.match(`^-[a-zA-Z]*G$|^--groups$`, o)
	],
	[substring(o, 9, -1) |
		some o in a
		startswith(o, "--groups=")
	],
)

_grants("gpasswd", a) := {g} if {
	some o in args.options(a)
	o in {"-a", "--add", "-M", "--members"}
	g := args.operands(a)[count(args.operands(a)) - 1]
	g in _privileged_groups
}

_grants(name, a) := {g} if {
	name in {"adduser", "addgroup"}
	ops := args.operands(a)
	count(ops) == 2
	g := ops[1]
	g in _privileged_groups
}

_grants("dseditgroup", a) := {g} if {
	"-a" in a
	g := args.operands(a)[count(args.operands(a)) - 1]
	g in _privileged_groups
}

# METADATA
# title: Containers that reach the host
# description: |
#   Denies docker/podman/nerdctl run, create and exec that give the
#   container the host: --privileged, --pid/--ipc/--userns/--uts=host,
#   --cap-add ALL/SYS_ADMIN/SYS_PTRACE/SYS_MODULE/DAC_READ_SEARCH,
#   apparmor or seccomp unconfined, host block devices, bind mounts
#   (-v or --mount) of /, a home directory, /root, /etc, /proc, /sys,
#   /var, /usr, /boot or /dev, and the Docker socket mounted into a
#   container that runs a shell or is interactive; and nsenter into
#   process 1. Mounting the project ($PWD:/src) is allowed.
# custom:
#   severity: critical
#   code: dev.ahp-opa.privilege.container-host
violation contains {
	"reason": concat(" ", [
		"Blocked a container with access to the host (privileged mode, host namespaces, a mount of / or a home directory, or the Docker socket); it is root on this machine.",
		"Mount only the project directory (-v \"$PWD\":/src) and drop the host options.",
	]),
	"code": "dev.ahp-opa.privilege.container-host",
	"trigger": trigger,
} if {
	input.ahp.tool.family == "shell"
	some trigger in _container_host
}

_container_host contains concat(" ", [cmd.name, what]) if {
	input.ahp.shell.classes.infra
	some i in input.ahp.shell.classes.infra
	cmd := input.ahp.shell.commands[i]
	cmd.name in {"docker", "podman", "nerdctl"}
	_container_start(cmd.args)
	some what in _host_access(cmd.args)
}

# nsenter into process 1 enters the host's namespaces.
_container_host contains "nsenter --target 1" if {
	programs.nsenter
	some i in programs.nsenter
	cmd := input.ahp.shell.commands[i]
	cmd.name == "nsenter"
	some v in args.option_values(cmd.args, "-t", "--target")
	v == "1"
}

_container_start(a) if {
	some op in array.slice(args.operands(a), 0, 2)
	op in {"run", "create", "exec"}
}

_host_access(a) := {o |
	some o in args.options(a)
	regex.match(`^--privileged(=true)?$`, o)
} | {concat("=", [o, "host"]) |
	some o in {"--pid", "--ipc", "--userns", "--uts", "--cgroupns"}
	"host" in args.option_values(a, "", o)
} | {concat("=", ["--cap-add", c]) |
	some c in args.option_values(a, "", "--cap-add")
	upper(trim_prefix(upper(c), "CAP_")) in {"ALL", "SYS_ADMIN", "SYS_PTRACE", "SYS_MODULE", "DAC_READ_SEARCH", "SYS_RAWIO"}
} | {concat(" ", ["--security-opt", s]) |
	some s in args.option_values(a, "", "--security-opt")
	regex.match(`^(apparmor[=:]unconfined|seccomp[=:]unconfined|label[=:]disable)$`, s)
} | {concat(" ", ["--device", d]) |
	some d in args.option_values(a, "", "--device")
	regex.match(`^/dev/(sd|nvme|hd|vd|xvd|mem|kmem|port|disk)`, d)
} | {concat(" ", ["-v", v]) |
	some v in args.option_values(a, "-v", "--volume")
	_host_mount(split(v, ":")[0], v)
} | {concat(" ", ["--mount", m]) |
	some m in args.option_values(a, "", "--mount")
	some kv in split(m, ",")
	regex.match(`^(source|src)=`, kv)
	_host_mount(regex.replace(kv, `^[^=]*=`, ""), m)
}

# Host paths that hand the container the machine or the user's files.
_host_mount(src, _) if {
	regex.match(`^(/|~|~/|\$\{?HOME\}?/?|/home/[^/]+/?|/Users/[^/]+/?|/root/?|/home/?|/Users/?|/(etc|proc|sys|boot|dev|usr|var|bin|sbin|lib)(/.*)?)$`, src)
	not regex.match(`^/(var/)?run/docker\.sock$`, src)
}

# The Docker socket is root on the host; mounted into a container that
# runs a shell or is interactive, the agent drives it.
_host_mount(src, _) if {
	regex.match(`^/(var/)?run/docker\.sock$`, src)
	_container_shell
}

_container_shell if {
	some cmd in input.ahp.shell.commands
	cmd.name in {"docker", "podman", "nerdctl"}
	some o in args.options(cmd.args)
	regex.match(`^-[a-zA-Z]*[it][a-zA-Z]*$|^--interactive$|^--tty$`, o)
}

_container_shell if {
	some cmd in input.ahp.shell.commands
	cmd.name in {"docker", "podman", "nerdctl"}
	some op in args.operands(cmd.args)
	op in {"sh", "bash", "ash", "zsh", "/bin/sh", "/bin/bash"}
}
