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
	input.ahp.shell.classes.grant
	some i in input.ahp.shell.classes.grant
	cmd := input.ahp.shell.commands[i]
	_granter[cmd.name]
	some what in _grants(cmd.name, cmd.args)
}

# The class grant of input.ahp.shell.classes (engine/tools.go).
_granter := {"setcap", "usermod", "gpasswd", "adduser", "addgroup", "dseditgroup", "useradd", "nsenter"}

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
#   container that runs a shell or is interactive; nsenter into
#   process 1; kubectl debug node/NAME (a pod with the node's root file
#   system); and chroot run inside a container or a node's debugging pod
#   (docker exec CTR chroot /host); and the same options in a compose
#   file written to start later. Mounting the project ($PWD:/src) is
#   allowed.
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
	# A command typed, or one a written file runs later (a compose file's
	# services are the docker run they amount to).
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
	input.ahp.shell.classes.grant
	some i in input.ahp.shell.classes.grant
	cmd := input.ahp.shell.commands[i]
	cmd.name == "nsenter"
	some v in args.option_values(cmd.args, "-t", "--target")
	v == "1"
}

# kubectl debug node/NAME starts a pod in the node's namespaces with its
# root file system at /host: root on the node, with or without a command.
_container_host contains concat(" ", [cmd.name, "debug", node]) if {
	some name in ["kubectl", "oc"]
	some i in programs[name]
	cmd := input.ahp.shell.commands[i]
	ops := args.operands(cmd.args)
	"debug" in ops
	some node in ops
	regex.match(`^nodes?/`, node)
}

# chroot inside a container enters the host file system mounted there
# (docker exec CTR chroot /host): the host, not the container, is changed.
_container_host contains concat(" ", ["chroot in a container", cmd.name]) if {
	some cmd in input.ahp.shell.commands
	"chroot" in cmd.wrappers
	some w in object.get(cmd, "where", [])
	w in {"container", "node"}
}

# nsenter that runs a command is a wrapper: the command it runs carries it.
# Entering another process's namespaces needs root and is what a container
# escape does, so any target counts.
_container_host contains concat(" ", ["nsenter", cmd.name]) if {
	some cmd in input.ahp.shell.commands
	"nsenter" in cmd.wrappers
}

_container_start(a) if {
	some op in array.slice(args.operands(a), 0, 2)
	op in {"run", "create", "exec"}
}

# _host_access lists the options of a container command line that give
# it the host, in one pass over the arguments: each option is told by its
# first characters before anything costlier runs.
_host_access(a) := {t |
	some k, o in a
	startswith(o, "-")
	t := _host_option(o, _next_arg(a, k))
}

_next_arg(a, k) := a[k + 1]

_next_arg(a, k) := "" if k + 1 >= count(a)

_host_option(o, _) := o if regex.match(`^--privileged(=true)?$`, o)

_host_option(o, next) := concat("=", [name, "host"]) if {
	some name in {"--pid", "--ipc", "--userns", "--uts", "--cgroupns"}
	startswith(o, name)
	_option_value(o, name, next) == "host"
}

_host_option(o, next) := concat("=", ["--cap-add", c]) if {
	startswith(o, "--cap-add")
	c := _option_value(o, "--cap-add", next)
	trim_prefix(upper(c), "CAP_") in {"ALL", "SYS_ADMIN", "SYS_PTRACE", "SYS_MODULE", "DAC_READ_SEARCH", "SYS_RAWIO"}
}

_host_option(o, next) := concat(" ", ["--security-opt", s]) if {
	startswith(o, "--security-opt")
	s := _option_value(o, "--security-opt", next)
	regex.match(`^(apparmor[=:]unconfined|seccomp[=:]unconfined|label[=:]disable)$`, s)
}

_host_option(o, next) := concat(" ", ["--device", d]) if {
	startswith(o, "--device")
	d := _option_value(o, "--device", next)
	regex.match(`^/dev/(sd|nvme|hd|vd|xvd|mem|kmem|port|disk)`, d)
}

_host_option(o, next) := concat(" ", ["-v", v]) if {
	o in {"-v", "--volume"}
	v := next
	_host_mount(split(v, ":")[0], v)
}

_host_option(o, _) := concat(" ", ["-v", v]) if {
	startswith(o, "--volume=")
	v := substring(o, 9, -1)
	_host_mount(split(v, ":")[0], v)
}

_host_option(o, next) := concat(" ", ["--mount", m]) if {
	startswith(o, "--mount")
	m := _option_value(o, "--mount", next)
	some kv in split(m, ",")
	regex.match(`^(source|src)=`, kv)
	_host_mount(substring(kv, indexof(kv, "=") + 1, -1), m)
}

# _option_value is the value of --name=value, or of --name value.
_option_value(o, name, _) := substring(o, count(name) + 1, -1) if startswith(o, concat("", [name, "="]))

_option_value(o, name, next) := next if o == name

# Host paths that hand the container the machine or the user's files.
_host_mount(src, _) if {
	regex.match(`^(/|~|~/|\$\{?HOME\}?/?|/home/[^/]+/?|/Users/[^/]+/?|/root/?|/home/?|/Users/?|/(etc|proc|sys|boot|dev|usr|var|bin|sbin|lib)(/.*)?)$`, src)
	not regex.match(`^/(var/)?run/docker\.sock$`, src)
	not _harmless_host_file(src)
}

# Files containers commonly borrow from the host: the time zone and the
# CA certificates.
_harmless_host_file(src) if src in {"/etc/localtime", "/etc/timezone", "/etc/ssl/certs", "/etc/ssl/certs/ca-certificates.crt", "/etc/pki/ca-trust", "/usr/share/zoneinfo", "/etc/resolv.conf", "/etc/hosts"}

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
