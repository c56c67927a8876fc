package ahp.tool.before.builtin

import data.ahp.lib.args
import data.ahp.lib.config
import data.ahp.lib.local
import input.ahp.shell.programs

# Release, publish and deploy acts: each has its own code, so that a team
# whose agent may release switches off just that one (disabled_rules).

# METADATA
# title: Pushing to a protected branch or a tag
# description: |
#   Denies a push without force that updates a protected branch or a tag:
#   git push origin main, HEAD:main, --all, --tags, a version tag
#   (git push origin v1.2.3), refs/tags/… or `tag NAME`. The protected
#   branches are the library's protected_branches when set; otherwise
#   main, master, trunk, develop, production, prod, stable, gh-pages and
#   release/*. A ref that is one variable counts by its name ("$VERSION",
#   v${NEW_VERSION}, $RELEASE_TAG, ${DEFAULT_BRANCH}), as does a tag a
#   git tag in the same line created, and --follow-tags. A push whose
#   branch cannot be told (git push, HEAD, "$BRANCH") and dry runs are
#   allowed; forced pushes are the force-push rule's.
# custom:
#   severity: high
#   code: dev.ahp-opa.git.push-protected
#   approvable: true
violation contains {
	"reason": concat(" ", [
		"Blocked a push to a protected branch or a tag; it releases or changes shared history without review.",
		"Push to a feature branch and open a pull request, or ask the user to push the release.",
	]),
	"code": "dev.ahp-opa.git.push-protected",
	"trigger": trim_space(concat(" ", ["git push", _remote_of(g.args), target])),
} if {
	programs.git
	some g in _git
	not local.command(g.command)
	g.sub == "push"
	not _forced(g.args)
	not _push_deletes(g.args)
	not _push_dry_run(g.args)
	some target in _push_protected_targets(g.args)
}

_push_dry_run(a) if "n" in args.short_flags(a, {"o"})

_push_dry_run(a) if args.has_long_flag(a, "--dry-run", 4)

# git push options that take a separate value: their value is no refspec.
_push_value_options := {"-o", "--push-option", "--repo", "--receive-pack", "--exec"}

_push_operands(a) := [x |
	some i, x in a
	not _push_option_value(a, i)
	not _push_option(a, i)
]

_push_option(a, i) if {
	i < args.end_of_options(a)
	startswith(a[i], "-")
}

_push_option(a, i) if i == args.end_of_options(a)

_push_option_value(a, i) if {
	i > 0
	a[i - 1] in _push_value_options
}

_push_refspecs(a) := array.slice(_push_operands(a), 1, 1000)

_push_protected_targets(a) := {o |
	some o in args.options(a)
	o in {"--tags", "--follow-tags", "--all", "--branches"}
} | {t |
	refspecs := _push_refspecs(a)
	some i, r in refspecs
	not startswith(r, "+")
	not startswith(r, ":")
	t := _push_target(refspecs, i, r)
	_release_ref(t)
}

# `git push origin tag v1` names the tag after the word tag.
_push_target(refspecs, i, _) := concat("", ["refs/tags/", refspecs[i + 1]]) if refspecs[i] == "tag"

_push_target(refspecs, i, r) := t if {
	refspecs[i] != "tag"
	not _tag_word(refspecs, i)
	parts := split(r, ":")
	t := parts[count(parts) - 1]
}

_tag_word(refspecs, i) if {
	i > 0
	refspecs[i - 1] == "tag"
}

_release_ref(t) if startswith(t, "refs/tags/")

_release_ref(t) if regex.match(`^v?[0-9]+(\.[0-9]+)+([-+.][0-9A-Za-z.-]+)?$`, t)

_release_ref(t) if {
	not startswith(t, "refs/tags/")
	config.push_protected_branch(trim_prefix(t, "refs/heads/"))
}

# A ref that is one variable, the value CI fills in: its name says what it
# holds. git push origin "$VERSION", v${NEW_VERSION}, ${RELEASE_TAG} and a
# loop's $tag push tags; ${DEFAULT_BRANCH} or $RELEASE_BRANCH a protected
# branch. A bare $BRANCH or $PR_BRANCH may be the agent's own, and stays
# allowed.
_release_ref(t) if {
	words := _ref_variable_words(t)
	some w in words
	w in {"tag", "tags", "version", "ver", "release", "semver"}
}

_release_ref(t) if {
	words := _ref_variable_words(t)
	"branch" in words
	some w in words
	w in {"main", "master", "default", "base", "trunk", "develop", "prod", "production", "stable", "deploy", "publish", "pages"}
}

# A ref a git tag in the same command line created: git tag "$NEXT" &&
# git push origin "$NEXT".
_release_ref(t) if t in _created_tags

# A ref git itself names as a tag: git push origin "$(git describe --tags)".
_release_ref(t) if regex.match(`^(refs/tags/)?v?\$\(git (describe|tag)\b`, t)

# _ref_variable_words splits the name of the variable a ref consists of
# (after refs/tags/, refs/heads/ or a v prefix) into lower-case words:
# ENV_TAG_BRANCH and envTagBranch are env, tag, branch. $${tag} is a
# Makefile recipe's $tag.
_ref_variable_words(t) := words if {
	[_, name] := regex.find_all_string_submatch_n(`^(?:refs/(?:tags|heads)/)?[vV]?\$\$?\{?([A-Za-z_][A-Za-z0-9_]*)\}?$`, t, 1)[0]
	words := split(lower(regex.replace(name, `([a-z0-9])([A-Z])`, "${1}_${2}")), "_")
}

_created_tags contains x if {
	programs.git
	some g in _git
	g.sub == "tag"
	not _tag_not_created(g.args)
	some x in args.operands(g.args)
}

# git tag -d, -l, --list, -v and --contains create nothing.
_tag_not_created(a) if {
	some o in args.options(a)
	o in {"-d", "--delete", "-l", "--list", "-v", "--verify", "--contains", "--no-contains", "--points-at", "--merged", "--no-merged"}
}

# METADATA
# title: Moving an existing tag
# description: |
#   Denies git tag -f / --force, which moves a tag that others may already
#   have fetched or released from.
# custom:
#   severity: medium
#   code: dev.ahp-opa.git.tag-force
violation contains {
	"reason": concat(" ", [
		"Blocked moving an existing git tag (git tag -f); released tags must not change under the people who use them.",
		"Create a new tag instead, and ask the user before replacing a published one.",
	]),
	"code": "dev.ahp-opa.git.tag-force",
	"trigger": "git tag --force",
} if {
	programs.git
	some g in _git
	not local.command(g.command)
	g.sub == "tag"
	_tag_forced(g.args)
}

_tag_forced(a) if "f" in args.short_flags(a, {"m", "F", "u"})

_tag_forced(a) if args.has_long_flag(a, "--force", 4)

# METADATA
# title: Creating or changing a GitHub release
# description: |
#   Denies gh release create, upload and edit: a release is public and
#   its assets are downloaded by users and automation.
# custom:
#   severity: high
#   code: dev.ahp-opa.gh.release
#   approvable: true
violation contains {
	"reason": concat(" ", [
		"Blocked creating or changing a GitHub release; users and automation download releases as soon as they appear.",
		"Prepare the notes and assets, and ask the user to publish the release.",
	]),
	"code": "dev.ahp-opa.gh.release",
	"trigger": concat(" ", ["gh release", verb]),
} if {
	programs.gh
	some i in programs.gh
	cmd := input.ahp.shell.commands[i]
	not local.command(i)
	cmd.name == "gh"
	not _rc_help(cmd.args)
	ops := _gh_operands(cmd.args)
	ops[0] == "release"
	verb := ops[1]
	verb in {"create", "new", "upload", "edit"}
}

# METADATA
# title: Merging a pull request
# description: |
#   Denies gh pr merge (with or without --auto): merging is the review's
#   decision, not the agent's.
# custom:
#   severity: high
#   code: dev.ahp-opa.gh.pr-merge
#   approvable: true
violation contains {
	"reason": concat(" ", [
		"Blocked merging a pull request; merging is the reviewer's decision.",
		"Leave the pull request open and ask the user to review and merge it.",
	]),
	"code": "dev.ahp-opa.gh.pr-merge",
	"trigger": "gh pr merge",
} if {
	programs.gh
	some i in programs.gh
	cmd := input.ahp.shell.commands[i]
	not local.command(i)
	cmd.name == "gh"
	not _rc_help(cmd.args)
	array.slice(_gh_operands(cmd.args), 0, 2) == ["pr", "merge"]
}

# METADATA
# title: Starting a workflow run
# description: |
#   Denies gh workflow run, which starts a CI workflow by hand, often a
#   release or a deployment.
# custom:
#   severity: medium
#   code: dev.ahp-opa.gh.workflow-run
#   approvable: true
violation contains {
	"reason": concat(" ", [
		"Blocked starting a GitHub Actions workflow by hand; manual workflows usually release or deploy.",
		"Ask the user to start the workflow.",
	]),
	"code": "dev.ahp-opa.gh.workflow-run",
	"trigger": "gh workflow run",
} if {
	programs.gh
	some i in programs.gh
	cmd := input.ahp.shell.commands[i]
	not local.command(i)
	cmd.name == "gh"
	not _rc_help(cmd.args)
	array.slice(_gh_operands(cmd.args), 0, 2) in {["workflow", "run"], ["run", "rerun"]}
}

# METADATA
# title: Deploying a site to production
# description: |
#   Denies production deploys of static sites and previews: vercel/vc
#   --prod, netlify deploy --prod, mike deploy --push (documentation
#   sites published to gh-pages). Preview deploys are allowed.
# custom:
#   severity: high
#   code: dev.ahp-opa.deploy.site
#   approvable: true
violation contains {
	"reason": concat(" ", [
		"Blocked a production deploy; it changes what users see right away.",
		"Deploy a preview (without --prod / --push) and ask the user to promote it.",
	]),
	"code": "dev.ahp-opa.deploy.site",
	"trigger": concat(" ", [cmd.name, flag]),
} if {
	input.ahp.shell.classes.release
	some i in input.ahp.shell.classes.release
	cmd := input.ahp.shell.commands[i]
	not local.command(i)
	_site_deployer[cmd.name]
	some flag in _site_deploy_via(cmd.name, cmd.args)
}

_site_deploy_via(name, a) := _site_deploy(name, a) if not name in {"npx", "pnpx", "bunx"}

# npx vercel --prod: the deployer is the runner's first operand.
_site_deploy_via(name, a) := _site_deploy(x, array.slice(a, i + 1, count(a))) if {
	name in {"npx", "pnpx", "bunx"}
	some i, x in a
	x == args.operands(a)[0]
	x in {"vercel", "vc", "netlify", "mike"}
}

_site_deployer := {"vercel", "vc", "netlify", "mike", "npx", "pnpx", "bunx"}

_site_deploy(name, a) := {o |
	some o in args.options(a)
	o in {"--prod", "--production", "--prod=true"}
} if name in {"vercel", "vc", "netlify"}

_site_deploy("mike", a) := {"deploy --push"} if {
	args.operands(a)[0] in {"deploy", "set-default", "alias", "delete", "retitle"}
	some o in args.options(a)
	o in {"--push", "-p"}
}

# METADATA
# title: Writing to cloud storage
# description: |
#   Denies copying, syncing, moving or deleting objects in a bucket:
#   aws s3 cp|sync|mv|rm whose destination (or, for rm, target) is s3://,
#   gsutil cp|rsync|mv|rm to gs://, gcloud storage cp|rsync|mv|rm to gs://,
#   azcopy copy|sync|remove to a blob URL, az storage blob upload,
#   upload-batch and sync, s3cmd put|sync to s3://, rclone
#   copy|copyto|move|moveto|sync to a
#   remote (name:path). Option values (--cache-control max-age=60,
#   --metadata '{…}') are not operands. Downloads, listings and dry runs
#   are allowed.
# custom:
#   severity: high
#   code: dev.ahp-opa.deploy.cloud-storage
#   approvable: true
violation contains {
	"reason": concat(" ", [
		"Blocked writing to or deleting from a cloud storage bucket; buckets often serve sites, backups or data other systems read.",
		"Write to a local directory, and ask the user to upload or delete in the bucket.",
	]),
	"code": "dev.ahp-opa.deploy.cloud-storage",
	"trigger": concat(" ", [cmd.name, verb, target]),
} if {
	some cmd in _storage_commands
	[verb, target] := _bucket_write(cmd.name, _storage_operands(cmd.name, cmd.args))
}

# The commands of the storage CLIs, not judged local (a dry run, a local
# emulator) by the effect model.
_storage_commands contains cmd if {
	input.ahp.shell.classes.release
	some i in input.ahp.shell.classes.release
	cmd := input.ahp.shell.commands[i]
	not local.command(i)
	cmd.name in {"aws", "gsutil", "gcloud", "azcopy"}
}

# az, rclone and s3cmd are not in the release class: found by name.
_storage_commands contains cmd if {
	some name in ["az", "rclone", "s3cmd"]
	programs[name]
	some i in programs[name]
	cmd := input.ahp.shell.commands[i]
	cmd.name == name
	not local.command(i)
	not _storage_rehearsal(name, cmd.args)
}

_storage_rehearsal(_, a) if {
	some o in a
	o in {"--dry-run", "--help", "-h"}
}

# rclone -n is --dry-run; az -n is --name.
_storage_rehearsal("rclone", a) if "n" in args.short_flags(a, set())

# _storage_operands are a storage command's operands without the values
# of its options: aws s3 cp f s3://b/f --cache-control max-age=60 has
# the operands s3, cp, f and s3://b/f.
_storage_operands(name, a) := [x |
	some i, x in a
	not startswith(x, "-")
	not _storage_value(name, a, i)
]

_storage_value(name, a, i) if {
	i > 0
	a[i - 1] in _storage_value_options[name]
}

_storage_value_options := {
	"aws": {
		"--acl", "--cache-control", "--content-type", "--content-disposition", "--content-encoding",
		"--content-language", "--expires", "--metadata", "--metadata-directive", "--storage-class",
		"--sse", "--sse-kms-key-id", "--sse-c", "--sse-c-key", "--grants", "--website-redirect",
		"--exclude", "--include", "--region", "--profile", "--endpoint-url", "--source-region",
		"--page-size", "--expected-size", "--output", "--query", "--color", "--ca-bundle",
		"--cli-read-timeout", "--cli-connect-timeout", "--checksum-algorithm", "--request-payer",
	},
	"gsutil": {"-h", "-o", "-a", "-z", "-j", "-s", "-x", "-p", "-u"},
	"gcloud": {
		"--cache-control", "--content-type", "--content-disposition", "--content-encoding",
		"--content-language", "--custom-metadata", "--predefined-acl", "--storage-class",
		"--project", "--exclude", "-x", "--account", "--configuration", "--format",
	},
	"azcopy": {"--include-pattern", "--exclude-pattern", "--log-level", "--block-blob-tier", "--content-type", "--cache-control"},
	"az": {
		"--account-name", "--account-key", "--container-name", "-c", "--name", "-n", "--file", "-f",
		"--destination", "-d", "--source", "-s", "--pattern", "--subscription", "--auth-mode",
		"--connection-string", "--sas-token", "--content-type", "--content-cache-control", "--overwrite",
		"--destination-path", "--output", "-o", "--query", "--resource-group", "-g", "--tier",
	},
	"s3cmd": {"--acl-grant", "--add-header", "--mime-type", "--exclude", "--include", "--rexclude", "--rinclude", "--storage-class", "-c", "--config", "--access_key", "--secret_key", "--region", "--host"},
	"rclone": {
		"--config", "--exclude", "--include", "--filter", "--transfers", "--checkers", "--log-file",
		"--log-level", "--bwlimit", "--exclude-from", "--include-from", "--filter-from", "--max-age",
		"--min-age", "--max-size", "--min-size", "--backup-dir", "--suffix", "--retries", "--timeout",
	},
}

_bucket_write("aws", ops) := [concat(" ", ["s3", ops[i + 1]]), ops[i + 3]] if {
	some i, op in ops
	op == "s3"
	ops[i + 1] in {"cp", "sync", "mv"}
	startswith(ops[i + 3], "s3://")
}

_bucket_write("aws", ops) := ["s3 rm", ops[i + 2]] if {
	some i, op in ops
	op == "s3"
	ops[i + 1] == "rm"
	startswith(ops[i + 2], "s3://")
}

_bucket_write("gsutil", ops) := [ops[0], _last(ops)] if {
	ops[0] in {"cp", "rsync", "mv"}
	startswith(_last(ops), "gs://")
}

_bucket_write("gsutil", ops) := ["rm", ops[1]] if {
	ops[0] == "rm"
	startswith(ops[1], "gs://")
}

_bucket_write("gcloud", ops) := [concat(" ", ["storage", ops[i + 1]]), _last(ops)] if {
	some i, op in ops
	op == "storage"
	ops[i + 1] in {"cp", "rsync", "mv", "rm"}
	startswith(_last(ops), "gs://")
}

_bucket_write("azcopy", ops) := [ops[0], _last(ops)] if {
	ops[0] in {"copy", "cp", "sync", "remove", "rm"}
	regex.match(`^https://[^/]+\.(blob|dfs)\.core\.windows\.net/`, _last(ops))
}

# az storage blob upload, upload-batch and sync send files to a container.
_bucket_write("az", ops) := [concat(" ", ["storage", ops[i + 1], ops[i + 2]]), "blob container"] if {
	some i, op in ops
	op == "storage"
	ops[i + 1] in {"blob", "file"}
	ops[i + 2] in {"upload", "upload-batch", "sync"}
}

# s3cmd put|sync|cp|mv f s3://b/f.
_bucket_write("s3cmd", ops) := [ops[0], _last(ops)] if {
	ops[0] in {"put", "sync", "cp", "mv"}
	count(ops) >= 3
	startswith(_last(ops), "s3://")
}

# rclone copy dir remote:path: the destination is a configured remote.
_bucket_write("rclone", ops) := [ops[0], _last(ops)] if {
	ops[0] in {"copy", "copyto", "move", "moveto", "sync"}
	count(ops) >= 3
	regex.match(`^[A-Za-z0-9_.-]{2,}:`, _last(ops))
}

_last(a) := a[count(a) - 1]

# METADATA
# title: Changing a Kubernetes cluster
# description: |
#   Denies kubectl (and oc, kubecolor) commands that change a cluster:
#   apply, create, replace, patch, delete, scale, set, edit, drain,
#   cordon, annotate/label --overwrite and rollout restart|undo, unless
#   the command names a local cluster's context (kind-*, minikube,
#   docker-desktop, k3d-*, rancher-desktop, orbstack, colima) or is a dry
#   run (--dry-run=client|server). Reading (get, describe, logs, diff) is
#   allowed.
# custom:
#   severity: high
#   code: dev.ahp-opa.deploy.kubectl
violation contains {
	"reason": concat(" ", [
		"Blocked changing a Kubernetes cluster that is not a local one; it may be shared or in production.",
		"Use `kubectl diff` or `--dry-run=server` to show the change, and ask the user to apply it (or name a local context such as kind-*).",
	]),
	"code": "dev.ahp-opa.deploy.kubectl",
	"trigger": concat(" ", [cmd.name, verb]),
} if {
	input.ahp.shell.classes.infra
	some i in input.ahp.shell.classes.infra
	cmd := input.ahp.shell.commands[i]
	not local.command(i)
	cmd.name in {"kubectl", "oc", "kubecolor"}
	verb := _kubectl_verb(cmd.args)
	_kubectl_changes(verb, cmd.args)
	not _kubectl_dry_run(cmd.args)
}

# kubectl options before the verb that take a separate value.
_kubectl_value_options := {"-n", "--namespace", "--context", "--cluster", "--kubeconfig", "--user", "-s", "--server", "--token", "--as", "-l", "--selector", "-f", "--filename", "-o", "--output", "-k", "--kustomize", "-c", "--container"}

_kubectl_words(a) := [x |
	some i, x in a
	not startswith(x, "-")
	not _kubectl_value(a, i)
]

_kubectl_value(a, i) if {
	i > 0
	a[i - 1] in _kubectl_value_options
}

_kubectl_verb(a) := _kubectl_words(a)[0]

_kubectl_changes(verb, _) if verb in {"apply", "create", "replace", "patch", "delete", "scale", "set", "edit", "drain", "cordon", "uncordon", "taint", "autoscale", "expose", "run"}

_kubectl_changes("rollout", a) if _kubectl_words(a)[1] in {"restart", "undo", "resume", "pause"}

_kubectl_changes(verb, a) if {
	verb in {"annotate", "label"}
	"--overwrite" in a
}

_kubectl_dry_run(a) if {
	some o in args.options(a)
	o in {"--dry-run=client", "--dry-run=server", "--dry-run"}
}

# METADATA
# title: Installers that rewrite shell startup files
# description: |
#   Denies setup commands whose job is to edit ~/.bashrc, ~/.zshrc or
#   ~/.profile: conda/mamba/micromamba init, pipx ensurepath, pnpm setup,
#   volta setup, rustup-init without --no-modify-path, opam init without
#   -n / --no-setup, and the same through sh rustup-init.sh.
# custom:
#   severity: medium
#   code: dev.ahp-opa.persistence.installer-rc
violation contains {
	"reason": concat(" ", [
		"Blocked an installer step that edits shell startup files (~/.bashrc, ~/.zshrc, ~/.profile); the change outlives the session.",
		"Run the tool through its full path or set PATH for one command, and ask the user to change their startup files.",
	]),
	"code": "dev.ahp-opa.persistence.installer-rc",
	"trigger": concat(" ", [cmd.name, _first_operand(cmd.args)]),
} if {
	some cmd in _rc_installers
	_rewrites_rc(cmd.name, cmd.args)
}

_rc_installers contains cmd if {
	input.ahp.shell.classes.release
	some i in input.ahp.shell.classes.release
	cmd := input.ahp.shell.commands[i]
	_rc_installer[cmd.name]
}

# sh rustup-init.sh: the installer run as a script.
_rc_installers contains cmd if {
	input.ahp.shell.classes.shell
	some i in input.ahp.shell.classes.shell
	cmd := input.ahp.shell.commands[i]
	cmd.name in {"sh", "bash"}
}

_rc_installer := {"conda", "mamba", "micromamba", "pipx", "pnpm", "volta", "rustup-init", "rustup-init.sh", "opam"}

# Programs of the release, deploy and installer rules (the class release
# of input.ahp.shell.classes; engine/tools.go lists the same).
_release_programs := ((_site_deployer | {"aws", "gsutil", "gcloud", "azcopy"}) | _rc_installer) | _image_pusher

_first_operand(a) := x if x := args.operands(a)[0]

_first_operand(a) := "" if count(args.operands(a)) == 0

_rewrites_rc(name, a) if {
	name in {"conda", "mamba", "micromamba"}
	ops := args.operands(a)
	_rc_init_ops(ops)
	not "--dry-run" in a
	not "-d" in a
	not "--reverse" in a
}

_rc_init_ops(ops) if ops[0] == "init"

_rc_init_ops(ops) if array.slice(ops, 0, 2) == ["shell", "init"]

_rewrites_rc("pipx", a) if args.operands(a)[0] == "ensurepath"

_rewrites_rc("pnpm", a) if args.operands(a)[0] == "setup"

_rewrites_rc("volta", a) if args.operands(a)[0] == "setup"

_rewrites_rc(name, a) if {
	name in {"rustup-init", "rustup-init.sh"}
	not "--no-modify-path" in a
	not _rc_help(a)
}

_rewrites_rc(name, a) if {
	name in {"sh", "bash"}
	regex.match(`(^|/)rustup-init(\.sh)?$`, args.operands(a)[0])
	not "--no-modify-path" in a
}

_rewrites_rc("opam", a) if {
	args.operands(a)[0] == "init"
	not "-n" in a
	not "--no-setup" in a
	not "--no-opamrc" in a
}

_rc_help(a) if {
	some o in a
	o in {"--help", "-h", "-V", "--version"}
}
