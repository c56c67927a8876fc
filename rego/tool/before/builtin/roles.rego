package ahp.tool.before.builtin

# Tool roles (docs/policy.md, "Tool shapes"): a database tool nobody
# listed, or one that nests its statement ({"params": {"sql": …}}), still
# hands dev.ahp-opa.db.destructive-statement its text.

_db_text contains [-1, s] if {
	input.ahp.tool.family in {"mcp", "other"}
	some outer in ["params", "arguments", "args", "input", "request", "body"]
	some k in ["query", "sql", "statement", "script", "cypher"]
	s := input.tool.input[outer][k]
	is_string(s)
}

_db_text contains [-1, s] if {
	input.ahp.tool.family == "other"
	some k in ["query", "sql", "statement", "cypher"]
	s := input.tool.input[k]
	is_string(s)
	regex.match(`(?i)sql|db|database|query|postgres|mysql|sqlite|mongo|redis|neo4j|supabase|bigquery|snowflake|clickhouse`, input.ahp.tool.name)
}
