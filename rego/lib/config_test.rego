package ahp.lib.config_test

import data.ahp.lib.config

test_defaults if {
	config.protected_branches == ["*"]
	count(config.disabled) == 0
	not config.mcp_allowlist_set
	config.protected_branch("anything")
	config.protected_branch("release-pr/1.2")
	config.protected_branch("feature/deep/x")
}

test_settings if {
	cfg := {
		"disabled_rules": ["a.b.c", 7],
		"protected_branches": ["main"],
		"exceptions": {"paths": ["~/.cache/**", "/opt/x/*"], "hosts": ["*.Example.com", "api.test"], "mcp_tools": ["db/*"]},
		"mcp_allowlist": ["github/*"],
	}
	inp := {"ahp": {"workspace": {"home": "/home/dev"}, "tool": {"mcp": {"server": "db", "tool": "query"}}}}
	config.disabled == {"a.b.c"} with data.ahp_opa.config as cfg
	config.protected_branch("main") with data.ahp_opa.config as cfg
	not config.protected_branch("feature") with data.ahp_opa.config as cfg
	config.path_excepted({"path": "/home/dev/.cache/pip/x"}) with data.ahp_opa.config as cfg with input as inp
	not config.path_excepted({"path": "/opt/x/y/z"}) with data.ahp_opa.config as cfg with input as inp
	config.host_excepted("a.example.com") with data.ahp_opa.config as cfg
	config.host_excepted("api.test") with data.ahp_opa.config as cfg
	not config.host_excepted("example.org") with data.ahp_opa.config as cfg
	config.mcp_allowed("github", "x") with data.ahp_opa.config as cfg
	not config.mcp_allowed("slack", "x") with data.ahp_opa.config as cfg
	config.tool_excepted with data.ahp_opa.config as cfg with input as inp
}

test_malformed_config_is_ignored if {
	config.raw == {} with data.ahp_opa.config as "oops"
	config.protected_branches == ["*"] with data.ahp_opa.config as {"protected_branches": "main"}
}

test_local_hosts if {
	config.local_host("localhost")
	config.local_host("127.0.0.2")
	config.local_host("app.localhost")
	not config.local_host("example.com")
}
