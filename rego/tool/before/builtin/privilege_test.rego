package ahp.tool.before.builtin_test

# dev.ahp-opa.privilege.sudo

test_sudo_denied if {
	every c in [
		"sudo apt-get install -y jq",
		"sudo -u postgres psql",
		"sudo -i",
		"sudo su -",
		"su root -c 'id'",
		"doas pkg_add jq",
		"pkexec systemctl restart nginx",
		"runuser -u www -- ls",
	] {
		denies(bash(c), "dev.ahp-opa.privilege.sudo")
	}
}

test_sudo_evasions_denied if {
	every c in [
		"/usr/bin/sudo make install",
		"ls && sudo make install",
		"env FOO=1 sudo ls",
		`bash -c "sudo ls"`,
		"echo pw | sudo -S ls",
		"timeout 5 sudo ls",
		"s''udo ls",
	] {
		denies(bash(c), "dev.ahp-opa.privilege.sudo")
	}
	denies(codex(["sudo", "ls"]), "dev.ahp-opa.privilege.sudo")
}

test_sudo_lookalikes_allowed if {
	lookalike_allowed(bash("sudo -l"), "dev.ahp-opa.privilege.sudo")
	lookalike_allowed(bash("sudo -n -v"), "dev.ahp-opa.privilege.sudo")
	lookalike_allowed(bash("man sudo"), "dev.ahp-opa.privilege.sudo")
	lookalike_allowed(bash("grep sudo /var/log/auth.log"), "dev.ahp-opa.privilege.sudo")
	lookalike_allowed(bash(`echo "run sudo make install"`), "dev.ahp-opa.privilege.sudo")
	lookalike_allowed(bash("which sudo"), "dev.ahp-opa.privilege.sudo")
}

# dev.ahp-opa.privilege.chmod-unsafe

test_chmod_unsafe_denied if {
	every c in [
		"chmod -R 777 ./build",
		"chmod -R a+rwx .",
		"chmod -R o+w src",
		"chmod 4755 ./tool",
		"chmod u+s /home/dev/repo/bin/tool",
		"chmod g+s ./dir",
		"chmod -R 755 /",
		"chmod -R u+rwX ~",
	] {
		denies(bash(c), "dev.ahp-opa.privilege.chmod-unsafe")
	}
}

test_chmod_unsafe_evasions_denied if {
	denies(bash("sudo chmod -Rv 0777 /"), "dev.ahp-opa.privilege.chmod-unsafe")
	denies(bash("chmod 777 -R /*"), "dev.ahp-opa.privilege.chmod-unsafe")
	denies(bash("find . -type d -exec chmod 2775 {} +"), "dev.ahp-opa.privilege.chmod-unsafe")
	denies(codex(["chmod", "--recursive", "777", "/home/dev/repo"]), "dev.ahp-opa.privilege.chmod-unsafe")
	denies(bash(`sh -c 'chmod +s ./x'`), "dev.ahp-opa.privilege.chmod-unsafe")
}

test_chmod_lookalikes_allowed if {
	every c in [
		"chmod +x ./script.sh",
		"chmod 755 ./bin/tool",
		"chmod -R u+rwX,go+rX ./dist",
		"chmod 600 ~/.ssh/id_ed25519",
		"chmod -R 755 ./public",
		"chmod 644 ./*.txt",
		`echo "chmod -R 777 /"`,
	] {
		lookalike_allowed(bash(c), "dev.ahp-opa.privilege.chmod-unsafe")
	}
}

# dev.ahp-opa.privilege.chown-root

test_chown_root_denied if {
	denies(bash("chown root ./tool"), "dev.ahp-opa.privilege.chown-root")
	denies(bash("chown -R root:root ."), "dev.ahp-opa.privilege.chown-root")
	denies(bash("chown 0:0 ./x"), "dev.ahp-opa.privilege.chown-root")
	denies(bash("chgrp wheel ./x"), "dev.ahp-opa.privilege.chown-root")
	denies(bash("chown dev:root ./x"), "dev.ahp-opa.privilege.chown-root")
}

test_chown_root_evasions_denied if {
	denies(bash("sudo chown -R dev /"), "dev.ahp-opa.privilege.chown-root")
	denies(bash("chown --recursive dev:dev ~"), "dev.ahp-opa.privilege.chown-root")
	denies(bash(`bash -c "chown root:root ./bin"`), "dev.ahp-opa.privilege.chown-root")
	denies(codex(["chown", "-R", "root", "."]), "dev.ahp-opa.privilege.chown-root")
}

test_chown_lookalikes_allowed if {
	lookalike_allowed(bash("chown dev:dev ./file"), "dev.ahp-opa.privilege.chown-root")
	lookalike_allowed(bash("chown -R dev:staff ./build"), "dev.ahp-opa.privilege.chown-root")
	lookalike_allowed(bash("ls -l /root"), "dev.ahp-opa.privilege.chown-root")
	lookalike_allowed(bash(`echo "chown root x"`), "dev.ahp-opa.privilege.chown-root")
}

# One file is enough when it is a system, startup or credential file.
test_chmod_unsafe_single_files if {
	every c in [
		"chmod 777 ~/.ssh",
		"chmod o+w /etc/passwd",
		"chmod 644 ~/.ssh/id_rsa",
		"chmod a+r ~/.aws/credentials",
		"chmod 666 ~/.bashrc",
	] {
		denies(bash(c), "dev.ahp-opa.privilege.chmod-unsafe")
	}
	every c in [
		"chmod 600 ~/.ssh/id_ed25519",
		"chmod 700 ~/.ssh",
		"chmod 644 ~/.ssh/id_rsa.pub",
		"chmod 666 /dev/null",
		"chmod 644 /etc/nginx/conf.d/app.conf",
		"chmod 400 deploy.pem",
		"chmod go-rwx ~/.ssh/id_rsa",
	] {
		lookalike_allowed(bash(c), "dev.ahp-opa.privilege.chmod-unsafe")
	}
}

# The Docker Engine API over its socket is docker run (internal/enrich/api.go).
test_engine_api_host_mount_denied if {
	denies(bash(`curl --unix-socket /var/run/docker.sock -X POST http://localhost/containers/create -d '{"Image":"alpine","HostConfig":{"Binds":["/:/host"],"Privileged":true}}'`), "dev.ahp-opa.privilege.container-host")
}

test_engine_api_lookalikes_allowed if {
	lookalike_allowed(bash(`curl --unix-socket /var/run/docker.sock http://localhost/containers/json`), "dev.ahp-opa.privilege.container-host")
	lookalike_allowed(bash(`curl --unix-socket /var/run/docker.sock -X POST http://localhost/containers/create -d '{"Image":"alpine","HostConfig":{"Binds":["/home/dev/repo:/src"]}}'`), "dev.ahp-opa.privilege.container-host")
}
