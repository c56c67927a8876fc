# METADATA
# title: ahp-opa built-in library
# description: |
#   Each built-in rule adds to `violation` an object with a reason for the
#   agent, a stable code and, where it can tell, the trigger: the program
#   and argument that made it fire. `deny` passes them on as
#   "denied by CODE: TRIGGER. REASON", except the codes the user disabled
#   in data.ahp_opa.config.disabled_rules and calls to MCP tools the user
#   exempted (docs/policy.md). A violation with "approvable": true is
#   passed on as approvable. ahp-opa masks secrets in every reason.
package ahp.tool.before.builtin

import data.ahp.lib.config

deny contains object.union(
	{
		"code": v.code,
		"reason": concat("", ["denied by ", trim_prefix(v.code, "dev.ahp-opa."), ": ", _trigger(v), ". ", v.reason]),
	},
	_approvable(v),
) if {
	some v in violation
	not v.code in config.disabled
	not config.tool_excepted
	not _covered(v)
}

# An effect rule (effects.rego) generalises the rules that name programs:
# where one of those matched the call, disabled or not, it speaks for the
# call and the effect rules stay silent. So the specific reason is the one
# the agent reads, and disabling a specific rule lets its calls through
# as it did before the effect rules existed.
_covered(v) if {
	v.effect
	some w in violation
	not w.effect
}

# A violation that a human may approve (a release, a deploy, a remote
# write) says so; the engine asks where the agent can.
_approvable(v) := {"approvable": true} if v.approvable == true

else := {}

_trigger(v) := t if {
	t := v.trigger
	is_string(t)
	t != ""
} else := _call_trigger

# Without a trigger of its own, a rule names what was called: the
# programs of a shell command (not their arguments, which may hold
# anything), or the tool and the first path or host it names.
_call_trigger := concat(", ", sort(object.keys(input.ahp.shell.programs))) if {
	input.ahp.tool.family == "shell"
	count(object.get(input.ahp.shell, "programs", {})) > 0
} else := concat(" ", [input.ahp.tool.name, input.ahp.tool.paths[0].raw]) if {
	input.ahp.tool.paths[0].raw
} else := concat(" ", [input.ahp.tool.name, input.ahp.tool.urls[0].host]) if {
	input.ahp.tool.urls[0].host
} else := input.ahp.tool.name

# _path_trigger(p) names the shell commands a path object belongs to, as
# "name -options raw" (rm -rf /home/dev), or the tool's name and the path.
# Equal path objects of several commands (d=$(printf ~); rm -rf "$d") name
# them all.
_path_trigger(p) := concat(", ", ts) if {
	input.ahp.tool.family == "shell"
	ts := sort({t |
		some cmd in input.ahp.shell.commands
		some q in object.get(cmd, "paths", [])
		q == p
		t := concat("", [_unwrapped_from(cmd), concat(" ", array.concat(array.concat([cmd.name], [o | some k, o in cmd.args; k < p.arg; startswith(o, "-"); count(o) < 24]), [p.raw]))])
	} | {t |
		some cmd in input.ahp.shell.commands
		some r in object.get(cmd, "redirects", [])
		r.path == p
		t := concat("", [_unwrapped_from(cmd), concat(" ", [cmd.name, r.op, p.raw])])
	})
	count(ts) > 0
} else := concat(" ", [input.ahp.tool.name, p.raw])

# _command_trigger(cmd) is a command's name and its first operands.
_command_trigger(cmd) := concat("", [_unwrapped_from(cmd), concat(" ", array.concat(array.concat(object.get(cmd, "wrappers", []), [cmd.name]), array.slice([a | some a in cmd.args; not startswith(a, "-")], 0, 2)))])

# _arg_trigger(cmd, a, what) quotes the argument a that triggered a rule,
# or, when it is too long to quote (inline code), says what it holds.
_arg_trigger(cmd, a, _) := concat("", [_unwrapped_from(cmd), cmd.name, " ", a]) if count(a) <= 80

_arg_trigger(cmd, a, what) := concat("", [_unwrapped_from(cmd), cmd.name, " ", what]) if count(a) > 80

# _unwrapped_from(cmd) names the command a nested one was found in, for
# the reviewer: "bash -c → rm -rf ~", "find -exec → rm -rf {}", and for
# a followed definition the command that runs it: "npm run release →
# npm publish".
_unwrapped_from(cmd) := concat("", [input.ahp.shell.commands[cmd.parent].resolved.run, " → "]) if {
	cmd.via == "script"
} else := concat("", [input.ahp.shell.commands[cmd.parent].name, object.get(_via_words, cmd.via, ""), " → "]) if {
	cmd.parent >= 0
} else := "written to run later → " if {
	cmd.via == "later"
} else := ""

_via_words := {"shell": " -c", "find-exec": " -exec", "command-substitution": " $(…)", "process-substitution": " <(…)", "eval": "", "trap": "", "alias": "", "powershell": " -c", "runner": "", "cmd": " /c", "later": " writes, to run later,", "api": "'s API call"}
