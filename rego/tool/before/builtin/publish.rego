package ahp.tool.before.builtin

import data.ahp.lib.args
import data.ahp.lib.local

# METADATA
# title: Publishing packages and images
# description: |
#   Denies publishing to a package registry or image registry, which cannot
#   be taken back: npm/pnpm/yarn/bun publish and npm unpublish, twine
#   upload, poetry/flit/hatch/uv/pdm publish, cargo publish, gem push,
#   mvn deploy, gradle publish, dotnet/nuget push, helm push, deno/jsr
#   publish, vsce/ovsx publish, goreleaser release, and the release tools
#   that publish: changeset publish, release-it, semantic-release, lerna
#   publish, np (directly or through npx, pnpm, yarn). Dry runs (--dry-run,
#   --snapshot) are allowed. Images and GitHub releases have rules of
#   their own.
# custom:
#   severity: high
#   code: dev.ahp-opa.publish.package
#   approvable: true
violation contains {
	"reason": concat(" ", [
		"Blocked publishing a package, image or release; once published it cannot be taken back.",
		"Build and test locally (or use --dry-run), and ask the user to publish.",
	]),
	"code": "dev.ahp-opa.publish.package",
	"trigger": concat("", [_unwrapped_from(cmd), concat(" ", array.concat([cmd.name], array.slice(args.operands(cmd.args), 0, 2)))]),
} if {
	input.ahp.shell.classes.publisher
	some i in input.ahp.shell.classes.publisher
	cmd := input.ahp.shell.commands[i]
	not local.command(i)
	kind := _publish_kind[cmd.name]
	_publishes(kind, args.operands(cmd.args))
	not _dry_run_publish(cmd.args)
	not _rc_help(cmd.args)
}

# METADATA
# title: Pushing container images
# description: |
#   Denies pushing an image to a registry: docker/podman/nerdctl/buildah
#   push and image push, manifest push, docker buildx build|bake with
#   --push or --output type=registry (or image with push=true), crane
#   push|copy|cp|append|mutate|tag, skopeo copy|sync to docker://, ko
#   build/publish/apply (which push by default) and jib builds to a
#   registry. Building and pulling are allowed.
# custom:
#   severity: high
#   code: dev.ahp-opa.publish.image
#   approvable: true
violation contains {
	"reason": concat(" ", [
		"Blocked pushing a container image to a registry; others pull and deploy it as soon as it is there.",
		"Build locally (docker build, --load) and ask the user to push.",
	]),
	"code": "dev.ahp-opa.publish.image",
	"trigger": concat("", [_unwrapped_from(cmd), concat(" ", array.concat([cmd.name], array.slice(args.operands(cmd.args), 0, 2)))]),
} if {
	input.ahp.shell.classes.release
	some i in input.ahp.shell.classes.release
	cmd := input.ahp.shell.commands[i]
	not local.command(i)
	_image_pusher[cmd.name]
	_pushes_image(cmd.name, cmd.args)
	not _dry_run_publish(cmd.args)
	not _rc_help(cmd.args)
}

_image_pusher := {"docker", "podman", "nerdctl", "buildah", "crane", "skopeo", "ko", "regctl", "oras"}

_pushes_image(name, a) if {
	name in {"docker", "podman", "nerdctl", "buildah"}
	ops := args.operands(a)
	_image_push_ops(ops)
}

_image_push_ops(ops) if ops[0] == "push"

_image_push_ops(ops) if array.slice(ops, 0, 2) in {["image", "push"], ["manifest", "push"]}

_image_push_ops(ops) if array.slice(ops, 0, 3) in {["buildx", "imagetools", "create"]}

_pushes_image(name, a) if {
	name in {"docker", "podman", "nerdctl", "buildah"}
	some op in array.slice(args.operands(a), 0, 2)
	op in {"build", "bake", "buildx"}
	_build_pushes(a)
}

_build_pushes(a) if "--push" in args.options(a)

_build_pushes(a) if {
	some v in args.option_values(a, "-o", "--output")
	regex.match(`(^|,)(type=registry|push=true)(,|$)`, v)
}

_build_pushes(a) if {
	some o in args.options(a)
	regex.match(`^--output=.*(type=registry|push=true)`, o)
}

_pushes_image("crane", a) if args.operands(a)[0] in {"push", "copy", "cp", "append", "mutate", "tag", "rebase", "delete", "flatten"}

_pushes_image("skopeo", a) if {
	args.operands(a)[0] in {"copy", "sync"}
	some op in array.slice(args.operands(a), 1, 100)
	regex.match(`^docker://`, op)
	op == _last(args.operands(a))
}

_pushes_image("skopeo", a) if args.operands(a)[0] == "delete"

_pushes_image("ko", a) if {
	args.operands(a)[0] in {"build", "publish", "apply", "resolve", "create"}
	not "--local" in a
	not "-L" in a
	not "--push=false" in a
}

_pushes_image("regctl", a) if array.slice(args.operands(a), 0, 2) in {["image", "copy"], ["image", "delete"], ["tag", "delete"]}

_pushes_image("oras", a) if args.operands(a)[0] in {"push", "cp", "copy", "attach", "tag"}

# Publishing tools by the family of command line they take; the functions
# below have the family as a constant first argument (see infra.rego).
_publish_kind := {
	"npm": "js", "pnpm": "js", "bun": "js", "yarn": "yarn",
	"npx": "runner", "bunx": "runner", "pipx": "runner", "uvx": "runner",
	"twine": "twine",
	"python": "python", "python3": "python", "python2": "python", "pypy3": "python",
	"poetry": "publish", "flit": "publish", "hatch": "publish", "uv": "publish", "pdm": "publish",
	"deno": "publish", "jsr": "publish", "vsce": "publish", "ovsx": "publish", "rye": "publish",
	"cargo": "cargo", "gem": "gem", "mvn": "maven", "mvnw": "maven",
	"gradle": "gradle", "gradlew": "gradle", "dotnet": "dotnet", "nuget": "nuget",
	"helm": "chart", "goreleaser": "goreleaser", "pod": "pod",
	"changeset": "changeset", "release-it": "release-tool", "semantic-release": "release-tool",
	"lerna": "lerna", "np": "release-tool", "cloudsmith": "cloudsmith",
}

_dry_run_publish(a) if {
	some o in args.options(a)
	regex.match(`^--(dry-run|dryrun|snapshot|skip-publish)(=true)?$`, o)
}

_publishes("js", ops) if ops[0] in {"publish", "unpublish"}

_publishes("yarn", ops) if ops[0] in {"publish", "unpublish"}

_publishes("yarn", ops) if array.slice(ops, 0, 2) == ["npm", "publish"]

# npx vsce publish, pnpm dlx twine upload, pipx run twine upload.
_publishes(kind, ops) if {
	kind in {"runner", "js", "yarn"}
	some i, op in ops
	op in {"twine", "vsce", "@vscode/vsce", "ovsx"}
	ops[i + 1] in {"upload", "publish"}
}

_publishes("twine", ops) if ops[0] == "upload"

_publishes("python", ops) if {
	some i, op in ops
	op == "twine"
	ops[i + 1] == "upload"
}

_publishes("publish", ops) if ops[0] == "publish"

_publishes("cargo", ops) if ops[0] in {"publish", "yank", "owner"}

_publishes("gem", ops) if ops[0] in {"push", "yank"}

_publishes("maven", ops) if {
	some op in ops
	op in {"deploy", "release:perform", "deploy:deploy-file"}
}

_publishes("gradle", ops) if {
	some op in ops
	regex.match(`^(:?[\w-]+:)*publish([A-Z]\w*)?$`, op)
	not op in {"publishToMavenLocal"}
	not endswith(op, "ToMavenLocal")
}

_publishes("dotnet", ops) if array.slice(ops, 0, 2) == ["nuget", "push"]

_publishes("nuget", ops) if ops[0] == "push"

_publishes("chart", ops) if ops[0] == "push"

_publishes("goreleaser", ops) if ops[0] in {"release", "publish"}

_publishes("changeset", ops) if ops[0] == "publish"

_publishes("cloudsmith", ops) if ops[0] in {"push", "upload"}

_publishes("lerna", ops) if ops[0] == "publish"

# release-it and semantic-release publish and tag by default: any run
# that is not a dry run (--dry-run) or help.
_publishes("release-tool", ops) := true

# The same release tools through a runner: npx changeset publish,
# pnpm release-it, yarn semantic-release, pnpm exec lerna publish.
_publishes(kind, ops) if {
	kind in {"runner", "js", "yarn"}
	some i, op in ops
	i < 2
	_release_tool(op, array.slice(ops, i + 1, count(ops)))
}

_release_tool(op, _) if op in {"release-it", "semantic-release", "np"}

_release_tool(op, rest) if {
	op in {"changeset", "@changesets/cli", "lerna"}
	rest[0] == "publish"
}

_publishes("pod", ops) if array.slice(ops, 0, 2) == ["trunk", "push"]
