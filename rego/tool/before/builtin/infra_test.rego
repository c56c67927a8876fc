package ahp.tool.before.builtin_test

# dev.ahp-opa.infra.teardown

test_teardown_denied if {
	every c in [
		"terraform destroy",
		"terraform destroy -auto-approve",
		"terraform apply -destroy -auto-approve",
		"tofu destroy",
		"pulumi destroy --yes",
		"cdk destroy --all",
		"kubectl delete ns production",
		"kubectl delete namespace staging",
		"kubectl delete pods --all",
		"kubectl delete deploy -A --all",
		"docker system prune -af",
		"docker volume prune -f",
		"docker compose down -v",
		"aws s3 rb s3://bucket --force",
		"aws s3 rm s3://bucket --recursive",
		"aws cloudformation delete-stack --stack-name app",
		"gcloud projects delete my-proj",
		"az group delete -n rg",
		"helm uninstall app",
	] {
		denies(bash(c), "dev.ahp-opa.infra.teardown")
	}
}

test_teardown_evasions_denied if {
	denies(bash("terraform -chdir=infra destroy"), "dev.ahp-opa.infra.teardown")
	denies(bash("cd infra && TF_LOG=1 terraform destroy"), "dev.ahp-opa.infra.teardown")
	denies(bash("kubectl --context prod delete ns/app"), "dev.ahp-opa.infra.teardown")
	denies(bash(`sh -c 'docker system prune -a'`), "dev.ahp-opa.infra.teardown")
	denies(codex(["terraform", "destroy"]), "dev.ahp-opa.infra.teardown")
	denies(bash("yes | terragrunt run-all destroy"), "dev.ahp-opa.infra.teardown")
}

test_teardown_lookalikes_allowed if {
	every c in [
		"terraform plan",
		"terraform plan -destroy",
		"kubectl get ns",
		"kubectl --context kind-dev delete pod web-123",
		"docker ps -a",
		"docker rm old-container",
		"docker compose down",
		"aws s3 ls s3://bucket",
		"helm list",
		"docker image prune -f",
		"docker builder prune -af",
	] {
		lookalike_allowed(bash(c), "dev.ahp-opa.infra.teardown")
	}

	# An apply changes remote state: approvable, not a teardown.
	not denies(bash("terraform apply"), "dev.ahp-opa.infra.teardown")

	# Changes to a bucket or a cluster are the deploy rules'.
	not denies(bash("aws s3 rm s3://bucket/tmp/file.txt"), "dev.ahp-opa.infra.teardown")
	not denies(bash("kubectl delete pod web-123"), "dev.ahp-opa.infra.teardown")
}
