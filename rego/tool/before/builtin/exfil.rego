package ahp.tool.before.builtin

import data.ahp.lib.args
import data.ahp.lib.config
import data.ahp.lib.shell
import data.ahp.lib.tools
import input.ahp.shell.programs

# METADATA
# title: Uploading files or piped data
# description: |
#   Denies sending local data to another machine: curl with a file or
#   standard input as the body (-d @file, --data-binary @-, -F f=@file,
#   -T file, --json @file), wget --post-file / --body-file, and nc, ncat,
#   socat or telnet fed by a pipe or a redirection. Inline request bodies
#   (-d '{"a":1}'), loopback hosts and exceptions.hosts are allowed.
# custom:
#   severity: high
#   code: dev.ahp-opa.exfil.upload
violation contains {
	"reason": concat(" ", [
		"Blocked uploading a local file or piped data to a remote host; it could leak code or secrets.",
		"Send only inline data you have reviewed, or ask the user to add the host to exceptions.hosts if it is trusted.",
	]),
	"code": "dev.ahp-opa.exfil.upload",
	"trigger": _upload_trigger(cmd),
} if {
	input.ahp.tool.family == "shell"
	some name, ixs in programs
	name in {"curl", "wget", "wget2", "nc", "ncat", "netcat", "nc.traditional", "nc.openbsd", "socat", "telnet", "cryptcat", "pwncat"}
	some k in ixs
	cmd := input.ahp.shell.commands[k]
	cmd.name == name
	_uploads(cmd, k)
	not _all_hosts_trusted(cmd)
}

_curl_data_options := {"-d", "--data", "--data-binary", "--data-ascii", "--data-urlencode", "--json", "-F", "--form", "--form-string"}

_uploads(cmd, _) if {
	cmd.name == "curl"
	some opt in _curl_data_options
	some v in args.option_values(cmd.args, _short(opt), _long(opt))
	regex.match(`^@|^[^=]*=[@<]|^[^@=]+@[^@]`, v)
	not _inline_form(opt, v)
}

_uploads(cmd, _) if {
	cmd.name == "curl"
	count(args.option_values(cmd.args, "-T", "--upload-file")) > 0
}

_uploads(cmd, _) if {
	cmd.name in {"wget", "wget2"}
	some o in args.options(cmd.args)
	regex.match(`^--(post|body)-file`, o)
}

_uploads(cmd, k) if {
	cmd.name in shell.network_tools
	_fed(cmd, k)
	not _listening(cmd)
}

# A form field value "a@b" is an upload only in -F, and only after "=".
_upload_trigger(cmd) := concat(" ", [cmd.name, "upload to", concat(", ", _command_hosts(cmd))]) if {
	count(_command_hosts(cmd)) > 0
} else := concat(" ", [cmd.name, "upload"])

_inline_form(opt, v) if {
	not opt in {"-F", "--form"}
	not startswith(v, "@")
	not regex.match(`^[^=]*=@`, v)
	not opt == "--data-urlencode"
}

_short(opt) := opt if not startswith(opt, "--")

_short(opt) := "" if startswith(opt, "--")

_long(opt) := opt if startswith(opt, "--")

_long(opt) := "" if not startswith(opt, "--")

# Data reaches a network tool through a pipe or an input redirection.
_fed(cmd, k) if {
	some i in cmd.inputs
	input.ahp.shell.commands[i].parent != k
}

_fed(cmd, _) if {
	some r in cmd.redirects
	r.op in {"<", "<<", "<<<", "<>"}
}

_listening(cmd) if args.has_short_flag(cmd.args, "l")

# The hosts a command names: URL hosts, and the first operand of nc-like
# tools. A command with no host it could name is not trusted.
_command_hosts(cmd) := {u.host | some u in cmd.urls} if count(object.get(cmd, "urls", [])) > 0

_command_hosts(cmd) := {lower(h) | h := args.operands(cmd.args)[0]} if {
	count(object.get(cmd, "urls", [])) == 0
	cmd.name in shell.network_tools
}

_command_hosts(cmd) := {lower(h) |
	some h in args.operands(cmd.args)
	not startswith(h, "@")
	regex.match(`^[A-Za-z0-9.-]+(:[0-9]+)?(/.*)?$`, h)
	contains(h, ".")
} if {
	count(object.get(cmd, "urls", [])) == 0
	not cmd.name in shell.network_tools
}

_all_hosts_trusted(cmd) if {
	hosts := _command_hosts(cmd)
	count(hosts) > 0
	every h in hosts {
		_trusted_host(regex.replace(h, `[:/].*$`, ""))
	}
}

_trusted_host(h) if config.local_host(h)

_trusted_host(h) if config.host_excepted(h)

# METADATA
# title: Paste sites, request catchers and tunnels
# description: |
#   Denies contacting hosts made for dropping data or exposing this machine:
#   paste and file-drop sites (pastebin.com, transfer.sh, 0x0.st, …),
#   request catchers (webhook.site, requestbin, interactsh/oast, Burp
#   Collaborator), chat webhooks (discord.com/api/webhooks, Telegram bots)
#   and tunnels (ngrok, trycloudflare, localtunnel, serveo, bore) — from
#   a shell command or a fetch tool — and starting a tunnel (ngrok,
#   cloudflared tunnel, lt, ssh -R).
# custom:
#   severity: high
#   code: dev.ahp-opa.exfil.paste-or-tunnel
violation contains {
	"reason": concat(" ", [
		"Blocked contacting a paste site, request catcher, webhook or tunnel service; these are used to move data off the machine or expose it.",
		"Keep data local; if the service is needed, ask the user to add the host to exceptions.hosts.",
	]),
	"code": "dev.ahp-opa.exfil.paste-or-tunnel",
} if {
	_drop_or_tunnel
}

_drop_url(u) if _drop_host(u.host)

# _drop_host holds for a listed host or a subdomain of one: each suffix of
# the name is looked up in the set, rather than the set scanned.
_drop_host(host) if {
	labels := split(host, ".")
	some i in numbers.range(0, count(labels) - 2)
	concat(".", array.slice(labels, i, count(labels))) in {"pastebin.com", "paste.ee", "pastes.io", "hastebin.com", "hastebin.skyra.pw", "termbin.com", "sprunge.us", "ix.io", "0x0.st", "transfer.sh", "file.io", "tmpfiles.org", "catbox.moe", "litterbox.catbox.moe", "bashupload.com", "temp.sh", "paste.rs", "dpaste.com", "dpaste.org", "rentry.co", "rentry.org", "privatebin.net", "controlc.com", "justpaste.it", "ghostbin.com", "pastebin.pl", "paste.c-net.org", "oshi.at", "filebin.net", "gofile.io", "anonfiles.com", "webhook.site", "requestbin.com", "requestbin.net", "requestcatcher.com", "beeceptor.com", "hookbin.com", "pipedream.net", "m.pipedream.net", "interact.sh", "interactsh.com", "oast.fun", "oast.pro", "oast.live", "oast.site", "oast.online", "oast.me", "burpcollaborator.net", "oastify.com", "canarytokens.com", "dnslog.cn", "ceye.io", "ngrok.io", "ngrok-free.app", "ngrok.app", "ngrok.dev", "ngrok-free.dev", "trycloudflare.com", "loca.lt", "localtunnel.me", "serveo.net", "localhost.run", "lhr.life", "bore.pub", "pinggy.io", "pinggy.link", "telebit.cloud", "localxpose.io", "playit.gg"}
}

_drop_url(u) if {
	u.host in {"discord.com", "discordapp.com", "ptb.discord.com", "canary.discord.com"}
	startswith(u.path, "/api/webhooks")
}

_drop_url(u) if {
	u.host == "api.telegram.org"
	startswith(u.path, "/bot")
}

_host_in(host, domain) if host == domain

_host_in(host, domain) if endswith(host, concat("", [".", domain]))

_drop_or_tunnel if {
	some u in tools.urls
	_drop_url(u)
	not config.host_excepted(u.host)
}

# Bare host names in arguments (curl 0x0.st, nc termbin.com 9999).
_drop_or_tunnel if {
	input.ahp.tool.family == "shell"
	some name, ixs in programs
	name in {"curl", "wget", "nc", "ncat", "netcat", "socat", "telnet", "ssh", "scp", "rsync", "sftp", "http", "https", "xh"}
	some i in ixs
	cmd := input.ahp.shell.commands[i]
	cmd.name == name
	some a in args.operands(cmd.args)
	host := lower(regex.replace(a, `^([^@/]*@)?([^:/]+).*$`, "$2"))
	_drop_host(host)
	not config.host_excepted(host)
}

_drop_or_tunnel if {
	input.ahp.tool.family == "shell"
	some name, ixs in programs
	name in {"ngrok", "lt", "localtunnel", "bore", "zrok", "pinggy", "loophole", "expose", "localxpose", "inlets", "cloudflared", "tailscale", "ssh"}
	some i in ixs
	_tunnel(input.ahp.shell.commands[i].name, input.ahp.shell.commands[i])
}

_tunnel(name, cmd) if {
	name in {"ngrok", "lt", "localtunnel", "bore", "zrok", "pinggy", "loophole", "expose", "localxpose", "inlets"}
	count(cmd.args) > 0
	not args.operands(cmd.args)[0] in {"version", "help", "update", "completion", "config", "diagnose"}
	not cmd.args[0] in {"--version", "-v", "--help", "-h"}
}

_tunnel("cloudflared", cmd) if {
	"tunnel" in cmd.args
}

_tunnel("tailscale", cmd) if {
	"funnel" in cmd.args
}

_tunnel("ssh", cmd) if {
	some o in args.options(cmd.args)
	regex.match(`^-[a-zA-Z]*R`, o)
}

# METADATA
# title: Sending a web page's cookies or storage
# description: |
#   Denies page scripts (a browser tool's evaluate, a Playwright or
#   Puppeteer snippet, node -e code) that read a page's cookies, local
#   or session storage and send anything over the network (fetch,
#   sendBeacon, XMLHttpRequest, WebSocket): they hold the page's login,
#   and the request can carry it to any host. Reading them without a
#   request is allowed.
# custom:
#   severity: high
#   code: dev.ahp-opa.exfil.page-secrets
violation contains {
	"reason": concat(" ", [
		"Blocked a page script that reads the page's cookies or storage and sends a request; the page's session could leave with it.",
		"Inspect the values locally (return them without a request), or ask the user to run this script.",
	]),
	"code": "dev.ahp-opa.exfil.page-secrets",
	"trigger": concat(" ", [cmd.name, "code sending cookies or storage"]),
} if {
	input.ahp.shell.classes.interpreter
	some cmd in input.ahp.shell.commands
	cmd.code.page_secrets
}
