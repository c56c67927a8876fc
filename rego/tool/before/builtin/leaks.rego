package ahp.tool.before.builtin

import data.ahp.lib.config
import data.ahp.lib.shell
import data.ahp.lib.tools
import input.ahp.shell.programs

# METADATA
# title: Reading a whole credential directory
# description: |
#   Denies reading a credential directory as a whole or through a glob —
#   ~/.ssh, ~/.aws, ~/.gnupg, ~/.kube, ~/.docker, ~/.azure,
#   ~/.config/gcloud, ~/.config/gh, the agents' own (~/.claude, ~/.codex,
#   ~/.gemini, ~/.copilot), password stores, keyrings, keychains, browser
#   profiles, /etc/ssl/private: every directory of the credential
#   catalogue — by a shell command that reads or copies it (grep -r, rg,
#   cat ~/.aws/*, tar, zip, cp -r) and by search and file tools (Grep,
#   Glob with its path or a ~/.aws/** pattern, MCP search_files); and
#   sweeping a directory above them (a home, ~/.config, /etc, /) with a
#   recursive search or copy (sweep.rego). Listing names (ls, find, du,
#   LS, list_directory) and reading single non-secret files
#   (~/.ssh/config) are allowed.
# custom:
#   severity: high
#   code: dev.ahp-opa.secrets.credential-dir
violation contains {
	"reason": concat(" ", [
		"Blocked reading a whole credential directory (keys, tokens, cloud credentials), or a recursive read or search that sweeps one up; its contents must not reach the agent.",
		"Search the project directory, name the one non-secret file you need (e.g. ~/.ssh/config), or ask the user.",
	]),
	"code": "dev.ahp-opa.secrets.credential-dir",
	"trigger": trigger,
} if {
	input.ahp.sensitive
	some trigger in _credential_dir_reads
}

_credential_dir_reads contains concat(" ", [_reader, p.raw]) if {
	some p in tools.read
	p.credential_dir
	not endswith(p.path, ".pub")
	not _lists_names
	not config.path_excepted(p)
}

# Tools that list the names in one directory, never the contents, by
# their own name or, for an MCP server's tool, by the tool part of it.
_name_listers := {"ls", "list_directory", "list_dir", "list_files", "list_allowed_directories"}

_lists_names if lower(input.ahp.tool.name) in _name_listers

_lists_names if lower(input.ahp.tool.mcp.tool) in _name_listers

_reader := input.ahp.tool.name if input.ahp.tool.family != "shell"

_reader := "a shell command" if input.ahp.tool.family == "shell"

# METADATA
# title: Sending secret environment variables to a host
# description: |
#   Denies curl, wget, httpie and xh sending a secret variable
#   ($GITHUB_TOKEN, ${OPENAI_API_KEY}, $AWS_SECRET_ACCESS_KEY, …) in a
#   header, body, form, user or URL to a host other than the well-known
#   API hosts such tokens are meant for (api.github.com, api.openai.com,
#   *.amazonaws.com, registry.npmjs.org, …), the service the variable is
#   named for ($COVERITY_SCAN_TOKEN to scan.coverity.com, $SONAR_TOKEN to
#   sonarcloud.io), loopback and exceptions.hosts. A request whose host
#   cannot be told is left alone.
# custom:
#   severity: high
#   code: dev.ahp-opa.exfil.env-secret
violation contains {
	"reason": concat(" ", [
		"Blocked sending a secret environment variable to a host that is not the service it belongs to; it would hand the credential to that host.",
		"Send credentials only to their own API, or ask the user to add the host to exceptions.hosts.",
	]),
	"code": "dev.ahp-opa.exfil.env-secret",
	"trigger": concat("", [cmd.name, " $", var, " to ", host]),
} if {
	input.ahp.shell.classes.downloader
	some i in input.ahp.shell.classes.downloader
	cmd := input.ahp.shell.commands[i]
	some a in cmd.args
	some m in regex.find_all_string_submatch_n(`\$\{?([A-Za-z_][A-Za-z0-9_]*)`, a, -1)
	_secret_var(m[1])
	var := m[1]
	some u in cmd.urls
	host := u.host
	not _credential_home(host)
	not _named_for(var, host)
	not config.local_host(host)
	not config.host_excepted(host)
}

# _named_for holds when a word of the variable's name is the name of the
# host's domain (the label before the top-level domain): COVERITY_SCAN_TOKEN
# and scan.coverity.com. A host that merely contains the word
# (github.example.net) does not count.
_named_for(var, host) if {
	labels := split(host, ".")
	count(labels) >= 2
	domain := labels[count(labels) - 2]
	some word in split(lower(var), "_")
	count(word) >= 4
	not word in {"token", "secret", "access", "auth", "password", "pass", "private", "api", "key", "keys", "scan", "bearer", "client", "user", "deploy", "upload", "publish", "release", "personal"}
	startswith(domain, word)
}

# Hosts that take API tokens in the ordinary course of things.
_credential_home(host) if host in {
	"api.github.com", "github.com", "uploads.github.com", "api.openai.com", "api.anthropic.com",
	"registry.npmjs.org", "npm.pkg.github.com", "upload.pypi.org", "test.pypi.org", "pypi.org",
	"gitlab.com", "api.bitbucket.org", "api.stripe.com", "slack.com", "api.slack.com",
	"hooks.slack.com", "sentry.io", "api.cloudflare.com", "api.vercel.com", "api.netlify.com",
	"hub.docker.com", "ghcr.io", "api.heroku.com", "api.digitalocean.com", "api.linear.app",
	"generativelanguage.googleapis.com", "api.mistral.ai", "api.groq.com", "huggingface.co",
	"api.fly.io", "crates.io", "rubygems.org", "api.nuget.org", "codecov.io", "api.codecov.io",
}

_credential_home(host) if {
	some suffix in {".github.com", ".githubusercontent.com", ".amazonaws.com", ".googleapis.com", ".azure.com", ".openai.azure.com", ".atlassian.net", ".gitlab.com"}
	endswith(host, suffix)
}

# METADATA
# title: Credentials inside a URL
# description: |
#   Denies opening a URL that carries a credential: a live token (AWS
#   access key, GitHub, GitLab, Slack, Stripe, OpenAI, Anthropic, Google or
#   npm token) anywhere in it, or a password written in its user info
#   (https://user:password@host), through fetch tools (WebFetch, web_fetch
#   prompts) and downloaders. ahp-opa marks such URLs
#   (input.ahp.tool.urls[_].credential) without repeating the secret.
#   Loopback and exceptions.hosts are allowed.
# custom:
#   severity: high
#   code: dev.ahp-opa.exfil.secret-in-url
violation contains {
	"reason": concat(" ", [
		"Blocked opening a URL that carries a credential; the host, its logs and any proxy would receive it.",
		"Leave credentials out of URLs; the tool that needs one should read it from its own configuration.",
	]),
	"code": "dev.ahp-opa.exfil.secret-in-url",
	"trigger": concat("", ["a URL to ", u.host, " with a ", u.credential]),
} if {
	some u in _credential_urls
	not config.local_host(u.host)
	not config.host_excepted(u.host)
}

_credential_urls contains u if {
	some u in input.ahp.tool.urls
	u.credential
}

_credential_urls contains u if {
	input.ahp.shell.classes.downloader
	some i in input.ahp.shell.classes.downloader
	some u in input.ahp.shell.commands[i].urls
	u.credential
}
