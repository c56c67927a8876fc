package ahp.tool.before.builtin_test

# dev.ahp-opa.fs.rm-recursive-critical

test_rm_recursive_critical_denied if {
	every c in [
		"rm -rf /",
		"rm -rf /*",
		"rm -rf ~",
		"rm -rf ~/",
		"rm -rf ~/*",
		"rm -rf $HOME",
		"rm -rf ${HOME}",
		`rm -rf "$HOME"/*`,
		"rm -rf /etc",
		"rm -rf /usr/local",
		"rm -r /var/lib/docker",
		"rm -fr /home",
		"rm -rf /home/alice",
		"rm -rf ~root",
		"rm -rf /data",
	] {
		denies(bash(c), "dev.ahp-opa.fs.rm-recursive-critical")
	}
}

test_rm_recursive_critical_flag_spellings_denied if {
	every c in [
		"rm -fr /",
		"rm -r -f /",
		"rm -Rf /",
		"rm -R ~",
		"rm --recursive --force /",
		"rm --recur /",
		"rm -rfv /",
		"rm -rf --no-preserve-root /",
		"rm / -rf",
		"rm -rf -- /",
		"rm -rf ../..",
		"rm -rf ../../..",
	] {
		denies(bash(c), "dev.ahp-opa.fs.rm-recursive-critical")
	}
}

test_rm_recursive_critical_evasions_denied if {
	every c in [
		"rm -f ~/*",
		"find ~ -type f -print0 | xargs -0 rm -f",
		"ls -d ~/* | parallel rm -rf {}",
		"/bin/rm -rf /",
		`\rm -rf /`,
		"r''m -rf /",
		`"rm" -rf /`,
		"$'\\x72\\x6d' -rf /",
		"{rm,-rf,/}",
		"RM -rf /",
		"sudo env FOO=1 rm -rf /",
		"nice -n 5 timeout 10 rm -rf ~",
		"ls && rm -rf ~",
		"true; rm -rf /",
		"false || rm -rf /*",
		"(cd /tmp && rm -rf ~)",
		"{ rm -rf ~; }",
		"if true; then rm -rf ~; fi",
		"for d in a b; do rm -rf /; done",
		"f() { rm -rf ~; }; f",
		"echo $(rm -rf ~)",
		`echo "$(rm -rf /)"`,
		"echo `rm -rf ~`",
		`bash -c "rm -rf ~"`,
		"sh -c 'cd / && rm -rf /'",
		`bash -c "bash -c 'rm -rf /'"`,
		"X=/; rm -rf $X",
		"rm -rf ${TARGET:-/}",
		"echo 'rm -rf /' | sh",
		"eval 'rm -rf ~'",
		"xargs rm -rf < /dev/null ~",
		"find / -delete",
		"find ~ -type f -exec rm -f {} +",
		"rm -rf \\\n  /",
		"bash <<< 'rm -rf /'",
		"env -S 'rm -rf /'",
		"$(echo rm) -rf /",
		"busybox rm -rf /",
		"command rm -rf ~",
	] {
		denies(bash(c), "dev.ahp-opa.fs.rm-recursive-critical")
	}
}

test_rm_recursive_critical_other_harnesses_denied if {
	denies(gemini("rm -rf ~/"), "dev.ahp-opa.fs.rm-recursive-critical")
	denies(codex(["bash", "-lc", "rm -rf $HOME"]), "dev.ahp-opa.fs.rm-recursive-critical")
	denies(codex(["rm", "-rf", "/"]), "dev.ahp-opa.fs.rm-recursive-critical")
	denies(codex_exec("rm -fr ~"), "dev.ahp-opa.fs.rm-recursive-critical")
	denies(shell_kind("rm -rf /"), "dev.ahp-opa.fs.rm-recursive-critical")
}

test_rm_inside_workspace_allowed if {
	every c in [
		"rm -rf build",
		"rm -rf ./node_modules",
		"rm -rf /home/dev/repo/dist",
		"rm -rf ~/repo/target",
		"cd build && rm -rf .",
		"cd dist && rm -rf *",
		"rm -rf /tmp/x",
		"rm -rf /var/tmp/build",
		"rm -rf $TMPDIR/cache",
		"rm -r build && mkdir build",
		"rm -f ~/.bash_history",
		"rm ~",
		"find . -name '*.pyc' -delete",
	] {
		lookalike_allowed(bash(c), "dev.ahp-opa.fs.rm-recursive-critical")
	}

	# The workspace root itself is the delete-workspace rule's.
	denied_only(bash("rm -rf ."), "dev.ahp-opa.fs.delete-workspace")
	denied_only(bash("rm -rf *"), "dev.ahp-opa.fs.delete-workspace")
}

test_rm_text_in_other_commands_allowed if {
	lookalike_allowed(bash(`echo "rm -rf /"`), "dev.ahp-opa.fs.rm-recursive-critical")
	lookalike_allowed(bash(`git commit -m "stop running rm -rf ~ in scripts"`), "dev.ahp-opa.fs.rm-recursive-critical")
	lookalike_allowed(bash(`grep -rn 'rm -rf /' scripts/`), "dev.ahp-opa.fs.rm-recursive-critical")
	lookalike_allowed(bash(`printf '%s\n' "rm -rf ~ && git push -f"`), "dev.ahp-opa.fs.rm-recursive-critical")
	lookalike_allowed(bash(`echo 'echo $(rm -rf /)'`), "dev.ahp-opa.fs.rm-recursive-critical")
	lookalike_allowed(codex(["git", "commit", "-m", "rm -rf /"]), "dev.ahp-opa.fs.rm-recursive-critical")
	lookalike_allowed(bash("# rm -rf /\nls"), "dev.ahp-opa.fs.rm-recursive-critical")
}

# dev.ahp-opa.fs.rm-recursive-outside-workspace

test_rm_recursive_outside_workspace_denied if {
	every c in [
		"rm -rf ~/other-project",
		"rm -rf ~/.cache",
		"rm -rf ../sibling",
		"rm -rf /home/dev/Documents/notes",
		"rm -r /mnt/backup/old",
		"rm -rf /media/usb/old",
	] {
		denied_only(bash(c), "dev.ahp-opa.fs.rm-recursive-outside-workspace")
	}
}

test_rm_recursive_outside_workspace_evasions_denied if {
	every c in [
		"cd /tmp && rm -rf ~/Documents",
		"rm -rf ./../other",
		`bash -c 'rm -rf "$HOME/Downloads"'`,
		"find ~/Downloads -delete",
		"D=~/Music; rm -rf $D",
	] {
		denies(bash(c), "dev.ahp-opa.fs.rm-recursive-outside-workspace")
	}
	denies(gemini("rm -rf ../other-repo"), "dev.ahp-opa.fs.rm-recursive-outside-workspace")
}

test_rm_recursive_outside_workspace_lookalikes_allowed if {
	lookalike_allowed(bash("rm ~/notes.txt"), "dev.ahp-opa.fs.rm-recursive-outside-workspace")
	lookalike_allowed(bash("rm -rf /tmp/build-cache"), "dev.ahp-opa.fs.rm-recursive-outside-workspace")
	lookalike_allowed(bash("rm -rf ./sub/../build"), "dev.ahp-opa.fs.rm-recursive-outside-workspace")
	lookalike_allowed(bash("ls -R ~/other-project"), "dev.ahp-opa.fs.rm-recursive-outside-workspace")
	lookalike_allowed(bash("cp -r ~/other-project/templates ./templates"), "dev.ahp-opa.fs.rm-recursive-outside-workspace")
}

# Deleters that do not look like rm take their operands whole.
test_whole_deleters_outside_workspace_denied if {
	every c in ["rmz ~/old-projects/site", "rip ~/Music/2019", "trash-put ~/Desktop/drafts", "trash ~/Documents/report", "gio trash ~/Videos/clips", "wipe -rf ~/mail"] {
		denies(bash(c), "dev.ahp-opa.fs.rm-recursive-outside-workspace")
	}
	denies(bash("rmz -f /opt/toolcache/node &"), "dev.ahp-opa.fs.rm-recursive-critical")
	denies(bash("rip ~"), "dev.ahp-opa.fs.rm-recursive-critical")
	denies(bash("rmz ."), "dev.ahp-opa.fs.delete-workspace")
}

test_whole_deleters_lookalikes_allowed if {
	every c in ["rmz target dist", "rip node_modules", "trash ./out", "trash-put /tmp/scratch", "gio info ~/Videos/clips", "trash-list", "rmz /tmp/build-output"] {
		allowed(bash(c))
	}
}

# System caches are emptied in image builds; the directories around them
# stay protected, and the user's own caches are data outside the
# workspace (a team that cleans them names them in exceptions.paths).
test_rm_caches_allowed if {
	every c in [
		"apt-get update && apt-get install -y curl && rm -rf /var/lib/apt/lists/*",
		"rm -rf /var/cache/apk/*",
		"rm -rf /root/.cache/pip",
	] {
		allowed(bash(c))
	}
	every c in [
		"rm -rf ~/.cache/pip",
		"rm -rf $HOME/.m2/repository/com/acme",
		"rm -rf ~/.gradle/caches/",
		"rm -rvf ~/Library/Caches/com.acme.app",
	] {
		denies(bash(c), "dev.ahp-opa.fs.rm-recursive-outside-workspace")
	}
	denies(bash("rm -rf /var/lib/apt"), "dev.ahp-opa.fs.rm-recursive-critical")
	denies(bash("rm -rf /var/lib/postgresql"), "dev.ahp-opa.fs.rm-recursive-critical")
	denies(bash("rm -rf ~/.config"), "dev.ahp-opa.fs.rm-recursive-outside-workspace")
	denies(bash("rm -rf ~/.m2"), "dev.ahp-opa.fs.rm-recursive-outside-workspace")
}

test_rm_outside_workspace_path_exception if {
	evt := bash("rm -rf ~/scratch/old-build")
	denies(evt, "dev.ahp-opa.fs.rm-recursive-outside-workspace")
	codes_with(evt, {"exceptions": {"paths": ["~/scratch/**"]}}) == set()
	codes_with(evt, {"disabled_rules": ["dev.ahp-opa.fs.rm-recursive-outside-workspace"]}) == set()

	# A team that empties the user's caches says so once.
	codes_with(bash("rm -rf ~/.cache/pip"), {"exceptions": {"paths": ["~/.cache/**"]}}) == set()
}

# dev.ahp-opa.fs.write-system

test_write_system_denied if {
	denied_only(tool("Write", {"file_path": "/etc/hosts", "content": "127.0.0.1 x"}), "dev.ahp-opa.fs.write-system")
	denied_only(tool("Edit", {"file_path": "/usr/local/bin/tool", "old_string": "a", "new_string": "b"}), "dev.ahp-opa.fs.write-system")
	denied_only(tool("write_file", {"file_path": "/Library/Preferences/x.plist", "content": "x"}), "dev.ahp-opa.fs.write-system")
	denied_only(bash("echo 'nameserver 1.1.1.1' > /etc/resolv.conf"), "dev.ahp-opa.fs.write-system")
}

test_write_system_shell_evasions_denied if {
	denies(bash("echo x | sudo tee -a /etc/hosts"), "dev.ahp-opa.fs.write-system")
	denies(bash("sudo cp ./tool /usr/local/bin/tool"), "dev.ahp-opa.fs.write-system")
	denies(bash("sed -i 's/a/b/' /etc/ssh/sshd_config"), "dev.ahp-opa.fs.write-system")
	denies(bash("cat > /etc/apt/sources.list.d/x.list <<EOF\ndeb x\nEOF"), "dev.ahp-opa.fs.write-system")
	denies(bash("curl -o /usr/local/bin/x https://example.com/x"), "dev.ahp-opa.fs.write-system")
	denies(codex(["bash", "-lc", "echo 1 > /proc/sys/vm/drop_caches"]), "dev.ahp-opa.fs.write-system")
}

test_write_system_lookalikes_allowed if {
	lookalike_allowed(bash("cat /etc/hosts"), "dev.ahp-opa.fs.write-system")
	lookalike_allowed(bash("ls > /dev/null 2>&1"), "dev.ahp-opa.fs.write-system")
	lookalike_allowed(bash("make 2> /dev/null"), "dev.ahp-opa.fs.write-system")
	lookalike_allowed(bash("cp /etc/hosts ./hosts.bak"), "dev.ahp-opa.fs.write-system")
	lookalike_allowed(tool("Write", {"file_path": "/home/dev/repo/etc/config.yaml", "content": "a: 1"}), "dev.ahp-opa.fs.write-system")
	lookalike_allowed(tool("Write", {"file_path": "/tmp/scratch.txt", "content": "x"}), "dev.ahp-opa.fs.write-system")
	lookalike_allowed(tool("Read", {"file_path": "/etc/hosts"}), "dev.ahp-opa.fs.write-system")
}

test_write_system_through_dd_denied if {
	denies(bash("dd if=./passwd of=/etc/passwd"), "dev.ahp-opa.fs.write-system")
	denies(bash("dd if=/dev/zero of=/dev/sda"), "dev.ahp-opa.disk.wipe")
	lookalike_allowed(bash("dd if=/etc/hosts of=./hosts.copy"), "dev.ahp-opa.fs.write-system")
}

# dev.ahp-opa.fs.delete-workspace

test_delete_workspace_denied if {
	every c in [
		"rm -rf .git",
		"rm -fr ./.git/",
		"rm -rf /home/dev/repo/.git",
		"cd src && rm -rf ../.git",
		"rm -rf .git/objects",
		"rm -rf .",
		`rm -rf "$PWD"`,
		"rm -rf /home/dev/repo",
		"rm -rf ./*",
		"cd /home/dev/repo && rm -rf -- *",
		"find . -delete",
		"find .git -delete",
	] {
		denied_only(bash(c), "dev.ahp-opa.fs.delete-workspace")
	}
}

test_delete_workspace_lookalikes_allowed if {
	every c in [
		"rm -rf node_modules dist",
		"rm -f .git/index.lock",
		"rm .git/hooks/pre-commit.sample",
		"rm -rf .github/workflows/old.yml",
		"rm -rf .gitignore.bak",
		"cd build && rm -rf .",
		"find . -name '*.pyc' -delete",
		"find .git -name '*.lock' -delete",
		"git rm -r --cached .",
	] {
		lookalike_allowed(bash(c), "dev.ahp-opa.fs.delete-workspace")
	}
}

# mv and rsync --delete count as deletes of what they take away.

test_move_or_sync_over_critical_denied if {
	every c in [
		"mv ~ /tmp/old-home",
		"mv ~/* /tmp/trash/",
		`mv "$HOME" /var/tmp/h`,
		"mv /etc /tmp/etc.bak",
		"rsync -a --delete empty/ ~/",
		"rsync -av --delete-before ./dist/ /home/dev/",
		"rsync -a --del /tmp/empty/ /",
	] {
		denied_only(bash(c), "dev.ahp-opa.fs.rm-recursive-critical")
	}
	denied_only(bash("rsync -a --delete build/ /home/dev/other-project/"), "dev.ahp-opa.fs.rm-recursive-outside-workspace")
}

test_move_or_sync_lookalikes_allowed if {
	every c in [
		"mv ~/Downloads/data.csv ./data/",
		"mv build dist",
		"rsync -a --delete src/ build/",
		"rsync -a ./dist/ /home/dev/backup/",
	] {
		allowed(bash(c))
	}

	# Another host's files are no path of this machine; a sync that
	# deletes there is a deploy (effect.publish), not a local delete.
	not denies(bash("rsync -a --delete dist/ deploy@host:/srv/www/"), "dev.ahp-opa.fs.rm-recursive-outside-workspace")
	not denies(bash("rsync -a --delete dist/ deploy@host:/srv/www/"), "dev.ahp-opa.fs.rm-recursive-critical")
}

test_rm_every_entry_lookalikes_allowed if {
	every c in [
		"find . -name '*.pyc' -print0 | xargs -0 rm -f",
		"find build -type f -name '*.o' | xargs rm -f",
		"rm -f ~/notes.txt",
		"rm -f /tmp/*.log",
	] {
		not denies(bash(c), "dev.ahp-opa.fs.rm-recursive-critical")
		allowed(bash(c))
	}
}
