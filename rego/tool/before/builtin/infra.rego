package ahp.tool.before.builtin

import data.ahp.lib.args
import data.ahp.lib.local

# METADATA
# title: Tearing down infrastructure
# description: |
#   Denies commands that destroy deployed infrastructure or its data:
#   terraform/tofu/terragrunt destroy and apply -destroy, pulumi destroy,
#   cdk destroy, serverless remove, kubectl delete of namespaces or with
#   --all / --all-namespaces, helm uninstall, docker/podman system prune,
#   image prune --all, volume prune/rm and compose down -v, aws s3 rb /
#   s3 rm --recursive / cloudformation delete-stack / terminate-instances,
#   gcloud projects or clusters delete, az group delete, eksctl delete
#   cluster, heroku and fly app destroy.
# custom:
#   severity: critical
#   code: dev.ahp-opa.infra.teardown
violation contains {
	"reason": concat(" ", [
		"Blocked tearing down infrastructure or deleting its data; this cannot be undone and may affect production.",
		"Show the plan (e.g. `terraform plan -destroy`, `kubectl get ns`) and ask the user to run the teardown.",
	]),
	"code": "dev.ahp-opa.infra.teardown",
	"trigger": _command_trigger(cmd),
} if {
	input.ahp.shell.classes.infra
	some i in input.ahp.shell.classes.infra
	cmd := input.ahp.shell.commands[i]
	not local.command(i)
	kind := _infra_kind[cmd.name]
	_tears_down(kind, cmd.args)
}

# The infrastructure tools, by the family of command line they take. The
# functions below have the family as a constant first argument, so OPA
# evaluates only the bodies of the right family.
_infra_kind := {
	"terraform": "terraform", "tofu": "terraform", "terragrunt": "terraform", "terraform.exe": "terraform",
	"pulumi": "stack", "cdk": "stack", "cdktf": "stack", "sst": "stack",
	"serverless": "serverless", "sls": "serverless",
	"kubectl": "kubectl", "oc": "kubectl", "k": "kubectl", "kubecolor": "kubectl",
	"helm": "helm",
	"docker": "docker", "podman": "docker", "nerdctl": "docker",
	"docker-compose": "compose", "podman-compose": "compose",
	"aws": "aws", "gcloud": "gcloud", "gsutil": "gsutil", "az": "az", "eksctl": "eksctl",
	"heroku": "heroku", "fly": "fly", "flyctl": "fly", "doctl": "doctl",
}

_ops(a) := args.operands(a)

_tears_down("terraform", a) if {
	some op in _ops(a)
	op in {"destroy", "destroy-all"}
}

_tears_down("terraform", a) if {
	"apply" in _ops(a)
	some o in args.options(a)
	o in {"-destroy", "--destroy"}
}

_tears_down("stack", a) if {
	some op in _ops(a)
	op in {"destroy", "down", "remove"}
}

_tears_down("serverless", a) if "remove" in _ops(a)

_tears_down("kubectl", a) if {
	"delete" in _ops(a)
	_k8s_wide_delete(a)
}

_k8s_wide_delete(a) if {
	some op in _ops(a)
	regex.match(`^(ns|namespace|namespaces|pv|persistentvolumes?|crd|customresourcedefinitions?|nodes?|clusterroles?)(/.*)?$`, op)
}

_k8s_wide_delete(a) if {
	some o in args.options(a)
	o in {"--all", "--all-namespaces", "-A"}
}

_tears_down("helm", a) if {
	some op in _ops(a)
	op in {"uninstall", "delete", "del", "un"}
}

_tears_down("docker", a) if {
	ops := _ops(a)
	some i, op in ops
	op in {"system", "volume", "image", "container", "builder", "network"}
	ops[i + 1] in {"prune", "rm", "remove"}
	_docker_data(op, ops[i + 1], a)
}

_docker_data("system", "prune", _)

_docker_data("volume", _, _)

# image prune alone removes only dangling (untagged) layers; with --all it
# removes every image no container uses, local builds included.
_docker_data("image", "prune", a) if {
	some o in args.options(a)
	regex.match(`^(-[a-zA-Z]*a[a-zA-Z]*|--all)$`, o)
}

_tears_down("docker", a) if _compose_down_volumes(a)

_tears_down("compose", a) if _compose_down_volumes(a)

_compose_down_volumes(a) if {
	"down" in _ops(a)
	some o in args.options(a)
	o in {"-v", "--volumes"}
}

_tears_down("aws", a) if {
	ops := _ops(a)
	some i, op in ops
	op == "s3"
	ops[i + 1] == "rb"
}

_tears_down("aws", a) if {
	ops := _ops(a)
	some i, op in ops
	op == "s3"
	ops[i + 1] == "rm"
	"--recursive" in a
}

_tears_down("aws", a) if {
	some op in _ops(a)
	op in {"delete-stack", "terminate-instances", "delete-db-instance", "delete-db-cluster", "delete-cluster", "delete-table", "delete-bucket", "delete-repository", "delete-function", "delete-file-system"}
}

_tears_down("gcloud", a) if {
	"delete" in _ops(a)
	some op in _ops(a)
	op in {"projects", "clusters", "instances", "buckets", "databases"}
}

_tears_down("gsutil", a) if "rb" in _ops(a)

_tears_down("gsutil", a) if {
	"rm" in _ops(a)
	some o in args.options(a)
	regex.match(`^-[a-zA-Z]*r`, o)
}

_tears_down("az", a) if {
	"delete" in _ops(a)
	some op in _ops(a)
	op in {"group", "aks", "vm", "storage", "sql", "cosmosdb", "webapp"}
}

_tears_down("eksctl", a) if "delete" in _ops(a)

_tears_down("heroku", a) if {
	some op in _ops(a)
	op in {"apps:destroy", "destroy", "pg:reset"}
}

_tears_down("fly", a) if "destroy" in _ops(a)

_tears_down("doctl", a) if {
	some op in _ops(a)
	op in {"delete", "rm", "d"}
}
