package ahp.tool.before.builtin_test

# dev.ahp-opa.fs.destroy-outside-workspace

test_destroy_outside_archive_denied if {
	denied_only(bash("tar --remove-files -czf /tmp/docs.tgz ~/Documents"), "dev.ahp-opa.fs.destroy-outside-workspace")
	denies(bash("zip -rm /tmp/a.zip ~/Pictures"), "dev.ahp-opa.fs.destroy-outside-workspace")
	denies(bash("7z a -sdel /tmp/a.7z /home/dev/projects"), "dev.ahp-opa.fs.destroy-outside-workspace")
	denies(bash("rsync -a --remove-source-files ~/notes/ /tmp/n/"), "dev.ahp-opa.fs.destroy-outside-workspace")
	denies(bash("mv ~/Documents /dev/null"), "dev.ahp-opa.fs.destroy-outside-workspace")
}

test_destroy_outside_overwrite_denied if {
	denies(bash("dd if=/dev/zero of=/home/dev/notes.db bs=1M count=1"), "dev.ahp-opa.fs.destroy-outside-workspace")
	denies(bash("truncate -s 0 ~/.ssh/known_hosts"), "dev.ahp-opa.fs.destroy-outside-workspace")
	denies(bash(": > ~/.bash_history"), "dev.ahp-opa.fs.destroy-outside-workspace")
	denies(bash("cat /dev/null > /home/dev/other/app.db"), "dev.ahp-opa.fs.destroy-outside-workspace")
	denies(bash("cp /dev/null ~/.zsh_history"), "dev.ahp-opa.fs.destroy-outside-workspace")
}

test_destroy_outside_lookalikes_allowed if {
	lookalike_allowed(bash("tar --remove-files -czf logs.tgz logs/"), "dev.ahp-opa.fs.destroy-outside-workspace")
	lookalike_allowed(bash("tar -czf /tmp/docs.tgz ~/Documents"), "dev.ahp-opa.fs.destroy-outside-workspace")
	lookalike_allowed(bash("zip -r site.zip public"), "dev.ahp-opa.fs.destroy-outside-workspace")
	lookalike_allowed(bash("dd if=/dev/zero of=disk.img bs=1M count=10"), "dev.ahp-opa.fs.destroy-outside-workspace")
	lookalike_allowed(bash("truncate -s 0 app.log"), "dev.ahp-opa.fs.destroy-outside-workspace")
	lookalike_allowed(bash(": > build.log"), "dev.ahp-opa.fs.destroy-outside-workspace")
	lookalike_allowed(bash("truncate -s 0 /tmp/out.log"), "dev.ahp-opa.fs.destroy-outside-workspace")
	lookalike_allowed(bash("mv old.txt /tmp/"), "dev.ahp-opa.fs.destroy-outside-workspace")
}

# dev.ahp-opa.db.destructive-statement, as extended here

test_schema_wipes_denied if {
	denies(bash("flyway -url=jdbc:postgresql://db/app clean"), "dev.ahp-opa.db.destructive-statement")
	denies(bash("liquibase drop-all"), "dev.ahp-opa.db.destructive-statement")
	denies(bash("alembic downgrade base"), "dev.ahp-opa.db.destructive-statement")
	denies(bash("php artisan migrate:fresh --seed"), "dev.ahp-opa.db.destructive-statement")
	denies(bash("mix ecto.reset"), "dev.ahp-opa.db.destructive-statement")
	denies(bash("dotnet ef database drop --force"), "dev.ahp-opa.db.destructive-statement")
	denies(bash("npx knex migrate:rollback --all"), "dev.ahp-opa.db.destructive-statement")
	denies(bash(`mysql -e "UPDATE users SET role='admin'"`), "dev.ahp-opa.db.destructive-statement")
	denies(bash("psql -c 'update accounts set balance = 0'"), "dev.ahp-opa.db.destructive-statement")
}

test_schema_wipes_lookalikes_allowed if {
	lookalike_allowed(bash("flyway migrate"), "dev.ahp-opa.db.destructive-statement")
	lookalike_allowed(bash("liquibase update"), "dev.ahp-opa.db.destructive-statement")
	lookalike_allowed(bash("alembic upgrade head"), "dev.ahp-opa.db.destructive-statement")
	lookalike_allowed(bash("alembic downgrade -1"), "dev.ahp-opa.db.destructive-statement")
	lookalike_allowed(bash("php artisan migrate"), "dev.ahp-opa.db.destructive-statement")
	lookalike_allowed(bash("npx knex migrate:rollback"), "dev.ahp-opa.db.destructive-statement")
	lookalike_allowed(bash(`psql -c "UPDATE users SET name='x' WHERE id=1"`), "dev.ahp-opa.db.destructive-statement")
}
