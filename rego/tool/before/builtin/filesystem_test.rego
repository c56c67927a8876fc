package ahp.tool.before.builtin_test

# rm -rf of / or the home directory

test_rm_rf_root_denied if {
	denied_only(bash("rm -rf /"), rm_code)
}

test_rm_rf_root_glob_denied if {
	denied_only(bash("rm -rf /*"), rm_code)
}

test_rm_flag_spellings_denied if {
	every c in [
		"rm -fr /",
		"rm -r -f /",
		"rm -Rf /",
		"rm -f -R ~",
		"rm --recursive --force /",
		"rm --force --recursive ~/",
		"rm --recur --forc /",
		"rm -rfv /",
		"rm -vrf ~",
		"rm -rf --no-preserve-root /",
		"rm /  -rf",
		"rm -rf -- /",
	] {
		denied_only(bash(c), rm_code)
	}
}

test_rm_rf_home_spellings_denied if {
	every c in [
		"rm -rf ~",
		"rm -rf ~/",
		"rm -rf ~/*",
		"rm -rf $HOME",
		"rm -rf ${HOME}",
		`rm -rf "$HOME"`,
		`rm -rf "${HOME}/"`,
		"rm -rf '$HOME'",
		"rm -rf ~root",
	] {
		denied_only(bash(c), rm_code)
	}
}

test_rm_rf_with_sudo_and_extra_spaces_denied if {
	denied_only(bash("  sudo   rm    -rf    /  "), rm_code)
	denied_only(bash("sudo -u root rm -rf ~"), rm_code)
	denied_only(bash("FOO=1 nohup /bin/rm -rf $HOME"), rm_code)
	denied_only(bash(`\rm -rf /`), rm_code)
}

test_rm_rf_in_chains_denied if {
	denied_only(bash("ls && rm -rf ~"), rm_code)
	denied_only(bash("cd /repo; rm -rf /"), rm_code)
	denied_only(bash("false || rm -rf /*"), rm_code)
	denied_only(bash("echo y | rm -rf ~"), rm_code)
	denied_only(bash("(cd /tmp && rm -rf ~)"), rm_code)
	denied_only(bash("make clean\nrm -rf ~"), rm_code)
	denied_only(bash("rm -rf \\\n  /"), rm_code)
}

test_rm_rf_through_sh_c_denied if {
	denied_only(bash(`bash -c "rm -rf ~"`), rm_code)
	denied_only(bash("sh -c 'cd / && rm -rf /'"), rm_code)
}

test_rm_rf_other_harnesses_denied if {
	denied_only(gemini("rm -rf ~/"), rm_code)
	denied_only(codex(["bash", "-lc", "rm -rf $HOME"]), rm_code)
	denied_only(codex(["rm", "-rf", "/"]), rm_code)
	denied_only(codex_exec("rm -fr ~"), rm_code)
	denied_only(shell_kind("rm -rf /"), rm_code)
}

test_rm_ordinary_targets_allowed if {
	every c in [
		"rm -rf build",
		"rm -rf ./node_modules",
		"rm -rf /tmp/x",
		"rm -rf ~/project/build",
		"rm -rf $HOME/.cache/pip",
		"rm -rf /repo/dist",
		"rm -rf *",
		"rm -rf .",
		"sudo rm -rf /var/tmp/build",
	] {
		allowed(bash(c))
	}
}

test_rm_without_both_flags_allowed if {
	allowed(bash("rm -r build"))
	allowed(bash("rm -f ~/.bash_history"))
	allowed(bash("rm ~"))
}

test_rm_text_in_other_commands_allowed if {
	allowed(bash(`echo "rm -rf /"`))
	allowed(bash(`git commit -m "stop running rm -rf ~ in scripts"`))
	allowed(bash(`grep -rn 'rm -rf /' scripts/`))
	allowed(codex(["git", "commit", "-m", "rm -rf /"]))
}

# chmod -R of /

test_chmod_recursive_root_denied if {
	denied_only(bash("chmod -R 777 /"), chmod_code)
	denied_only(bash("chmod --recursive 777 /"), chmod_code)
	denied_only(bash("chmod -R a+rwx /"), chmod_code)
}

test_chmod_recursive_root_variants_denied if {
	denied_only(bash("sudo chmod -Rv 0777 /"), chmod_code)
	denied_only(bash("chmod 777 -R /*"), chmod_code)
	denied_only(gemini("cd /repo && sudo chmod -R ugo+rwx //"), chmod_code)
	denied_only(codex(["sudo", "chmod", "-R", "777", "/"]), chmod_code)
}

test_chmod_lookalikes_allowed if {
	allowed(bash("chmod -R 777 ./build"))
	allowed(bash("chmod -R 755 /srv/app"))
	allowed(bash("chmod +x /usr/local/bin/tool"))
	allowed(bash("chmod 755 /"))
	allowed(bash(`echo "chmod -R 777 /"`))
}

test_rm_rf_in_control_flow_and_substitution_denied if {
	denied_only(bash("if [ -d build ]; then rm -rf ~; fi"), rm_code)
	denied_only(bash("for d in a b; do rm -rf /; done"), rm_code)
	denied_only(bash("echo $(rm -rf ~)"), rm_code)
	denied_only(bash(`echo "$(sudo rm -rf /)"`), rm_code)
	denied_only(bash("echo `rm -rf ~`"), rm_code)
}

test_rm_rf_text_in_quotes_allowed if {
	allowed(bash(`echo "a; rm -rf /"`))
	allowed(bash(`echo 'echo $(rm -rf /)'`))
	allowed(bash(`printf '%s\n' "rm -rf ~ && git push -f"`))
}

test_rm_rf_through_su_c_denied if {
	denied_only(bash("sudo su -c 'rm -rf /'"), rm_code)
	denied_only(bash("su root -c 'rm -rf ~'"), rm_code)
}
