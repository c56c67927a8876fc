package ahp.tool.before.builtin

import data.ahp.lib.config

# METADATA
# title: Sending a live secret out
# description: |
#   Denies a call whose outbound text holds a live token or private key
#   (the shapes ahp-opa's secret scan knows: AWS, GitHub, GitLab, Slack,
#   Stripe, OpenAI, Anthropic, Google, npm…): the query of a web search
#   (Claude's WebSearch, Gemini's google_web_search, Codex's web_search,
#   Windsurf's search_web), the prompt, body or headers of a fetch, the
#   body or headers of an MCP request tool, and the arguments of curl,
#   wget, httpie or nc. A shell request to the API the tokens are made
#   for (api.github.com, registry.npmjs.org, *.amazonaws.com, …), to
#   loopback or to exceptions.hosts is allowed; URLs that carry a token
#   are dev.ahp-opa.exfil.secret-in-url. Documented stand-ins (…EXAMPLE,
#   ghp_xxxx) are not live.
# custom:
#   severity: high
#   code: dev.ahp-opa.exfil.secret-outbound
violation contains {
	"reason": concat(" ", [
		"Blocked sending a live secret (an access token or a private key) out of the machine in a search query, prompt, request body or header; whoever receives it can use it.",
		"Leave the secret out of the text; if a request needs it, let the tool read it from its own configuration, or ask the user.",
	]),
	"code": "dev.ahp-opa.exfil.secret-outbound",
	"trigger": trigger,
} if {
	input.ahp.secrets
	some f in input.ahp.secrets
	f.outbound
	not f.placeholder
	trigger := _outbound_trigger(f)
}

_outbound_trigger(f) := concat("", ["a live ", f.kind, " in ", input.ahp.tool.name, " ", f.field]) if {
	not f.field in {"url", "Url", "uri"}
}

_outbound_trigger(f) := concat("", ["a live ", f.kind, " sent by ", cmd.name]) if {
	cmd := input.ahp.shell.commands[f.command]
	not _sent_to_its_api(cmd)
}

# Every host the command contacts takes such tokens, or stays local.
_sent_to_its_api(cmd) if {
	count(cmd.urls) > 0
	every u in cmd.urls {
		_token_host(u.host)
	}
}

_token_host(host) if _credential_home(host)

_token_host(host) if config.local_host(host)

_token_host(host) if config.host_excepted(host)
