package ahp.tool.before.builtin_test

# Tool roles: nested and unlisted database tools.

test_nested_db_statement_denied if {
	denies(mcp("postgres", "execute", {"params": {"sql": "DROP TABLE users"}}), "dev.ahp-opa.db.destructive-statement")
	denies(mcp("db", "run", {"arguments": {"query": "TRUNCATE orders"}}), "dev.ahp-opa.db.destructive-statement")
	denies(tool("run_sql_query", {"sql": "DELETE FROM accounts"}), "dev.ahp-opa.db.destructive-statement")
}

test_nested_db_statement_lookalikes_allowed if {
	allowed(mcp("postgres", "execute", {"params": {"sql": "SELECT count(*) FROM users"}}))
	allowed(tool("run_sql_query", {"sql": "DELETE FROM sessions WHERE expires_at < now()"}))
	allowed(tool("search_docs", {"query": "drop table if exists syntax"}))
}
