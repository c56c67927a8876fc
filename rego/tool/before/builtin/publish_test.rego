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
		"uv publish",
		"npx changeset publish",
		"pnpm changeset publish",
		"release-it minor",
		"npx release-it --ci",
		"npx semantic-release",
		"npx lerna publish from-package --yes",
		"cloudsmith push deb org/repo/any-distro/any-version dist/app.deb",
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
		"npx changeset version",
		"release-it --help",
		"npx release-it --dry-run",
		"lerna run build",
	] {
		lookalike_allowed(bash(c), "dev.ahp-opa.publish.package")
	}
}

# dev.ahp-opa.publish.image

test_publish_image_denied if {
	every c in [
		"docker push org/app:latest",
		"docker image push org/app",
		"podman push quay.io/org/app:v1",
		"docker buildx build --platform linux/amd64,linux/arm64 -t org/app --push .",
		"docker buildx build -t org/app --output type=registry .",
		"docker buildx bake --push",
		"crane push image.tar ghcr.io/org/app:v1",
		"crane copy ghcr.io/org/app:rc ghcr.io/org/app:latest",
		"skopeo copy oci-archive:app.tar docker://ghcr.io/org/app:1",
		"ko build ./cmd/app",
	] {
		denied_only(bash(c), "dev.ahp-opa.publish.image")
	}
}

test_publish_image_lookalikes_allowed if {
	every c in [
		"docker build -t app:dev .",
		"docker buildx build --load -t app:dev .",
		"docker pull ghcr.io/org/app:1",
		"crane digest ghcr.io/org/app:1",
		"skopeo inspect docker://ghcr.io/org/app:1",
		"skopeo copy docker://ghcr.io/org/app:1 oci-archive:app.tar",
		"ko build --local ./cmd/app",
		"docker push --help",
	] {
		lookalike_allowed(bash(c), "dev.ahp-opa.publish.image")
	}
}
