package ahp.tool.before.builtin_test

test_dd_to_disk_denied if {
	denied_only(bash("dd if=ubuntu.iso of=/dev/sda bs=4M"), dd_code)
	denied_only(bash("dd if=/dev/zero of=/dev/nvme0n1"), dd_code)
	denied_only(bash("dd if=img of=/dev/mmcblk0 status=progress"), dd_code)
}

test_dd_to_disk_variants_denied if {
	every c in [
		"sudo dd if=/dev/zero of=/dev/sdb1",
		"dd of=/dev/hda if=x",
		"dd if=x of=/dev/vda",
		"dd if=x of=/dev/xvdf",
		"dd if=x of=/dev/disk2",
		"dd if=x of=/dev/rdisk4 bs=1m",
		"ls /dev && sudo   dd   if=x   of=/dev/sdc",
	] {
		denied_only(bash(c), dd_code)
	}
}

test_dd_other_harnesses_denied if {
	denied_only(gemini("sudo dd if=/dev/urandom of=/dev/sda"), dd_code)
	denied_only(codex(["dd", "if=/dev/zero", "of=/dev/nvme1n1"]), dd_code)
}

test_dd_lookalikes_allowed if {
	allowed(bash("dd if=/dev/zero of=/dev/null bs=1M count=100"))
	allowed(bash("dd if=/dev/sda of=backup.img"))
	allowed(bash("dd if=/dev/urandom of=./disk.img bs=1M count=10"))
	allowed(bash(`echo "dd of=/dev/sda"`))
}

test_mkfs_denied if {
	denied_only(bash("mkfs -t ext4 /dev/sdb1"), mkfs_code)
	denied_only(bash("mkfs.ext4 /dev/sdb1"), mkfs_code)
	denied_only(bash("sudo mkfs.vfat -F 32 /dev/sdc1"), mkfs_code)
}

test_mkfs_variants_denied if {
	denied_only(bash("lsblk; sudo /sbin/mkfs.xfs -f /dev/nvme1n1"), mkfs_code)
	denied_only(bash("mke2fs -t ext4 disk.img"), mkfs_code)
	denied_only(gemini("mkfs.btrfs /dev/vdb"), mkfs_code)
	denied_only(codex(["sudo", "mkfs.ext4", "/dev/sdb1"]), mkfs_code)
}

test_mkfs_lookalikes_allowed if {
	allowed(bash("man mkfs"))
	allowed(bash("which mkfs.ext4"))
	allowed(bash("command -v mkfs.ext4"))
	allowed(bash("mkfs.ext4 -V"))
	allowed(bash("grep -r mkfs docs/"))
}
