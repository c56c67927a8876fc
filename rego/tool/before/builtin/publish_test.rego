package ahp.tool.before.builtin_test

# dev.ahp-opa.publish.package

test_publish_denied if {
	every c in [
		"npm publish",
		"npm publish --access public",
		"pnpm publish",
		"yarn npm publish",
		"npm unpublish pkg@1.0.0",
		"twine upload dist/*",
		"python -m twine upload dist/*",
		"poetry publish --build",
		"cargo publish",
		"gem push pkg-1.0.gem",
		"mvn deploy",
		"./gradlew publish",
		"docker push org/app:latest",
		"gh release create v1.0.0",
		"uv publish",
	] {
		denies(bash(c), "dev.ahp-opa.publish.package")
	}
}

test_publish_evasions_denied if {
	denies(bash("npm run build && npm publish"), "dev.ahp-opa.publish.package")
	denies(bash("npx vsce publish"), "dev.ahp-opa.publish.package")
	denies(bash("NPM_TOKEN=x npm publish"), "dev.ahp-opa.publish.package")
	denies(bash(`bash -c "cd pkg && npm publish"`), "dev.ahp-opa.publish.package")
	denies(codex(["cargo", "publish", "--allow-dirty"]), "dev.ahp-opa.publish.package")
	denies(bash("python3 -m twine upload --repository pypi dist/*"), "dev.ahp-opa.publish.package")
}

test_publish_lookalikes_allowed if {
	every c in [
		"npm publish --dry-run",
		"cargo publish --dry-run",
		"npm pack",
		"npm install",
		"docker build -t app .",
		"docker pull nginx",
		"goreleaser release --snapshot",
		"./gradlew publishToMavenLocal",
		"mvn package",
		"twine check dist/*",
		"gh release list",
	] {
		lookalike_allowed(bash(c), "dev.ahp-opa.publish.package")
	}
}
