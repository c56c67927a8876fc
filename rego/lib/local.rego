# METADATA
# title: Local judgement
# description: |
#   Whether a call can reach anything real, as the effect model judged it
#   (input.ahp.effects, docs/policy.md "Effects"): a dry run, a local
#   cluster context, a loopback endpoint or registry, an in-memory or
#   workspace database. Rules that name programs ask here instead of
#   keeping their own lists of local targets, so every rule agrees with
#   the per-CLI data and a team's additions to it.
package ahp.lib.local

# command(i) holds when the effect model found at least one effect of
# command i (-1: the tool call itself) and judged every one of them local
# from what the call names: a rehearsal (--dry-run) or a target that is
# local (a loopback host, a kind context, a workspace file). A judgement
# that only assumes (local.assumed: redis-cli with no -h, rails with no
# RAILS_ENV) does not count, since configuration or the environment may
# point the client at a real server. A command with no effects is not
# judged local: the model did not look at it, so a rule's own judgement
# stands.
command(i) if {
	some e in input.ahp.effects
	e.command == i
	_named_local(e)
	not _reaches[i]
}

_named_local(e) if {
	e.local
	not e.local.assumed
}

# Commands with an effect that is not local, or only assumed to be.
_reaches contains e.command if {
	some e in input.ahp.effects
	not _named_local(e)
}

# why(i) says why command i was judged local, for a reason or a trace.
why(i) := concat("; ", sort({e.local.why |
	some e in input.ahp.effects
	e.command == i
	e.local.why
})) if command(i)
