package ahp.tool.before.builtin_test

# The program-name rules honour the effect model's local judgement
# (data.ahp.lib.local): the same act against a target on this machine, a
# local cluster or a rehearsal passes; against anything else it is denied.

test_infra_teardown_local_context if {
	every c in [
		"aws s3 rb s3://prod-bucket --force",
		"aws dynamodb delete-table --table-name orders",
		"aws --endpoint-url https://dynamodb.eu-west-1.amazonaws.com dynamodb delete-table --table-name orders",
		"helm --kube-context prod uninstall app",
		"terraform destroy -auto-approve",
	] {
		denies(bash(c), "dev.ahp-opa.infra.teardown")
	}
	every c in [
		"aws --endpoint-url http://localhost:4566 s3 rb s3://test-bucket --force",
		"AWS_ENDPOINT_URL=http://localhost:4566 aws dynamodb delete-table --table-name orders",
		"aws --endpoint-url=http://127.0.0.1:4566 s3 rm s3://fixtures --recursive",
		"helm --kube-context kind-dev uninstall app",
	] {
		lookalike_allowed(bash(c), "dev.ahp-opa.infra.teardown")
	}
}

test_db_destructive_local_context if {
	every c in [
		"redis-cli -h prod.example.com FLUSHALL",
		`psql -h db.internal -c "DROP TABLE users"`,
		`sqlite3 /var/lib/app/app.db "DROP TABLE users"`,
		# A database file named for the app holds its data, in the
		# workspace or not; only a test, dev or scratch file is a throwaway.
		`sqlite3 app.db "DELETE FROM users"`,
		# Local only by assumption: configuration may point the client elsewhere.
		"redis-cli FLUSHALL",
		"rails db:drop",
	] {
		denies(bash(c), "dev.ahp-opa.db.destructive-statement")
	}
	every c in [
		"redis-cli -h 127.0.0.1 FLUSHALL",
		"redis-cli -h localhost -p 6380 FLUSHDB",
		`sqlite3 :memory: "DROP TABLE t"`,
		`sqlite3 db/dev.sqlite3 "DELETE FROM sessions"`,
		`sqlite3 tmp/test.db "DROP TABLE import_staging"`,
		`psql -h localhost -c "DROP TABLE users"`,
		`psql postgres://localhost/app_test -c "TRUNCATE events"`,
	] {
		lookalike_allowed(bash(c), "dev.ahp-opa.db.destructive-statement")
	}
}

test_publish_local_registry if {
	every c in [
		"docker push ghcr.io/x/y",
		"docker push registry.example.com:5000/app",
		"docker buildx build --push -t ghcr.io/x/y .",
	] {
		denies(bash(c), "dev.ahp-opa.publish.image")
	}
	every c in [
		"docker push localhost:5000/app",
		"docker push 127.0.0.1:5000/app:dev",
		"docker buildx build --push -t localhost:5000/app .",
	] {
		lookalike_allowed(bash(c), "dev.ahp-opa.publish.image")
	}
	denies(bash("npm publish --registry https://registry.npmjs.org"), "dev.ahp-opa.publish.package")
	lookalike_allowed(bash("npm publish --registry http://localhost:4873"), "dev.ahp-opa.publish.package")
}

# A value that never leaves the machine is local like a loopback host: a
# file: repository, an embedded database.
test_on_machine_targets if {
	denies(bash("mvn deploy -DaltDeploymentRepository=rel::default::https://repo.example.com/m2"), "dev.ahp-opa.publish.package")
	lookalike_allowed(bash("mvn deploy -DaltDeploymentRepository=local::default::file:./target/staging-repo"), "dev.ahp-opa.publish.package")
	denies(bash("liquibase --url=jdbc:mysql://db.example.com/app update"), "dev.ahp-opa.effect.remote-change")
	lookalike_allowed(bash("liquibase --url=jdbc:h2:mem:test update"), "dev.ahp-opa.effect.remote-change")
	lookalike_allowed(bash("flyway -url=jdbc:sqlite:build/app.db clean"), "dev.ahp-opa.effect.store-destroy")
}

# A feed is local when written as a path into the workspace; a bare name
# is a source configured elsewhere (nuget.org, github).
test_named_feed_is_not_a_directory if {
	denies(bash("dotnet nuget push bin/App.1.0.0.nupkg -k $KEY -s nuget.org"), "dev.ahp-opa.publish.package")
	denies(bash("dotnet nuget push bin/App.1.0.0.nupkg --source github"), "dev.ahp-opa.publish.package")
	lookalike_allowed(bash("dotnet nuget push bin/App.1.0.0.nupkg -s ./local-feed"), "dev.ahp-opa.publish.package")
	lookalike_allowed(bash("dotnet nuget push bin/App.1.0.0.nupkg --source artifacts/feed"), "dev.ahp-opa.publish.package")
}

test_kubectl_local_context if {
	denies(bash("kubectl --context prod delete ns x"), "dev.ahp-opa.infra.teardown")
	denies(bash("kubectl --context prod apply -f k8s/"), "dev.ahp-opa.deploy.kubectl")
	lookalike_allowed(bash("kubectl --context kind-dev delete ns x"), "dev.ahp-opa.infra.teardown")
	lookalike_allowed(bash("kubectl --context minikube apply -f k8s/"), "dev.ahp-opa.deploy.kubectl")
	every c in [
		"kubectl --context prod uncordon node-1",
		"kubectl --context prod expose deploy web --port=80",
		"kubectl --context prod rollout pause deploy/web",
		"kubectl --context prod drain node-1",
	] {
		denies(bash(c), "dev.ahp-opa.deploy.kubectl")
	}
	every c in [
		"kubectl --context kind-dev uncordon node-1",
		"kubectl --context kind-dev expose deploy web --port=80",
		"kubectl --context colima-dev rollout pause deploy/web",
		"kubectl --context docker-for-desktop drain node-1",
	] {
		lookalike_allowed(bash(c), "dev.ahp-opa.deploy.kubectl")
	}
}

# A .git directory inside an installed dependency is that dependency's
# checkout, not the workspace's history.
test_delete_workspace_dependency_checkouts if {
	every c in [
		"rm -rf .git",
		"rm -rf /home/dev/repo/.git",
		"rm -rf vendor/../.git",
	] {
		denies(bash(c), "dev.ahp-opa.fs.delete-workspace")
	}
	every c in [
		"rm -rf vendor/phpstan/phpstan/.git",
		"rm -rf node_modules/x/.git",
		"find vendor -name .git -type d -prune -exec rm -rf {} +",
		"rm -rf ios/Pods/Alamofire/.git",
		"rm -rf Carthage/Checkouts/Quick/.git",
		"rm -rf .build/checkouts/swift-nio/.git",
		"rm -rf deps/phoenix/.git",
	] {
		lookalike_allowed(bash(c), "dev.ahp-opa.fs.delete-workspace")
	}
}

# A context chosen earlier in the same call is the target of the cluster
# commands after it, unless they name another.
test_kube_context_chosen_earlier if {
	allowed(bash("kubectl config use-context minikube && kubectl apply -f dev.yaml"))
	allowed(bash("kubectx kind-dev; helm upgrade --install app ./chart"))
	denies(bash("kubectl config use-context prod-eu && kubectl delete namespace payments"), "dev.ahp-opa.deploy.kubectl")
	denies(bash("kubectl config use-context minikube && kubectl --context prod delete ns x"), "dev.ahp-opa.deploy.kubectl")
}
