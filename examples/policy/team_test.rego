package ahp.tool.before.team_test

import data.ahp.tool.before.team

# Inputs printed by `ahp-opa eval --print-input examples/events/<name>.json`:
# the event with the input.ahp enrichment. Only the parts the rules read
# are needed; the whole enrichment is kept here to show its shape.
event(ahp) := {
	"type": "tool.before",
	"session": {"id": "s1", "cwd": "/home/dev/repo", "workspaceRoots": ["/home/dev/repo"]},
	"tool": {"name": "Bash", "kind": "shell", "origin": "native", "input": {"command": ahp.shell.command}},
	"ahp": ahp,
}

privileged := event({"shell": {"command": "docker run --rm --privileged -v /:/host alpine sh", "commands": [{"args": ["run", "--rm", "--privileged", "-v", "/:/host", "alpine", "sh"], "argv": ["docker", "run", "--rm", "--privileged", "-v", "/:/host", "alpine", "sh"], "depth": 0, "name": "docker", "parent": -1, "paths": [{"arg": 0, "base": "run", "home_rel": "repo/run", "inside_workspace": true, "path": "/home/dev/repo/run", "raw": "run"}, {"arg": 4, "base": "host", "outside_workspace": true, "path": "/:/host", "raw": "/:/host"}, {"arg": 5, "base": "alpine", "home_rel": "repo/alpine", "inside_workspace": true, "path": "/home/dev/repo/alpine", "raw": "alpine"}, {"arg": 6, "base": "sh", "home_rel": "repo/sh", "inside_workspace": true, "path": "/home/dev/repo/sh", "raw": "sh"}], "via": ""}], "programs": {"docker": [0]}}, "tool": {"family": "shell", "name": "Bash"}, "version": 1, "workspace": {"cwd": "/home/dev/repo", "home": "/home/dev", "roots": ["/home/dev/repo"]}})

docker_ok := event({"shell": {"command": "docker run --rm alpine echo hi", "commands": [{"args": ["run", "--rm", "alpine", "echo", "hi"], "argv": ["docker", "run", "--rm", "alpine", "echo", "hi"], "depth": 0, "name": "docker", "parent": -1, "paths": [{"arg": 0, "base": "run", "home_rel": "repo/run", "inside_workspace": true, "path": "/home/dev/repo/run", "raw": "run"}, {"arg": 2, "base": "alpine", "home_rel": "repo/alpine", "inside_workspace": true, "path": "/home/dev/repo/alpine", "raw": "alpine"}, {"arg": 3, "base": "echo", "home_rel": "repo/echo", "inside_workspace": true, "path": "/home/dev/repo/echo", "raw": "echo"}, {"arg": 4, "base": "hi", "home_rel": "repo/hi", "inside_workspace": true, "path": "/home/dev/repo/hi", "raw": "hi"}], "via": ""}], "programs": {"docker": [0]}}, "tool": {"family": "shell", "name": "Bash"}, "version": 1, "workspace": {"cwd": "/home/dev/repo", "home": "/home/dev", "roots": ["/home/dev/repo"]}})

test_privileged_container_denied if {
	d := team.deny with input as privileged
	[x.code | some x in d] == ["com.example.team.docker-privileged"]
}

test_plain_container_allowed if {
	count(team.deny) == 0 with input as docker_ok
}

test_podman_privileged_denied if {
	# A hand-written input: only what the rule reads.
	inp := {"ahp": {"shell": {
		"programs": {"podman": [0]},
		"commands": [{"name": "podman", "args": ["run", "--privileged=true", "fedora"]}],
	}}}
	count(team.deny) == 1 with input as inp
}

test_other_tools_allowed if {
	count(team.deny) == 0 with input as {"ahp": {"tool": {"family": "file_read"}}}
}
