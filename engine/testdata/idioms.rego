# A policy that reaches input.ahp through every idiom the analysis of what
# a policy reads resolves (enrich.Needed), each rule denying on what it
# reads, so that a part cut wrongly changes a decision.
package ahp.tool.before.idioms

# A local variable holding input.ahp.
deny contains "local: rm" if {
	a := input.ahp
	a.shell.programs.rm
}

# object.get with a constant path into input.ahp, then iteration.
deny contains sprintf("object.get: writes %s", [p.path]) if {
	input.ahp.writes
	tool := object.get(input, ["ahp", "tool"], {})
	some p in tool.paths
}

# object.get with a string key on input.ahp.
deny contains "object.get: secret" if count(object.get(input.ahp, "secrets", [])) > 0

# A helper function called with input whole.
deny contains "helper: sensitive" if _sensitive(input)

_sensitive(i) if i.ahp.sensitive

# A helper that passes input.ahp further down.
deny contains "helper: outside" if _outside(input)

_outside(i) := _any_outside(i.ahp)

_any_outside(a) if {
	some p in a.tool.paths
	p.outside_workspace
}

# walk over a sub-tree.
deny contains "walk: curl" if {
	walk(input.ahp.shell, [_, v])
	v == "curl"
}

# Constant keys in brackets.
deny contains "brackets: codex" if input["ahp"]["agent"] == "codex"

# The raw event through object.get: needs no part.
deny contains "raw: no roots" if {
	roots := object.get(input, ["session", "workspaceRoots"], [])
	count(roots) == 0
	input.tool.name == "Write"
}
