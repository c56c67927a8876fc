package ahp.tool.before.builtin

import data.ahp.lib.args
import data.ahp.lib.config
import data.ahp.lib.local
import data.ahp.lib.paths
import data.ahp.lib.shell
import input.ahp.shell.programs

# METADATA
# title: Files outside the workspace destroyed by a verb other than rm
# description: |
#   Denies destroying files outside the workspace without rm: archiving
#   them with deletion (tar --remove-files, zip -m, 7z -sdel, rsync
#   --remove-source-files), moving them to /dev/null, overwriting them
#   with dd of=, and truncating them (truncate -s 0, : > file, cp
#   /dev/null file). Temporary directories and /dev are left alone; the
#   workspace is the agent's to change.
# custom:
#   severity: high
#   code: dev.ahp-opa.fs.destroy-outside-workspace
violation contains {
	"reason": concat(" ", [
		"Blocked destroying files outside the workspace (archived with deletion, moved to /dev/null, overwritten or truncated).",
		"Work on copies inside the workspace, or ask the user to remove or reset these files.",
	]),
	"code": "dev.ahp-opa.fs.destroy-outside-workspace",
	"trigger": trigger,
} if {
	some trigger in _destroyed_outside
}

# An operand the command destroys, outside the workspace and not
# temporary.
_destroyable(p) if {
	p.outside_workspace
	not paths.temp(p)
	not startswith(p.path, "/dev/")
	not config.path_excepted(p)
}

_archive_deletes(cmd) if {
	cmd.name in {"tar", "gtar", "bsdtar"}
	"--remove-files" in cmd.args
}

_archive_deletes(cmd) if {
	cmd.name == "zip"
	some o in args.options(cmd.args)
	regex.match(`^(-[a-zA-Z]*m[a-zA-Z]*|--move)$`, o)
}

_archive_deletes(cmd) if {
	cmd.name in {"7z", "7za", "7zz"}
	"-sdel" in cmd.args
}

_archive_deletes(cmd) if {
	cmd.name == "rsync"
	"--remove-source-files" in cmd.args
}

_destroyed_outside contains concat("", [_unwrapped_from(cmd), cmd.name, " ", p.raw]) if {
	some name, ixs in programs
	name in {"tar", "gtar", "bsdtar", "zip", "7z", "7za", "7zz", "rsync"}
	some i in ixs
	cmd := input.ahp.shell.commands[i]
	_archive_deletes(cmd)
	some p in cmd.paths
	_destroyable(p)
}

# mv file /dev/null (or into it): the file is gone.
_destroyed_outside contains concat("", [_unwrapped_from(cmd), "mv ", p.raw, " /dev/null"]) if {
	some i in programs.mv
	cmd := input.ahp.shell.commands[i]
	ops := args.operands(cmd.args)
	ops[count(ops) - 1] == "/dev/null"
	some p in cmd.paths
	p.path != "/dev/null"
	_destroyable(p)
}

# dd of=FILE overwrites an existing file.
_destroyed_outside contains concat("", [_unwrapped_from(cmd), "dd ", cmd.args[p.arg]]) if {
	some i in programs.dd
	cmd := input.ahp.shell.commands[i]
	some p in cmd.paths
	startswith(cmd.args[p.arg], "of=")
	_destroyable(p)
}

# truncate -s 0 FILE, truncate --size=0 FILE
_destroyed_outside contains concat("", [_unwrapped_from(cmd), "truncate -s 0 ", p.raw]) if {
	some i in programs.truncate
	cmd := input.ahp.shell.commands[i]
	size := args.option_value(cmd.args, "-s", "--size")
	regex.match(`^0+[KMGkmg]?$`, size)
	some p in cmd.paths
	cmd.args[p.arg] != size
	_destroyable(p)
}

# : > file, > file, true > file, cat /dev/null > file: emptied.
_destroyed_outside contains concat("", [_unwrapped_from(cmd), trim_space(concat(" ", [cmd.name, ">", r.path.raw]))]) if {
	input.ahp.writes
	some w in shell.writes
	_destroyable(w.path)
	cmd := input.ahp.shell.commands[w.command]
	_writes_nothing(cmd)
	some r in cmd.redirects
	r.op in {">", ">|", "&>"}
	r.path == w.path
}

_writes_nothing(cmd) if cmd.name in {"", ":", "true", "false"}

_writes_nothing(cmd) if {
	cmd.name == "cat"
	cmd.args == ["/dev/null"]
}

_writes_nothing(cmd) if {
	cmd.name == "echo"
	cmd.args == ["-n"]
}

_destroyed_outside contains concat("", [_unwrapped_from(cmd), "cp /dev/null ", p.raw]) if {
	some i in programs.cp
	cmd := input.ahp.shell.commands[i]
	"/dev/null" in args.operands(cmd.args)
	some p in cmd.paths
	p.path != "/dev/null"
	_destroyable(p)
}

# Statements and migration commands that empty a database, in addition
# to those of db.destructive-statement (database.rego), which these
# extend: UPDATE without WHERE rewrites every row.
_destructive(stmt) if {
	regex.match(`(?is)(^|[\s'"(])update\s+[\w."]+\s+set\s`, stmt)
	not regex.match(`(?is)\bwhere\b`, stmt)
}

# Schema tools whose subcommand drops every object: program → the
# argument that does it.
_schema_wipes := {
	"flyway": {"clean"},
	"liquibase": {"drop-all", "dropall", "dropAll"},
	"dbmate": {"drop"},
	"sqlx": {"drop"},
	"diesel": {"reset"},
	"goose": {"reset"},
	"migrate": {"drop"},
	"atlas": {"clean"},
	"alembic": {"base"},
	"sequelize": {"db:drop", "db:migrate:undo:all"},
	"knex": {"migrate:rollback --all"},
	"typeorm": {"schema:drop"},
	"mix": {"ecto.drop", "ecto.reset"},
	"artisan": {"migrate:fresh", "migrate:reset", "db:wipe"},
}

_destroys_data if {
	input.ahp.tool.family == "shell"
	some name, ixs in programs
	wipes := _schema_wipes[name]
	some i in ixs
	cmd := input.ahp.shell.commands[i]
	not local.command(i)
	_schema_wipe(name, wipes, cmd.args)
}

# npx knex …, pnpm exec sequelize …, yarn typeorm …: the tool run by a
# package runner.
_destroys_data if {
	some runner, ixs in programs
	runner in {"npx", "bunx", "pnpx", "pnpm", "yarn", "bun"}
	some i in ixs
	cmd := input.ahp.shell.commands[i]
	not local.command(i)
	some k, name in cmd.args
	k <= 2
	wipes := _schema_wipes[name]
	_schema_wipe(name, wipes, array.slice(cmd.args, k + 1, count(cmd.args)))
}

# php artisan migrate:fresh
_destroys_data if {
	some i in programs.php
	cmd := input.ahp.shell.commands[i]
	not local.command(i)
	endswith(cmd.args[0], "artisan")
	_schema_wipe("artisan", _schema_wipes.artisan, array.slice(cmd.args, 1, count(cmd.args)))
}

# dotnet ef database drop
_destroys_data if {
	some i in programs.dotnet
	cmd := input.ahp.shell.commands[i]
	not local.command(i)
	ops := args.operands(cmd.args)
	array.slice(ops, 0, 3) == ["ef", "database", "drop"]
}

_schema_wipe(name, wipes, a) if {
	some w in wipes
	not contains(w, " ")
	w in a
	not _schema_wipe_guarded(name, a)
}

_schema_wipe("knex", _, a) if {
	"migrate:rollback" in a
	"--all" in a
}

# alembic downgrade base: only as the downgrade target.
_schema_wipe_guarded("alembic", a) if not "downgrade" in a

_schema_wipe_guarded("flyway", a) if "-cleanDisabled=true" in a
