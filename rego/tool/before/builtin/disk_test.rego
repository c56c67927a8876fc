package ahp.tool.before.builtin_test

# dev.ahp-opa.disk.dd-block-device

test_dd_block_device_denied if {
	every c in [
		"dd if=ubuntu.iso of=/dev/sda bs=4M",
		"dd if=/dev/zero of=/dev/nvme0n1",
		"dd if=img of=/dev/mmcblk0 status=progress",
		"dd of=/dev/hda if=x",
		"dd if=x of=/dev/disk2",
		"dd if=x of=/dev/rdisk4 bs=1m",
	] {
		denies(bash(c), "dev.ahp-opa.disk.dd-block-device")
	}
}

test_dd_block_device_evasions_denied if {
	denies(bash("sudo dd if=/dev/zero of=/dev/sdb1"), "dev.ahp-opa.disk.dd-block-device")
	denies(bash("ls /dev && d''d   if=x   of=/dev/sdc"), "dev.ahp-opa.disk.dd-block-device")
	denies(gemini("dd if=/dev/urandom of=/dev/sda"), "dev.ahp-opa.disk.dd-block-device")
	denies(codex(["dd", "if=/dev/zero", "of=/dev/nvme1n1"]), "dev.ahp-opa.disk.dd-block-device")
	denies(bash(`bash -c "dd if=/dev/zero of=/dev/vda"`), "dev.ahp-opa.disk.dd-block-device")
}

test_dd_block_device_lookalikes_allowed if {
	lookalike_allowed(bash("dd if=/dev/zero of=/dev/null bs=1M count=100"), "dev.ahp-opa.disk.dd-block-device")
	lookalike_allowed(bash("dd if=/dev/sda of=backup.img"), "dev.ahp-opa.disk.dd-block-device")
	lookalike_allowed(bash("dd if=/dev/urandom of=./disk.img bs=1M count=10"), "dev.ahp-opa.disk.dd-block-device")
	lookalike_allowed(bash(`echo "dd of=/dev/sda"`), "dev.ahp-opa.disk.dd-block-device")
}

# dev.ahp-opa.disk.mkfs

test_mkfs_denied if {
	denied_only(bash("mkfs -t ext4 /dev/sdb1"), "dev.ahp-opa.disk.mkfs")
	denied_only(bash("mkfs.ext4 /dev/sdb1"), "dev.ahp-opa.disk.mkfs")
	denied_only(bash("mke2fs -t ext4 /dev/loop0"), "dev.ahp-opa.disk.mkfs")
	denied_only(bash("mkfs -t ext4 $DEV"), "dev.ahp-opa.disk.mkfs")
	denied_only(bash("mkswap /dev/sdb2"), "dev.ahp-opa.disk.mkfs")
}

test_mkfs_evasions_denied if {
	denies(bash("lsblk; sudo /sbin/mkfs.xfs -f /dev/nvme1n1"), "dev.ahp-opa.disk.mkfs")
	denies(gemini("mkfs.btrfs /dev/vdb"), "dev.ahp-opa.disk.mkfs")
	denies(codex(["sudo", "mkfs.ext4", "/dev/sdb1"]), "dev.ahp-opa.disk.mkfs")
	denies(bash("MKFS.EXT4 /dev/sdb1"), "dev.ahp-opa.disk.mkfs")
}

test_mkfs_lookalikes_allowed if {
	lookalike_allowed(bash("man mkfs"), "dev.ahp-opa.disk.mkfs")
	lookalike_allowed(bash("which mkfs.ext4"), "dev.ahp-opa.disk.mkfs")
	lookalike_allowed(bash("command -v mkfs.ext4"), "dev.ahp-opa.disk.mkfs")
	lookalike_allowed(bash("mkfs.ext4 -V"), "dev.ahp-opa.disk.mkfs")
	lookalike_allowed(bash("grep -r mkfs docs/"), "dev.ahp-opa.disk.mkfs")
	lookalike_allowed(bash("mkfs.ext4 ./disk.img"), "dev.ahp-opa.disk.mkfs")
	lookalike_allowed(bash("mke2fs -t ext4 disk.img"), "dev.ahp-opa.disk.mkfs")
	lookalike_allowed(bash("mkfs.vfat -C /tmp/fat.img 1024"), "dev.ahp-opa.disk.mkfs")
}

# dev.ahp-opa.disk.wipe

test_disk_wipe_denied if {
	every c in [
		"wipefs -a /dev/sdb",
		"shred -n 3 -z /dev/sda",
		"shred -u secrets.txt",
		"blkdiscard /dev/nvme0n1",
		"sgdisk --zap-all /dev/sdb",
		"diskutil eraseDisk APFS X disk2",
		"sfdisk /dev/sda < layout.txt",
		"parted -s /dev/sdb mklabel gpt",
		"cat image.raw > /dev/sdb",
	] {
		denies(bash(c), "dev.ahp-opa.disk.wipe")
	}
}

test_disk_wipe_evasions_denied if {
	denies(bash("sudo wipefs --all --force /dev/sdc"), "dev.ahp-opa.disk.wipe")
	denies(bash("cat /dev/zero | tee /dev/sda"), "dev.ahp-opa.disk.wipe")
	denies(bash("find . -name '*.log' -exec shred -u {} +"), "dev.ahp-opa.disk.wipe")
	denies(codex(["bash", "-c", "head -c 1M /dev/urandom > /dev/nvme0n1"]), "dev.ahp-opa.disk.wipe")
}

test_disk_wipe_lookalikes_allowed if {
	lookalike_allowed(bash("wipefs -n /dev/sdb"), "dev.ahp-opa.disk.wipe")
	lookalike_allowed(bash("wipefs /dev/sdb --no-act"), "dev.ahp-opa.disk.wipe")
	lookalike_allowed(bash("fdisk -l"), "dev.ahp-opa.disk.wipe")
	lookalike_allowed(bash("fdisk -l /dev/sda"), "dev.ahp-opa.disk.wipe")
	lookalike_allowed(bash("parted /dev/sda print"), "dev.ahp-opa.disk.wipe")
	lookalike_allowed(bash("diskutil list"), "dev.ahp-opa.disk.wipe")
	lookalike_allowed(bash("echo x > /dev/null"), "dev.ahp-opa.disk.wipe")
	lookalike_allowed(bash("shred --help"), "dev.ahp-opa.disk.wipe")
}
