# METADATA
# title: Team policy as enforced today
# description: |
#   The live side of the rollout example: what `ahp-opa serve` answered
#   when audit.jsonl was recorded. candidate/ is next week's version.
package ahp.tool.before.team

deny contains {
	"reason": "Publishing packages needs a release manager.",
	"code": "com.example.team.publish",
} if {
	some i in input.ahp.shell.programs.npm
	input.ahp.shell.commands[i].args[0] == "publish"
}

deny contains {
	"reason": "The production cluster is off limits to agents.",
	"code": "com.example.team.kubectl-prod",
} if {
	some i in input.ahp.shell.programs.kubectl
	"--context=prod" in input.ahp.shell.commands[i].args
}

deny contains {
	"reason": "curl -k skips TLS verification; fix the certificate instead.",
	"code": "com.example.team.curl-insecure",
} if {
	some i in input.ahp.shell.programs.curl
	some a in input.ahp.shell.commands[i].args
	a in {"-k", "--insecure"}
}
