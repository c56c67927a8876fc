package ahp.tool.before.myteam_test

import data.ahp.tool.before.myteam

# Only what the rule reads: the tool family and the command.
shell(command) := {"tool": {"input": {"command": command}}, "ahp": {"tool": {"family": "shell"}}}

test_prod_db_denied if {
	d := myteam.deny with input as shell("psql -h prod-db.internal -c 'select 1'")
	[x.code | some x in d] == ["com.example.myteam.prod_db"]
}

test_staging_db_allowed if {
	count(myteam.deny) == 0 with input as shell("psql -h staging-db.internal -c 'select 1'")
}

test_other_tools_allowed if {
	inp := {"tool": {"input": {"file_path": "notes/prod-db.internal.md"}}, "ahp": {"tool": {"family": "file_write"}}}
	count(myteam.deny) == 0 with input as inp
}
