package ahp.tool.before.builtin

import data.ahp.lib.args
import data.ahp.lib.config
import data.ahp.lib.shell
import data.ahp.lib.tools
import input.ahp.shell.programs

# METADATA
# title: Code set to run later at install, build or git time
# description: |
#   Denies acts that leave code for a tool to run later, when nobody
#   looks: an npm lifecycle script set through npm pkg set (preinstall,
#   install, postinstall, prepare, prepack …); git configuration whose
#   value is a command git runs (an alias starting with !, core.fsmonitor,
#   core.sshCommand, a filter or diff driver); an AWS credential_process;
#   an SSH ProxyCommand or LocalCommand that starts a shell, interpreter or
#   download; and a Python .pth or sitecustomize file that imports code,
#   which runs at every interpreter start. The same settings written with
#   a file tool count too (written.rego): a package.json lifecycle script
#   that downloads or runs inline code, a git config alias or driver, an
#   SSH ProxyCommand, an editor task that runs on folder open.
# custom:
#   severity: high
#   code: dev.ahp-opa.persistence.build-hook
violation contains {
	"reason": concat(" ", [
		"Blocked setting code to run later (an install or build hook, a git or AWS setting that runs a command, a Python start-up file); it would run unseen the next time the tool is used.",
		"Put the command in a reviewed file of the project, or ask the user to make this change.",
	]),
	"code": "dev.ahp-opa.persistence.build-hook",
	"trigger": trigger,
} if {
	some trigger in _build_hooks
}

# npm lifecycle scripts: npm runs them on install, pack or publish.
_npm_lifecycle := {
	"preinstall", "install", "postinstall", "prepare", "preprepare", "postprepare",
	"prepublish", "prepublishOnly", "prepack", "postpack", "preuninstall", "uninstall", "postuninstall",
	"dependencies", "preversion", "version", "postversion",
}

_build_hooks contains concat("", [_unwrapped_from(cmd), "npm pkg set ", a]) if {
	some i in programs.npm
	cmd := input.ahp.shell.commands[i]
	cmd.args[0] == "pkg"
	cmd.args[1] == "set"
	some a in array.slice(cmd.args, 2, count(cmd.args))
	key := split(a, "=")[0]
	startswith(key, "scripts.")
	substring(key, 8, -1) in _npm_lifecycle
}

_build_hooks contains concat("", [_unwrapped_from(cmd), "npm set-script ", cmd.args[1]]) if {
	some i in programs.npm
	cmd := input.ahp.shell.commands[i]
	cmd.args[0] == "set-script"
	cmd.args[1] in _npm_lifecycle
}

# git settings whose value git runs as a command.
_git_command_key(k) if regex.match(`^(alias\.[^.]+|core\.(fsmonitor|sshcommand)|(filter|diff|merge)\..+\.(clean|smudge|process|textconv|command|driver)|gpg\.program|credential\.helper)$`, lower(k))

_build_hooks contains concat("", [_unwrapped_from(cmd), "git config ", key]) if {
	some i in programs.git
	cmd := input.ahp.shell.commands[i]
	some j, a in cmd.args
	a == "config"
	ops := [x | some k, x in cmd.args; k > j; not startswith(x, "-")]
	count(ops) >= 2
	key := ops[0]
	_git_command_key(key)
	_git_runs_code(key, ops[1])
}

# -c key=value before the subcommand applies to that one call, and runs
# its command then: the same judgement.
_build_hooks contains concat("", [_unwrapped_from(cmd), "git -c ", key]) if {
	some i in programs.git
	cmd := input.ahp.shell.commands[i]
	some j, a in cmd.args
	a == "-c"
	kv := cmd.args[j + 1]
	key := split(kv, "=")[0]
	_git_command_key(key)
	_git_runs_code(key, substring(kv, count(key) + 1, -1))
}

# An alias runs a command only when it starts with !; the other keys
# always name a program. An empty value or the common helpers do not.
_git_runs_code(key, v) if {
	startswith(lower(key), "alias.")
	startswith(trim_space(v), "!")
}

_git_runs_code(key, v) if {
	not startswith(lower(key), "alias.")
	v != ""
	not _git_benign_helper(lower(key), v)
}

_git_benign_helper("credential.helper", v) if v in {"store", "cache", "osxkeychain", "manager", "manager-core", "libsecret", "wincred"}

_git_benign_helper("credential.helper", v) if startswith(v, "cache --timeout")

_git_benign_helper("core.fsmonitor", v) if lower(v) in {"true", "false"}

_build_hooks contains concat("", [_unwrapped_from(cmd), "aws configure set ", cmd.args[2]]) if {
	some i in programs.aws
	cmd := input.ahp.shell.commands[i]
	cmd.args[0] == "configure"
	cmd.args[1] == "set"
	endswith(cmd.args[2], "credential_process")
}

# ssh -o ProxyCommand=… runs its value through a shell.
_build_hooks contains concat("", [_unwrapped_from(cmd), "ssh -o ", o]) if {
	some name, ixs in programs
	name in {"ssh", "scp", "sftp"}
	some i in ixs
	cmd := input.ahp.shell.commands[i]
	some o in args.option_values(cmd.args, "-o", "")
	parts := regex.split(`\s*=\s*|\s+`, trim_space(o))
	lower(parts[0]) in {"proxycommand", "localcommand"}
	regex.match(`(^|[\s;|&/(=])(sh|bash|zsh|dash|python[0-9.]*|perl|ruby|node|nc|ncat|socat|curl|wget|base64)(\s|$|['";|&)])`, o)
}

# Python runs the import lines of .pth files in site-packages, and
# sitecustomize/usercustomize, at every start.
_build_hooks contains _path_trigger(p) if {
	input.ahp.writes
	some p in tools.written
	_python_startup_file(p.base)
	not config.path_excepted(p)
}

_python_startup_file(base) if endswith(base, ".pth")

_python_startup_file(base) if base in {"sitecustomize.py", "usercustomize.py"}

# METADATA
# title: Package from a source that is not a registry over HTTPS
# description: |
#   Denies installing or running packages from an index given over plain
#   HTTP or by IP address (pip --index-url http://…, npm --registry
#   http://10.…, npm/pip config set of such a registry), and running code
#   fetched by name straight from a repository or URL: go run
#   module@latest (a pinned release is allowed), pip install git+https://…, uvx/pipx run --from a URL,
#   cargo install --git, npx -y of a package the project's package.json
#   does not declare, git config url.BASE.insteadOf sending a forge's
#   fetches to another host. A human should approve it. Loopback registries
#   (localhost, 127.0.0.1, a local Verdaccio) are allowed.
# custom:
#   severity: medium
#   code: dev.ahp-opa.supply.untrusted-source
violation contains {
	"reason": concat(" ", [
		"Blocked installing or running a package from a source that is not the project's registry over HTTPS (plain HTTP, an IP address, a repository URL, or a package the project does not declare).",
		"Add the dependency to the project's manifest from its registry, or ask the user to approve this source.",
	]),
	"code": "dev.ahp-opa.supply.untrusted-source",
	"trigger": trigger,
} if {
	some trigger in _untrusted_sources
}

_installers := {"pip", "pip3", "uv", "poetry", "pipenv", "pdm", "npm", "pnpm", "yarn", "bun", "gem", "bundle", "cargo", "uvx", "pipx", "npx", "composer", "dotnet", "nuget"}

_index_options := {
	"--index-url", "-i", "--extra-index-url", "--index", "--default-index", "--registry", "--source",
	"--trusted-host", "--find-links", "-f", "--clear-sources", "--add-source", "--pypi-mirror",
}

_untrusted_sources contains concat("", [_unwrapped_from(cmd), cmd.name, " ", o, " ", v]) if {
	some name, ixs in programs
	name in _installers
	some i in ixs
	cmd := input.ahp.shell.commands[i]
	some o in _index_options
	some v in args.option_values(cmd.args, o, "")
	_insecure_source(o, v)
}

_untrusted_sources contains concat("", [_unwrapped_from(cmd), cmd.name, " ", o, "=", v]) if {
	some name, ixs in programs
	name in _installers
	some i in ixs
	cmd := input.ahp.shell.commands[i]
	some a in cmd.args
	startswith(a, "--")
	o := split(a, "=")[0]
	o in _index_options
	v := substring(a, count(o) + 1, -1)
	_insecure_source(o, v)
}

# poetry source add NAME URL, uv/pdm/hatch index settings named by URL.
_untrusted_sources contains concat("", [_unwrapped_from(cmd), "poetry source add ", v]) if {
	some i in programs.poetry
	cmd := input.ahp.shell.commands[i]
	ops := args.operands(cmd.args)
	array.slice(ops, 0, 2) == ["source", "add"]
	some v in array.slice(ops, 2, count(ops))
	_insecure_source("--index-url", v)
}

# npm config set registry http://…, pip config set global.index-url …
_untrusted_sources contains concat("", [_unwrapped_from(cmd), cmd.name, " config set ", key]) if {
	some name, ixs in programs
	name in {"npm", "pnpm", "yarn", "pip", "pip3"}
	some i in ixs
	cmd := input.ahp.shell.commands[i]
	cmd.args[0] == "config"
	cmd.args[1] == "set"
	kv := array.slice(cmd.args, 2, count(cmd.args))
	key := split(kv[0], "=")[0]
	regex.match(`(^|[.:@])(registry|index-url|extra-index-url|trusted-host)$`, key)
	v := _config_value(kv)
	_insecure_source("--index-url", v)
}

_config_value(kv) := substring(kv[0], count(split(kv[0], "=")[0]) + 1, -1) if contains(kv[0], "=")

_config_value(kv) := kv[1] if {
	not contains(kv[0], "=")
	count(kv) > 1
}

# --trusted-host turns certificate checks off for that host: any
# non-loopback value.
_insecure_source("--trusted-host", v) if not _loopback_url(concat("", ["http://", v]))

_insecure_source(o, v) if {
	o != "--trusted-host"
	startswith(lower(v), "http://")
	not _loopback_url(v)
}

_insecure_source(o, v) if {
	o != "--trusted-host"
	regex.match(`^[a-z+]*://(\[[0-9a-fA-F:]+\]|[0-9]{1,3}(\.[0-9]{1,3}){3})([:/]|$)`, lower(v))
	not _loopback_url(v)
}

_loopback_url(v) if regex.match(`^[a-z+]*://([^@/]*@)?(localhost|127\.[0-9.]+|\[::1\]|0\.0\.0\.0|host\.docker\.internal|[a-z0-9-]+\.localhost)([:/]|$)`, lower(v))

# git config url.BASE.insteadOf ORIGINAL sends every fetch of ORIGINAL to
# BASE: code from the forge then comes from another host. A base on the
# same forges (a token or SSH form of github.com) is how CI authenticates.
_untrusted_sources contains concat("", [_unwrapped_from(cmd), "git config ", k]) if {
	some i in programs.git
	cmd := input.ahp.shell.commands[i]
	ops := args.operands(cmd.args)
	ops[0] == "config"
	some k in ops
	regex.match(`(?i)^url\..+\.(push)?insteadof$`, k)
	base := regex.replace(k, `(?i)^url\.(.+)\.(push)?insteadof$`, "$1")
	not _known_forge(base)
}

_known_forge(base) if {
	host := lower(regex.replace(base, `^([a-z+]+://)?([^@/]*@)?([^/:]+).*$`, "$3"))
	some f in {"github.com", "gitlab.com", "bitbucket.org", "codeberg.org", "ssh.dev.azure.com", "dev.azure.com", "git.sr.ht"}
	_host_in(host, f)
}

_known_forge(base) if _loopback_url(base)

# go run module@latest (or a branch) fetches and runs whatever the
# module's newest code is; a pinned release (@v1.2.3), checked against
# the checksum database, is what projects use for their tools.
_untrusted_sources contains concat("", [_unwrapped_from(cmd), "go run ", m]) if {
	some i in programs.go
	cmd := input.ahp.shell.commands[i]
	shell.agent_text(cmd)
	cmd.args[0] == "run"
	some m in array.slice(cmd.args, 1, count(cmd.args))
	not startswith(m, "-")
	regex.match(`^[a-z0-9.-]+\.[a-z]{2,}/[^@\s]+@[^\s]+$`, lower(m))
	not regex.match(`@v[0-9]+\.[0-9]+\.[0-9]+([-+][0-9a-z.-]+)?$`, lower(m))
}

# pip/uv/pipx install of a repository or archive URL.
_untrusted_sources contains concat("", [_unwrapped_from(cmd), cmd.name, " ", a]) if {
	some name, ixs in programs
	name in {"pip", "pip3", "uv", "pipx", "uvx", "poetry", "pdm", "pipenv"}
	some i in ixs
	cmd := input.ahp.shell.commands[i]
	shell.agent_text(cmd)
	some a in cmd.args
	_vcs_or_url_package(a)
}

# uvx --from URL, pipx run --spec URL.
_vcs_or_url_package(a) if regex.match(`^(git\+|hg\+|svn\+|bzr\+)[a-z]+://`, lower(a))

_vcs_or_url_package(a) if regex.match(`^[a-z0-9_.-]+\s*@\s*(git\+)?https?://`, lower(a))

_vcs_or_url_package(a) if regex.match(`^https?://.*\.(whl|tar\.gz|zip|tgz)(#.*)?$`, lower(a))

_untrusted_sources contains concat("", [_unwrapped_from(cmd), "cargo install --git ", v]) if {
	some i in programs.cargo
	cmd := input.ahp.shell.commands[i]
	shell.agent_text(cmd)
	cmd.args[0] == "install"
	v := args.option_value(cmd.args, "", "--git")
}

# npx -y of a package the project does not declare: the name may be a
# typo or a look-alike, and -y skips the question npx would ask.
_untrusted_sources contains concat("", [_unwrapped_from(cmd), cmd.name, " -y ", cmd.package.name]) if {
	some name, ixs in programs
	name in {"npx", "pnpx", "pnpm", "yarn", "bunx", "bun"}
	some i in ixs
	cmd := input.ahp.shell.commands[i]
	shell.agent_text(cmd)
	cmd.package.manifest
	not cmd.package.declared
	_runs_without_asking(cmd)
}

_runs_without_asking(cmd) if {
	cmd.name in {"npx", "pnpx"}
	some a in cmd.args
	a in {"-y", "--yes"}
}

_runs_without_asking(cmd) if cmd.name in {"pnpm", "yarn", "bunx", "bun"}

# METADATA
# title: Inline code that calls a function looked up by a computed name
# description: |
#   Denies interpreter code (python -c, node -e, a heredoc) that reaches a
#   module or function by a name built at run time: getattr(os, name),
#   __import__(x), globals()[x], require(x) of a variable. No reading of
#   the code can tell what it calls. Lookups by literal names, even split
#   ('sys'+'tem'), are folded into the plain call and judged as such.
# custom:
#   severity: high
#   code: dev.ahp-opa.exec.dynamic-lookup
violation contains {
	"reason": concat(" ", [
		"Blocked inline code that calls a function looked up by a name computed at run time, so what it runs cannot be checked.",
		"Call the function by its name in a script file the user can review.",
	]),
	"code": "dev.ahp-opa.exec.dynamic-lookup",
	"trigger": concat("", [_unwrapped_from(cmd), cmd.name, " ", cmd.code.source, " (dynamic lookup)"]),
} if {
	input.ahp.shell.classes.interpreter
	some i in input.ahp.shell.classes.interpreter
	cmd := input.ahp.shell.commands[i]
	cmd.code.dynamic_lookup
	shell.agent_text(cmd)
}
