package ahp.tool.before.builtin_test

# dev.ahp-opa.fs.delete-credentials

test_delete_credentials_denied if {
	every c in [
		"rm ~/.ssh/id_rsa",
		"rm -f ~/.aws/credentials",
		"rm ~/.ssh/*",
		"unlink ~/.netrc",
		`python3 -c "import os,glob;[os.remove(f) for f in glob.glob(os.path.expanduser('~/.ssh/*'))]"`,
		`perl -e 'unlink glob "~/.ssh/*"'`,
		`node -e "require('fs').unlinkSync(require('os').homedir()+'/.docker/config.json')"`,
	] {
		denies(bash(c), "dev.ahp-opa.fs.delete-credentials")
	}
}

test_delete_credentials_lookalikes_allowed if {
	every c in [
		"rm ~/.ssh/id_rsa.pub",
		"rm ~/.ssh/known_hosts",
		"rm ~/notes.txt",
		"rm -f ./testdata/id_rsa",
		"rm -f config/master.key",
		`python3 -c "import glob,os;[os.remove(f) for f in glob.glob('build/*.o')]"`,
		"ls ~/.ssh/*",
		"rm -f ~/.bash_history",
	] {
		lookalike_allowed(bash(c), "dev.ahp-opa.fs.delete-credentials")
	}
	codes_with(bash("rm ~/.aws/credentials"), {"exceptions": {"paths": ["~/.aws/**"]}}) == set()
}

test_delete_credentials_evasions_denied if {
	every c in [
		`sh -c 'rm "$HOME/.ssh/id_ed25519"'`,
		"echo ~/.aws/credentials | xargs rm -f",
		"K=~/.kube/config; rm -f $K",
		`ruby -e 'Dir.glob(File.expand_path("~/.ssh/*")).each { |f| File.delete(f) }'`,
		`php -r 'foreach (glob(getenv("HOME")."/.ssh/*") as $f) unlink($f);'`,
	] {
		denies(bash(c), "dev.ahp-opa.fs.delete-credentials")
	}
}

test_delete_credentials_file_tool_denied if {
	denies(tool("delete_file", {"target_file": "/home/dev/.ssh/id_ed25519"}), "dev.ahp-opa.fs.delete-credentials")
	denies(tool("remove-files", {"file_paths": "~/.aws/credentials"}), "dev.ahp-opa.fs.delete-credentials")
}

test_delete_credentials_file_tool_lookalikes_allowed if {
	lookalike_allowed(tool("delete_file", {"target_file": "/home/dev/repo/tmp/id_test"}), "dev.ahp-opa.fs.delete-credentials")
	lookalike_allowed(tool("delete_file", {"target_file": "/home/dev/.ssh/id_ed25519.pub"}), "dev.ahp-opa.fs.delete-credentials")
}
