# METADATA
# title: Library configuration
# description: |
#   Reads the user's settings for the built-in library from the data
#   document data.ahp_opa.config (a data.json next to a user policy, or the
#   `library` section of the ahp-opa configuration file) and applies the
#   defaults. Every key is optional:
#
#     disabled_rules:     codes of built-in rules that must not deny
#     exceptions.paths:   globs of paths no path rule applies to (~/ allowed)
#     exceptions.hosts:   hosts no network rule applies to (*.example.com)
#     exceptions.mcp_tools: "server/tool" globs exempt from every rule
#     protected_branches: branch globs force pushes may not touch (["*"]);
#                         when set, also those plain pushes may not update
#                         (otherwise main, master, release/* and the like)
#     protected_paths:    extra path globs an agent may not write (its
#                         policy directory, say)
#     mcp_allowlist:      "server/tool" globs; once set, other MCP tools
#                         are denied
#     guard_paths:        files the guard runs with, which an agent may not
#                         change or remove (ahp-opa fills in its --config
#                         file and --policy paths)
#     secret_printers:    more commands that print secrets, by program
#                         (rows as in secret_commands.rego)
#     allow_interactive_sessions: true lets a tool start a shell or an
#                         interpreter with no script whose later input no
#                         hook sees (Codex exec_command + write_stdin)
#     disabled_effects:   effects (publish, store.destroy, …) no effect
#                         rule denies
#     effects:            rows that extend the effects table, in its shape
#                         (programs, verbs, quiet, tools); the engine
#                         compiles them into input.ahp.effects
package ahp.lib.config

default raw := {}

raw := c if {
	c := data.ahp_opa.config
	is_object(c)
}

# disabled holds the codes of built-in rules switched off.
disabled contains code if {
	some code in raw.disabled_rules
	is_string(code)
}

# disabled_effects holds the effects the user switched off for every
# effect rule (rules in effects.rego).
disabled_effects contains e if {
	some e in raw.disabled_effects
	is_string(e)
}

# team_effects is the user's extension of the effects table. The engine
# reads it from the data document when it compiles the policy; it is
# named here so the library configuration knows the key.
default team_effects := {}

team_effects := raw.effects if is_object(raw.effects)

default protected_branches := ["*"]

protected_branches := [b | some b in raw.protected_branches; is_string(b)] if is_array(raw.protected_branches)

# protected_branch holds for a branch name force pushes may not rewrite.
protected_branch(name) if {
	some pattern in protected_branches
	_branch_match(pattern, name)
}

# A lone * is every branch, as the default promises: as a glob with / as
# the separator it would leave release-pr/1.2 and feature/x unprotected.
# Other patterns keep their glob meaning (release/* is one level).
_branch_match("*", _)

_branch_match(pattern, name) if glob.match(pattern, ["/"], name)

# Branches a plain push (without force) may not update when the user has
# not listed protected_branches: a push to a feature branch is everyday
# work, a push to these releases or deploys.
default_push_protected := ["main", "master", "trunk", "develop", "production", "prod", "stable", "gh-pages", "release", "release/*", "releases/*"]

push_protected_branches := protected_branches if is_array(object.get(raw, "protected_branches", null))

push_protected_branches := default_push_protected if not is_array(object.get(raw, "protected_branches", null))

# push_protected_branch holds for a branch a plain push may not update.
push_protected_branch(name) if {
	some pattern in push_protected_branches
	_branch_match(pattern, name)
}

exception_paths contains _expand(p) if {
	some p in raw.exceptions.paths
	is_string(p)
}

protected_paths contains _expand(p) if {
	some p in raw.protected_paths
	is_string(p)
}

exception_hosts contains lower(h) if {
	some h in raw.exceptions.hosts
	is_string(h)
}

exception_mcp_tools contains t if {
	some t in raw.exceptions.mcp_tools
	is_string(t)
}

# ~/ in a path glob stands for the user's home.
_expand(p) := concat("", [home, substring(p, 1, -1)]) if {
	startswith(p, "~/")
	home := input.ahp.workspace.home
	home != ""
} else := p

# path_excepted holds for a path object (see docs/policy.md) that the user
# exempted from the path rules.
path_excepted(p) if {
	some pattern in exception_paths
	glob.match(pattern, ["/"], p.path)
}

# path_protected holds for a path the user asked to protect from writes.
path_protected(p) if {
	some pattern in protected_paths
	glob.match(pattern, ["/"], p.path)
}

# host_excepted holds for a host the user trusts: an exact entry, or a
# *.domain entry covering it.
host_excepted(host) if host in exception_hosts

host_excepted(host) if {
	some pattern in exception_hosts
	startswith(pattern, "*.")
	endswith(host, substring(pattern, 1, -1))
}

# local_host holds for loopback hosts, which never leave the machine.
local_host(host) if host in {"localhost", "127.0.0.1", "::1", "[::1]", "0.0.0.0"}

local_host(host) if endswith(host, ".localhost")

local_host(host) if startswith(host, "127.")

# mcp_allowlist_set holds once the user set an MCP allowlist.
mcp_allowlist_set if is_array(raw.mcp_allowlist)

mcp_allowed(server, tool) if {
	some pattern in raw.mcp_allowlist
	is_string(pattern)
	glob.match(pattern, [], concat("/", [server, tool]))
}

# tool_excepted holds for an MCP tool the user exempted from every rule.
tool_excepted if {
	mcp := input.ahp.tool.mcp
	some pattern in exception_mcp_tools
	glob.match(pattern, [], concat("/", [mcp.server, mcp.tool]))
}

# guard_paths are the files the guard runs with (its configuration and
# policy; globs, ~/ for the home). A policy path may be a directory.
guard_paths contains _expand(p) if {
	some p in raw.guard_paths
	is_string(p)
}

# guard_path holds for a path object that is one of guard_paths or lies
# below one.
guard_path(p) if {
	some g in guard_paths
	glob.match(g, ["/"], p.path)
}

guard_path(p) if {
	some g in guard_paths
	startswith(p.path, concat("", [trim_suffix(g, "/"), "/"]))
}

# secret_printers are the rows a team added to the table of commands
# that print secrets, by program.
secret_printers := raw.secret_printers if is_object(raw.secret_printers)

default secret_printers := {}

# interactive_sessions_allowed holds when the team lets tools start
# shells and interpreters whose later input no hook sees.
interactive_sessions_allowed if raw.allow_interactive_sessions == true
