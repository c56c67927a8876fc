package ahp.tool.before.builtin_test

# dev.ahp-opa.privilege.capability-or-group

test_capability_or_group_denied if {
	every c in [
		"setcap cap_net_raw,cap_sys_admin+eip ./tool",
		"usermod -aG sudo dev",
		"usermod --append --groups docker dev",
		"usermod -G sudo,adm dev",
		"gpasswd -a dev docker",
		"adduser dev sudo",
	] {
		denied_only(bash(c), "dev.ahp-opa.privilege.capability-or-group")
	}
	denies(bash("sudo setcap cap_setuid+ep /usr/bin/python3"), "dev.ahp-opa.privilege.capability-or-group")
	denies(bash("sudo usermod -a -G wheel dev"), "dev.ahp-opa.privilege.capability-or-group")
}

test_capability_or_group_lookalikes_allowed if {
	every c in ["getcap /usr/bin/ping", "id -nG dev", "groups", "usermod -aG video dev", "adduser dev", "setcap -v cap_net_raw+ep ./tool"] {
		lookalike_allowed(bash(c), "dev.ahp-opa.privilege.capability-or-group")
	}
}

# dev.ahp-opa.privilege.container-host

test_container_host_denied if {
	every c in [
		"docker run --privileged -it ubuntu bash",
		"docker run -v /:/host alpine chroot /host",
		"docker run --rm -v ~/:/h alpine ls /h",
		`docker run -v "$HOME":/root img`,
		"docker run --pid=host --rm alpine ps",
		"docker run -it -v /var/run/docker.sock:/var/run/docker.sock docker sh",
		"podman run --privileged quay.io/x/y",
		"docker run --mount type=bind,source=/,target=/host img",
		"docker run -v /etc:/etc2 img",
		"docker run --cap-add=ALL img",
		"docker run --security-opt apparmor=unconfined img",
		"nsenter --target 1 --mount --uts --ipc --net --pid sh",
	] {
		denied_only(bash(c), "dev.ahp-opa.privilege.container-host")
	}
}

test_container_host_lookalikes_allowed if {
	every c in [
		"docker run --rm -v $PWD:/src -w /src golang:1.22 go test ./...",
		`docker run --rm -v "$(pwd)":/app node:20 npm test`,
		"docker run --rm -it node:20 bash",
		"docker run -v ~/.aws:/root/.aws amazon/aws-cli s3 ls",
		"docker run -d -v /var/run/docker.sock:/var/run/docker.sock containrrr/watchtower",
		"docker run --network host img",
		"docker run -v /etc/localtime:/etc/localtime:ro img",
		"docker ps -a",
		"nsenter --help",
	] {
		lookalike_allowed(bash(c), "dev.ahp-opa.privilege.container-host")
	}
}

test_escalation_evasions_denied if {
	denies(codex(["sudo", "usermod", "-aG", "docker", "dev"]), "dev.ahp-opa.privilege.capability-or-group")
	denies(bash(`bash -c "gpasswd --add dev wheel"`), "dev.ahp-opa.privilege.capability-or-group")
	denies(mcp("shell", "run_command", {"command": "setcap cap_sys_admin+ep ./x"}), "dev.ahp-opa.privilege.capability-or-group")
	denies(codex(["docker", "run", "--privileged", "img"]), "dev.ahp-opa.privilege.container-host")
	denies(bash("sudo podman run -v /:/mnt --rm -it alpine sh"), "dev.ahp-opa.privilege.container-host")
	denies(gemini("docker run --pid host --rm alpine kill 1"), "dev.ahp-opa.privilege.container-host")
}

test_container_host_node_and_chroot_denied if {
	denied_only(bash("kubectl debug node/worker-2 -it --image=busybox -- chroot /host"), "dev.ahp-opa.privilege.container-host")
	denied_only(bash("kubectl debug nodes/ip-10-0-0-1 -it --image=ubuntu"), "dev.ahp-opa.privilege.container-host")
	denies(bash("docker exec app chroot /host sh -c 'id'"), "dev.ahp-opa.privilege.container-host")
	denies(bash("kubectl exec -it pod/x -- chroot /hostfs bash"), "dev.ahp-opa.privilege.container-host")
}

test_container_host_node_and_chroot_lookalikes_allowed if {
	lookalike_allowed(bash("kubectl debug pod/api -it --image=busybox --target=api"), "dev.ahp-opa.privilege.container-host")
	lookalike_allowed(bash("kubectl get nodes/worker-2 -o wide"), "dev.ahp-opa.privilege.container-host")
	lookalike_allowed(bash("docker exec app ls /srv"), "dev.ahp-opa.privilege.container-host")
}

# A compose file is the docker run of each of its services, judged when
# it is written: docker compose up starts them later.
test_container_host_in_compose_file_denied if {
	denies(tool("Write", {"file_path": "/home/dev/repo/docker-compose.yml", "content": "services:\n  x:\n    image: alpine\n    privileged: true\n    volumes:\n      - /:/host\n"}), "dev.ahp-opa.privilege.container-host")
	denies(tool("Edit", {"file_path": "/home/dev/repo/compose.yaml", "old_string": "    image: app", "new_string": "    image: app\n    pid: host\n    cap_add:\n      - SYS_ADMIN\n"}), "dev.ahp-opa.privilege.container-host")
}

test_compose_file_lookalikes_allowed if {
	not denies(tool("Write", {"file_path": "/home/dev/repo/docker-compose.yml", "content": "services:\n  db:\n    image: postgres:16\n    ports: [\"5432:5432\"]\n    volumes:\n      - ./data:/var/lib/postgresql/data\n"}), "dev.ahp-opa.privilege.container-host")
	allowed(tool("Write", {"file_path": "/home/dev/repo/docker-compose.yml", "content": "services:\n  db:\n    image: postgres:16\n    ports: [\"5432:5432\"]\n    volumes:\n      - ./data:/var/lib/postgresql/data\n"}))
}
