package ahp.tool.before.builtin

import data.ahp.lib.args
import data.ahp.lib.paths
import data.ahp.lib.shell
import input.ahp.shell.programs

# METADATA
# title: dd onto a block device
# description: |
#   Denies dd writing to a disk device (of=/dev/sd*, nvme*, hd*, vd*, xvd*,
#   mmcblk*, disk*, rdisk*, md*, loop*), which overwrites a whole disk or
#   partition. Writing to /dev/null or to regular files is allowed.
# custom:
#   severity: critical
#   code: dev.ahp-opa.disk.dd-block-device
violation contains {
	"reason": concat(" ", [
		"Blocked `dd` writing to a block device; it would overwrite a disk or partition.",
		"Write to a regular file (of=./disk.img) instead, and leave device writes to the user.",
	]),
	"code": "dev.ahp-opa.disk.dd-block-device",
	"trigger": concat(" ", ["dd", a]),
} if {
	programs.dd
	some i in programs.dd
	cmd := input.ahp.shell.commands[i]
	cmd.name == "dd"
	some a in cmd.args
	regex.match(`^of=/dev/(sd|nvme|hd|vd|xvd|mmcblk|r?disk|md|loop|dm-|mapper/)`, a)
}

# METADATA
# title: Creating a filesystem
# description: |
#   Denies mkfs, mkfs.<type> (mkfs.ext4, mkfs.vfat, …), mke2fs, mkswap and
#   newfs when given a target, since formatting erases the data on it.
#   Asking only for help or the version (no operands) is allowed.
# custom:
#   severity: critical
#   code: dev.ahp-opa.disk.mkfs
violation contains {
	"reason": concat(" ", [
		"Blocked creating a filesystem (mkfs); formatting erases everything on the target device.",
		"Ask the user to format disks themselves.",
	]),
	"code": "dev.ahp-opa.disk.mkfs",
	"trigger": _command_trigger(cmd),
} if {
	input.ahp.shell.classes.mkfs
	some i in input.ahp.shell.classes.mkfs
	cmd := input.ahp.shell.commands[i]
	_mkfs(cmd.name)
	count(args.operands(cmd.args)) > 0
	_mkfs_target_device(cmd)
}

# mkfs formats a device, or a file it cannot tell: a path under /dev, or
# one only known at run time ($DEV). An image file (./disk.img) is a file.
_mkfs_target_device(cmd) if {
	some p in cmd.paths
	paths.within(p.path, "/dev")
}

_mkfs_target_device(cmd) if {
	some p in cmd.paths
	p.dynamic
}

_mkfs(name) if name in {"mkfs", "mke2fs", "mkswap", "newfs", "mkdosfs", "mkntfs"}

_mkfs(name) if startswith(name, "mkfs.")

_mkfs(name) if startswith(name, "newfs_")

# METADATA
# title: Wiping disks or files beyond recovery
# description: |
#   Denies wipefs (unless -n), shred, blkdiscard, sgdisk --zap-all/--clear,
#   diskutil erase*/zeroDisk/randomDisk/secureErase/partitionDisk, fdisk,
#   sfdisk and parted changing a device, and any shell write (>, tee, cp)
#   onto a block device.
# custom:
#   severity: critical
#   code: dev.ahp-opa.disk.wipe
violation contains {
	"reason": concat(" ", [
		"Blocked wiping a disk, partition table or file beyond recovery.",
		"Delete files with rm inside the workspace instead, and leave disk operations to the user.",
	]),
	"code": "dev.ahp-opa.disk.wipe",
} if {
	input.ahp.tool.family == "shell"
	_wipes
}

_wipes if {
	programs.wipefs
	some i in programs.wipefs
	cmd := input.ahp.shell.commands[i]
	cmd.name == "wipefs"
	count(args.operands(cmd.args)) > 0
	not args.has_short_flag(cmd.args, "n")
	not "--no-act" in cmd.args
}

_wipes if {
	some name, ixs in programs
	name in {"shred", "blkdiscard", "srm", "wipe"}
	some i in ixs
	cmd := input.ahp.shell.commands[i]
	cmd.name == name
	count(args.operands(cmd.args)) > 0
}

_wipes if {
	programs.sgdisk
	some i in programs.sgdisk
	cmd := input.ahp.shell.commands[i]
	cmd.name == "sgdisk"
	some o in args.options(cmd.args)
	regex.match(`^(-[a-zA-Z]*[Zzo][a-zA-Z]*|--zap-all|--zap|--clear)$`, o)
}

_wipes if {
	programs.diskutil
	some i in programs.diskutil
	cmd := input.ahp.shell.commands[i]
	cmd.name == "diskutil"
	some a in cmd.args
	regex.match(`(?i)^(erase|zerodisk|randomdisk|secureerase|partitiondisk|reformat)`, a)
}

_wipes if {
	some name, ixs in programs
	name in {"fdisk", "sfdisk", "parted", "gdisk", "cfdisk"}
	some i in ixs
	cmd := input.ahp.shell.commands[i]
	cmd.name == name
	not _lists_partitions(cmd)
	some p in cmd.paths
	paths.block_device(p)
}

_lists_partitions(cmd) if {
	some o in args.options(cmd.args)
	o in {"-l", "--list"}
}

_lists_partitions(cmd) if {
	cmd.name == "sfdisk"
	some o in args.options(cmd.args)
	o in {"-s", "--show-size", "-d", "--dump", "-J", "--json"}
}

_lists_partitions(cmd) if {
	cmd.name == "parted"
	some a in cmd.args
	a in {"print", "-l", "--list"}
}

_wipes if {
	input.ahp.writes
	input.ahp.tool.family == "shell"
	some w in shell.writes
	paths.block_device(w.path)
}
