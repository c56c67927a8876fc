package ahp.tool.before.builtin

import data.ahp.lib.args

# METADATA
# title: Publishing packages and images
# description: |
#   Denies publishing to a package registry or image registry, which cannot
#   be taken back: npm/pnpm/yarn/bun publish and npm unpublish, twine
#   upload, poetry/flit/hatch/uv/pdm publish, cargo publish, gem push,
#   mvn deploy, gradle publish, dotnet/nuget push, docker/podman push, helm
#   push, deno/jsr publish, vsce/ovsx publish, goreleaser release and
#   gh release create. Dry runs (--dry-run, --snapshot) are allowed.
# custom:
#   severity: high
#   code: dev.ahp-opa.publish.package
violation contains {
	"reason": concat(" ", [
		"Blocked publishing a package, image or release; once published it cannot be taken back.",
		"Build and test locally (or use --dry-run), and ask the user to publish.",
	]),
	"code": "dev.ahp-opa.publish.package",
} if {
	input.ahp.shell.classes.publisher
	some i in input.ahp.shell.classes.publisher
	cmd := input.ahp.shell.commands[i]
	kind := _publish_kind[cmd.name]
	_publishes(kind, args.operands(cmd.args))
	not _dry_run_publish(cmd.args)
}

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
	"docker": "image", "podman": "image", "nerdctl": "image", "buildah": "image", "helm": "image",
	"goreleaser": "goreleaser", "gh": "gh", "pod": "pod",
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

_publishes("image", ops) if ops[0] == "push"

_publishes("image", ops) if array.slice(ops, 0, 2) in {["image", "push"], ["manifest", "push"]}

_publishes("goreleaser", ops) if ops[0] in {"release", "publish"}

_publishes("gh", ops) if array.slice(ops, 0, 2) == ["release", "create"]

_publishes("pod", ops) if array.slice(ops, 0, 2) == ["trunk", "push"]
