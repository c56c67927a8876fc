package ahp.tool.before.builtin

import data.ahp.lib.shell

# METADATA
# title: dd onto a block device
# description: |
#   Denies dd writing to a disk device (of=/dev/sd*, nvme*, hd*, vd*, xvd*,
#   mmcblk*, disk*, rdisk*), which overwrites a whole disk or partition.
#   Writing to /dev/null or to regular files is allowed.
# custom:
#   severity: critical
#   code: dev.ahp-opa.disk.dd-block-device
deny contains {
	"reason": concat(" ", [
		"Blocked `dd` writing to a block device; it would overwrite a disk or partition.",
		"Write to a regular file (of=./disk.img) instead, and leave device writes to the user.",
	]),
	"code": "dev.ahp-opa.disk.dd-block-device",
} if {
	some cmd in shell.commands
	cmd.name == "dd"
	some arg in cmd.args
	regex.match(`^of=/dev/(?:sd|nvme|hd|vd|xvd|mmcblk|r?disk)`, arg)
}

# METADATA
# title: Creating a filesystem
# description: |
#   Denies mkfs, mkfs.<type> (mkfs.ext4, mkfs.vfat, ...) and mke2fs when given
#   a device, since formatting erases the data on it. Asking only for help or
#   the version (no operands) is allowed.
# custom:
#   severity: critical
#   code: dev.ahp-opa.disk.mkfs
deny contains {
	"reason": concat(" ", [
		"Blocked creating a filesystem (mkfs); formatting erases everything on the target device.",
		"Ask the user to format disks themselves.",
	]),
	"code": "dev.ahp-opa.disk.mkfs",
} if {
	some cmd in shell.commands
	_mkfs(cmd.name)
	count(shell.operands(cmd.args)) > 0
}

_mkfs(name) if name in {"mkfs", "mke2fs"}

_mkfs(name) if startswith(name, "mkfs.")
