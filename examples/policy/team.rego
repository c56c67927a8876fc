# METADATA
# title: Example team policy
# description: |
#   A user policy served next to the built-in library
#   (ahp-opa serve --stdio --policy examples/policy --with-builtin). It adds
#   one rule of its own; data.json beside it disables a built-in rule and
#   adds an exception.
package ahp.tool.before.team

# METADATA
# title: Privileged containers
# description: Denies docker/podman run --privileged, which gives the container the host.
# custom:
#   severity: high
#   code: com.example.team.docker-privileged
deny contains {
	"reason": "Blocked a privileged container: it can take over the host. Run it without --privileged and add only the capabilities it needs (--cap-add).",
	"code": "com.example.team.docker-privileged",
} if {
	# input.ahp.shell.programs lists the programs the command runs; a rule
	# that starts with it costs nothing for commands that do not run them.
	some name in ["docker", "podman"]
	some i in input.ahp.shell.programs[name]
	cmd := input.ahp.shell.commands[i]
	"run" in cmd.args
	some a in cmd.args
	a in {"--privileged", "--privileged=true"}
}
