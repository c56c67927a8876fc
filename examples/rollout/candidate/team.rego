# METADATA
# title: Team policy, candidate
# description: |
#   The candidate side of the rollout example. Against live/ it
#   - rewords the publish reason (reason changed),
#   - lets read-only kubectl verbs reach production (newly allowed),
#   - adds a rule against pushing to main (newly denied).
package ahp.tool.before.team

deny contains {
	"reason": "Publish from the release workflow in CI, not from an agent.",
	"code": "com.example.team.publish",
} if {
	some i in input.ahp.shell.programs.npm
	input.ahp.shell.commands[i].args[0] == "publish"
}

read_only_verbs := {"get", "describe", "logs", "top"}

deny contains {
	"reason": "Only read-only kubectl verbs (get, describe, logs, top) may reach the production cluster.",
	"code": "com.example.team.kubectl-prod",
} if {
	some i in input.ahp.shell.programs.kubectl
	args := input.ahp.shell.commands[i].args
	"--context=prod" in args
	not read_only_verbs[verb(args)]
}

# The verb is the first argument that is not a flag; a command without one
# is denied.
verb(args) := [a | some a in args; not startswith(a, "-")][0]

deny contains {
	"reason": "curl -k skips TLS verification; fix the certificate instead.",
	"code": "com.example.team.curl-insecure",
} if {
	some i in input.ahp.shell.programs.curl
	some a in input.ahp.shell.commands[i].args
	a in {"-k", "--insecure"}
}

deny contains {
	"reason": "Push to a branch and open a pull request; main only changes through review.",
	"code": "com.example.team.push-main",
} if {
	some i in input.ahp.shell.programs.git
	args := input.ahp.shell.commands[i].args
	args[0] == "push"
	some a in array.slice(args, 1, count(args))
	a in {"main", "HEAD:main"}
}
