package ahp.lib.local_test

import data.ahp.lib.local

_effects(es) := {"ahp": {"effects": es}}

_local(i, why) := {"effect": "store.destroy", "command": i, "local": {"why": why}}

_real(i) := {"effect": "store.destroy", "command": i}

test_command_local_when_every_effect_is if {
	local.command(0) with input as _effects([_local(0, "a loopback endpoint"), _real(1)])
	local.why(0) == "a loopback endpoint" with input as _effects([_local(0, "a loopback endpoint")])
}

test_command_not_local_when_one_effect_reaches_out if {
	not local.command(0) with input as _effects([_local(0, "a dry run"), _real(0)])
	not local.command(1) with input as _effects([_local(0, "a dry run"), _real(1)])
}

test_command_assumed_local_is_not_local if {
	assumed := {"effect": "store.destroy", "command": 0, "local": {"why": "the local server", "assumed": true}}
	not local.command(0) with input as _effects([assumed])
	not local.command(0) with input as _effects([_local(0, "a dry run"), assumed])
}

test_command_without_effects_is_not_local if {
	not local.command(2) with input as _effects([_local(0, "a dry run")])
	not local.command(0) with input as {"ahp": {}}
}
