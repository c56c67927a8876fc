package ahp.tool.before.builtin

import data.ahp.lib.args
import data.ahp.lib.local
import input.ahp.shell.programs

# METADATA
# title: Destroying database contents
# description: |
#   Denies statements that destroy data, sent through a database client
#   (psql, mysql, sqlite3, duckdb, sqlcmd, clickhouse, cqlsh, mongosh,
#   redis-cli, …) as arguments, here-documents or echoed text, or through an
#   MCP tool's query: DROP DATABASE/SCHEMA/TABLE/…, TRUNCATE, DELETE
#   without WHERE, FLUSHALL/FLUSHDB, dropDatabase(); and the commands that
#   do the same (dropdb, mysqladmin drop, rails db:drop/db:reset,
#   prisma migrate reset, manage.py flush).
# custom:
#   severity: critical
#   code: dev.ahp-opa.db.destructive-statement
violation contains {
	"reason": concat(" ", [
		"Blocked a statement that destroys database contents (DROP, TRUNCATE, DELETE without WHERE, FLUSHALL).",
		"Use a reversible change (a migration, DELETE … WHERE on the exact rows, a backup first) and ask the user before destroying data.",
	]),
	"code": "dev.ahp-opa.db.destructive-statement",
} if {
	_destroys_data
}

_db_clients := {
	"psql", "mysql", "mariadb", "sqlite3", "sqlite", "duckdb", "sqlcmd",
	"clickhouse", "clickhouse-client", "cqlsh", "mongosh", "mongo",
	"redis-cli", "valkey-cli", "keydb-cli", "cockroach", "snowsql", "bq",
	"usql", "pgcli", "mycli", "litecli", "trino", "presto", "beeline",
	"spanner-cli", "influx",
}

# SQL and database commands the client is given.
_db_text contains [i, concat(" ", cmd.args)] if {
	input.ahp.shell.classes.db_client
	some i in input.ahp.shell.classes.db_client
	cmd := input.ahp.shell.commands[i]
	cmd.name in _db_clients
}

# docker exec db psql -c …, kubectl exec pod -- mysql -e …, ssh host psql …
_db_text contains [i, concat(" ", cmd.args)] if {
	input.ahp.tool.family == "shell"
	some name, ixs in programs
	name in {"docker", "podman", "kubectl", "oc", "k", "ssh", "nerdctl", "flyctl", "fly", "heroku"}
	some i in ixs
	cmd := input.ahp.shell.commands[i]
	cmd.name == name
	some a in cmd.args
	a in _db_clients
}

_db_text contains [i, r.body] if {
	input.ahp.shell.classes.db_client
	some i in input.ahp.shell.classes.db_client
	cmd := input.ahp.shell.commands[i]
	cmd.name in _db_clients
	some r in cmd.redirects
	r.body
}

_db_text contains [j, concat(" ", src.args)] if {
	input.ahp.shell.classes.db_client
	some j in input.ahp.shell.classes.db_client
	cmd := input.ahp.shell.commands[j]
	cmd.name in _db_clients
	some i in cmd.inputs
	src := input.ahp.shell.commands[i]
	src.name in {"echo", "printf"}
}

_db_text contains [-1, s] if {
	input.ahp.tool.family == "mcp"
	some k in ["query", "sql", "statement", "command", "script"]
	s := input.tool.input[k]
	is_string(s)
}

_destroys_data if {
	some [i, text] in _db_text
	not local.command(i)
	some stmt in split(text, ";")
	_destructive(stmt)
}

_destructive(stmt) if regex.match(`(?is)(^|[\s'"(])drop\s+(database|schema|table|view|materialized\s+view|index|user|role|keyspace|collection)\b`, stmt)

_destructive(stmt) if regex.match(`(?is)(^|[\s'"(])truncate\s+(table\s+)?[\w."]+`, stmt)

_destructive(stmt) if {
	regex.match(`(?is)(^|[\s'"(])delete\s+from\s+[\w."]+`, stmt)
	not regex.match(`(?is)\bwhere\b`, stmt)
}

_destructive(stmt) if regex.match(`(?i)(^|[\s'"])(flushall|flushdb)\b`, stmt)

_destructive(stmt) if regex.match(`(?i)dropDatabase\s*\(|\.drop\s*\(\s*\)|deleteMany\s*\(\s*\{\s*\}\s*\)|\.remove\s*\(\s*\{\s*\}\s*\)`, stmt)

_destroys_data if {
	input.ahp.tool.family == "shell"
	some name, ixs in programs
	name in {"dropdb", "dropuser"}
	some i in ixs
	cmd := input.ahp.shell.commands[i]
	not local.command(i)
	count(args.operands(cmd.args)) > 0
}

_destroys_data if {
	programs.mysqladmin
	some i in programs.mysqladmin
	cmd := input.ahp.shell.commands[i]
	not local.command(i)
	cmd.name == "mysqladmin"
	some a in cmd.args
	lower(a) in {"drop", "flush-tables"}
}

_destroys_data if {
	input.ahp.tool.family == "shell"
	some name, ixs in programs
	name in {"rails", "rake", "bundle"}
	some i in ixs
	cmd := input.ahp.shell.commands[i]
	not local.command(i)
	some a in cmd.args
	a in {"db:drop", "db:reset", "db:purge", "db:schema:load", "db:truncate_all", "db:drop:all"}
}

_destroys_data if {
	input.ahp.tool.family == "shell"
	some name, ixs in programs
	name in {"prisma", "npx", "pnpm", "yarn", "bunx"}
	some k in ixs
	cmd := input.ahp.shell.commands[k]
	not local.command(k)
	cmd.name == name
	some i, a in cmd.args
	a == "migrate"
	cmd.args[i + 1] == "reset"
}

_destroys_data if {
	input.ahp.shell.mentions["--force-reset"]
	some i in input.ahp.shell.mentions["--force-reset"]
	cmd := input.ahp.shell.commands[i]
	not local.command(i)
	"--force-reset" in cmd.args
	"prisma" in array.concat([cmd.name], cmd.args)
}

_destroys_data if {
	input.ahp.shell.mentions.flush
	some k in input.ahp.shell.mentions.flush
	cmd := input.ahp.shell.commands[k]
	not local.command(k)
	"flush" in cmd.args
	some i, a in cmd.args
	a == "flush"
	i > 0
	endswith(cmd.args[i - 1], "manage.py")
}

_destroys_data if {
	programs["django-admin"]
	some i in programs["django-admin"]
	"flush" in input.ahp.shell.commands[i].args
	not local.command(i)
}
