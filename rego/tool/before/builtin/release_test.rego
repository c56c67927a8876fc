package ahp.tool.before.builtin_test

# dev.ahp-opa.git.push-protected

test_push_protected_denied if {
	every c in [
		"git push origin main",
		"git push -u origin master",
		"git push origin HEAD:main",
		"git push origin HEAD:refs/heads/main",
		"git push --tags",
		"git push origin --tags",
		"git push origin v1.2.3",
		"git push origin refs/tags/v2.0.0",
		"git push origin tag v3.0.0",
		"git push --all origin",
		"git push origin release/2.1",
		"git push -o ci.skip origin main",
		# A ref that is one variable speaks by its name.
		`git push origin "$NEXT_VERSION"`,
		"git push upstream v${APP_VER}",
		"git push origin refs/tags/$releaseTag",
		`git push origin "${MAIN_BRANCH}"`,
		# A tag created earlier in the line, and --follow-tags.
		`git tag "$STAMP" && git push origin "$STAMP"`,
		"git push --follow-tags",
		`git push origin "$(git describe --tags --abbrev=0)"`,
	] {
		denied_only(bash(c), "dev.ahp-opa.git.push-protected")
	}
}

test_push_protected_evasions_denied if {
	denies(bash("git add . && git commit -m x && git push origin main"), "dev.ahp-opa.git.push-protected")
	denies(bash(`bash -c "git push origin main"`), "dev.ahp-opa.git.push-protected")
	denies(codex(["git", "push", "origin", "v1.0.0"]), "dev.ahp-opa.git.push-protected")
	denies(bash("git -C /home/dev/repo push https://github.com/org/app.git main"), "dev.ahp-opa.git.push-protected")
}

test_push_protected_lookalikes_allowed if {
	every c in [
		"git push origin feature/x",
		"git push -u origin fix/login",
		`git push origin "$BRANCH"`,
		`git push -u origin "$pr_branch"`,
		`git push origin "chore/bump-$VERSION"`,
		`git tag -d "$OLD" && git push origin "$OLD"`,
		"git push",
		"git push origin HEAD",
		"git push --dry-run origin main",
		"git push -n origin main",
		"git push --force-with-lease origin feature/x",
		"git pull origin main",
		"git fetch origin main",
		"git push origin maintenance-notes",
	] {
		lookalike_allowed(bash(c), "dev.ahp-opa.git.push-protected")
	}
}

test_push_protected_follows_protected_branches if {
	codes_with(bash("git push origin feature/x"), {"protected_branches": ["feature/*"]}) == {"dev.ahp-opa.git.push-protected"}
	codes_with(bash("git push origin main"), {"protected_branches": ["prod"]}) == set()
	codes_with(bash("git push origin main"), {"disabled_rules": ["dev.ahp-opa.git.push-protected"]}) == set()
}

# dev.ahp-opa.git.tag-force

test_tag_force_denied if {
	every c in ["git tag -f v1.0.0", "git tag --force latest HEAD", "git tag -fa v1.2 -m release"] {
		denied_only(bash(c), "dev.ahp-opa.git.tag-force")
	}
}

test_tag_force_lookalikes_allowed if {
	every c in ["git tag v1.2.3", "git tag -l", "git tag -a v1 -m 'fix -f flag'", "git tag -d old"] {
		lookalike_allowed(bash(c), "dev.ahp-opa.git.tag-force")
	}
}

# dev.ahp-opa.gh.release, gh.pr-merge, gh.workflow-run

test_gh_release_acts_denied if {
	denied_only(bash("gh release create v1.2.3 --generate-notes"), "dev.ahp-opa.gh.release")
	denied_only(bash("gh release upload v1.2.3 dist/app.tgz"), "dev.ahp-opa.gh.release")
	denied_only(bash("gh release edit v1.2.3 --draft=false"), "dev.ahp-opa.gh.release")
	denied_only(bash("gh -R org/app release create v9"), "dev.ahp-opa.gh.release")
	denied_only(bash("gh pr merge 42 --squash"), "dev.ahp-opa.gh.pr-merge")
	denied_only(bash("gh pr merge --auto --merge"), "dev.ahp-opa.gh.pr-merge")
	denied_only(bash("gh workflow run deploy.yml -f env=prod"), "dev.ahp-opa.gh.workflow-run")
}

test_gh_release_acts_lookalikes_allowed if {
	every c in ["gh release list", "gh release view v1", "gh release download v1"] {
		lookalike_allowed(bash(c), "dev.ahp-opa.gh.release")
	}
	every c in ["gh pr view 42", "gh pr checks 42", "gh pr create --fill", "gh pr diff 42", "gh pr merge --help"] {
		lookalike_allowed(bash(c), "dev.ahp-opa.gh.pr-merge")
	}
	every c in ["gh workflow list", "gh workflow view ci.yml", "gh run view 1 --log", "gh run list"] {
		lookalike_allowed(bash(c), "dev.ahp-opa.gh.workflow-run")
	}
}

test_gh_release_acts_evasions_denied if {
	denies(bash("GH_TOKEN=x gh release create v1 dist/*"), "dev.ahp-opa.gh.release")
	denies(codex(["gh", "release", "upload", "v1", "a.tgz"]), "dev.ahp-opa.gh.release")
	denies(bash(`bash -c "gh pr merge 7 --rebase --delete-branch"`), "dev.ahp-opa.gh.pr-merge")
	denies(mcp("github-cli", "run_command", {"command": "gh pr merge 7"}), "dev.ahp-opa.gh.pr-merge")
	denies(bash("gh -R org/app workflow run release.yml"), "dev.ahp-opa.gh.workflow-run")
	denies(gemini("gh run rerun 123"), "dev.ahp-opa.gh.workflow-run")
}

# dev.ahp-opa.deploy.site

test_deploy_site_denied if {
	every c in ["vercel deploy --prod", "vc --prod --yes", "npx vercel --prod", "netlify deploy --prod --dir=dist", "mike deploy --push 1.2 latest"] {
		denied_only(bash(c), "dev.ahp-opa.deploy.site")
	}
}

test_deploy_site_lookalikes_allowed if {
	every c in ["vercel deploy", "vercel dev", "netlify deploy --dir=dist", "mike deploy 1.2 latest", "mike serve"] {
		lookalike_allowed(bash(c), "dev.ahp-opa.deploy.site")
	}
}

# dev.ahp-opa.deploy.cloud-storage

test_cloud_storage_denied if {
	every c in [
		"aws s3 cp dist/ s3://site/ --recursive",
		"aws s3 sync ./build s3://www --delete",
		"aws s3 rm s3://data/users.csv",
		"aws --profile prod s3 mv report.csv s3://reports/",
		"gsutil -m cp -r dist gs://site",
		"gsutil rm gs://bucket/data.json",
		"gcloud storage cp -r dist gs://site",
		# Option values after the destination are no operands.
		`aws s3 cp app.zip "s3://$BUCKET/app.zip" --content-type application/zip --metadata '{"v":"2"}'`,
		"gsutil -h Cache-Control:no-cache cp index.html gs://www/",
		"az storage blob upload-batch --destination web --source ./public",
		"rclone sync -P ./site r2:www",
		"rclone copyto ./a.tar.gz backup:archives/a.tar.gz",
		"s3cmd put --acl-public site.tar.gz s3://downloads/site.tar.gz",
	] {
		denies(bash(c), "dev.ahp-opa.deploy.cloud-storage")
	}
}

test_cloud_storage_lookalikes_allowed if {
	every c in [
		"aws s3 ls s3://data/", "aws s3 cp s3://data/fixtures.json ./testdata/", "gsutil ls gs://bucket",
		"gsutil cp gs://bucket/a.txt .", "aws sts get-caller-identity",
		"aws s3 cp ./out s3://bucket/out --recursive --dryrun",
		"aws s3 cp s3://data/a.csv ./a.csv --region eu-west-1",
		"az storage blob download -c web -n index.html -f ./index.html",
		"az storage blob list -c web -o table",
		"rclone copy gdrive:reports ./reports",
		"rclone copy -n ./site r2:www",
		"rclone ls r2:www",
		"s3cmd get s3://downloads/site.tar.gz .",
		"s3cmd put --dry-run a.txt s3://b/a.txt",
	] {
		lookalike_allowed(bash(c), "dev.ahp-opa.deploy.cloud-storage")
	}
}

# dev.ahp-opa.deploy.kubectl

test_deploy_kubectl_denied if {
	every c in [
		"kubectl apply -f k8s/",
		"kubectl --context prod-eu apply -k overlays/prod",
		"kubectl -n payments delete pod api-7d9",
		"kubectl scale deploy/api --replicas=0",
		"kubectl rollout restart deployment/api",
		"kubectl create -f job.yaml",
		"oc apply -f route.yaml",
	] {
		denied_only(bash(c), "dev.ahp-opa.deploy.kubectl")
	}
}

test_deploy_kubectl_lookalikes_allowed if {
	every c in [
		"kubectl get pods -A",
		"kubectl --context kind-dev apply -f k8s/",
		"kubectl apply --context=minikube -f k8s/",
		"kubectl apply --dry-run=client -f k8s/",
		"kubectl diff -f k8s/",
		"kubectl logs -n default deploy/api",
		"kubectl rollout status deployment/api",
		"kubectl describe pod api",
	] {
		lookalike_allowed(bash(c), "dev.ahp-opa.deploy.kubectl")
	}
}

# dev.ahp-opa.persistence.installer-rc

test_installer_rc_denied if {
	every c in ["conda init zsh", "pipx ensurepath", "pnpm setup", "volta setup", "./rustup-init -y", "sh rustup-init.sh -y", "opam init -y", "mamba shell init --shell bash"] {
		denied_only(bash(c), "dev.ahp-opa.persistence.installer-rc")
	}
}

test_installer_rc_lookalikes_allowed if {
	every c in ["conda activate dev", "conda init --dry-run zsh", "pipx install black", "pnpm install", "./rustup-init -y --no-modify-path", "opam init -n", "rustup-init --help"] {
		lookalike_allowed(bash(c), "dev.ahp-opa.persistence.installer-rc")
	}
}

# Evasions: wrappers, other harnesses and tool shapes reach the same rules.

test_release_rules_evasions_denied if {
	denies(bash("git tag -f v1 && git push -f origin v1"), "dev.ahp-opa.git.tag-force")
	denies(codex(["git", "tag", "--force", "v2"]), "dev.ahp-opa.git.tag-force")
	denies(bash("cd site && npx vercel deploy --prod"), "dev.ahp-opa.deploy.site")
	denies(gemini("mike deploy --push --update-aliases 2.0 latest"), "dev.ahp-opa.deploy.site")
	denies(bash("AWS_PROFILE=prod aws s3 sync build/ s3://www"), "dev.ahp-opa.deploy.cloud-storage")
	denies(codex(["gsutil", "rm", "gs://bucket/a"]), "dev.ahp-opa.deploy.cloud-storage")
	denies(mcp("kubernetes", "kubectl", {"args": ["apply", "-f", "deploy.yaml"]}), "dev.ahp-opa.deploy.kubectl")
	denies(bash("timeout 60 kubectl delete deploy api"), "dev.ahp-opa.deploy.kubectl")
	denies(bash("curl -sSf https://sh.rustup.rs -o rustup-init.sh && sh rustup-init.sh -y"), "dev.ahp-opa.persistence.installer-rc")
	denies(codex(["conda", "init", "bash"]), "dev.ahp-opa.persistence.installer-rc")
	denies(bash("npm run build && npx changeset publish"), "dev.ahp-opa.publish.package")
	denies(bash(`sh -c "docker push org/app:1"`), "dev.ahp-opa.publish.image")
	denies(codex(["docker", "buildx", "build", "--push", "-t", "org/app", "."]), "dev.ahp-opa.publish.image")
}
