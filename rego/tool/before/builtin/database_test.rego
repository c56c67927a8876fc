package ahp.tool.before.builtin_test

# dev.ahp-opa.db.destructive-statement

test_destructive_statement_denied if {
	every c in [
		`psql -c "DROP TABLE users"`,
		`psql -c "drop database app"`,
		`mysql -e "TRUNCATE orders"`,
		`sqlite3 /var/lib/app/app.db "DELETE FROM sessions"`,
		"redis-cli FLUSHALL",
		"redis-cli -h prod.example.com FLUSHALL",
		`psql -h db.internal -c "DROP TABLE users"`,
		"redis-cli -n 2 flushdb",
		`mongosh --eval "db.dropDatabase()"`,
		"dropdb app_production",
		"rails db:drop",
		"npx prisma migrate reset --force",
		"python manage.py flush --noinput",
	] {
		denies(bash(c), "dev.ahp-opa.db.destructive-statement")
	}
}

test_destructive_statement_evasions_denied if {
	every c in [
		`psql -c "BEGIN; DELETE FROM users; COMMIT"`,
		`echo "DROP SCHEMA public CASCADE;" | psql`,
		"psql <<'SQL'\nTRUNCATE TABLE audit;\nSQL",
		"psql app <<< 'drop table t'",
		`PGPASSWORD=x psql -h db -c "  dRoP   TaBlE x"`,
		`bash -c "mysql -e 'DROP DATABASE x'"`,
		`docker exec db psql -c "DROP TABLE x"`,
	] {
		denies(bash(c), "dev.ahp-opa.db.destructive-statement")
	}
	denies(mcp("postgres", "query", {"sql": "DELETE FROM users"}), "dev.ahp-opa.db.destructive-statement")
	denies(mcp("db", "execute", {"query": "drop table accounts"}), "dev.ahp-opa.db.destructive-statement")
}

test_destructive_statement_lookalikes_allowed if {
	every c in [
		`psql -c "SELECT * FROM users"`,
		`psql -c "DELETE FROM sessions WHERE expires < now()"`,
		`mysql -e "SHOW TABLES"`,
		"redis-cli GET key",
		`psql -c "CREATE TABLE dropped_items (id int)"`,
		`echo "DROP TABLE x" > migration.sql`,
		`grep -r "DROP TABLE" migrations/`,
		"rails db:migrate",
	] {
		lookalike_allowed(bash(c), "dev.ahp-opa.db.destructive-statement")
	}
	lookalike_allowed(mcp("postgres", "query", {"sql": "SELECT 1"}), "dev.ahp-opa.db.destructive-statement")
}

# A production target written in a way no row knows makes a guessed
# destroying act sure (internal/effects/production.go).
test_production_target_destroy_denied if {
	denies(bash(`redis-cli -h cache.prod.internal --scan --pattern '*' | xargs -n 100 redis-cli -h cache.prod.internal DEL`), "dev.ahp-opa.effect.store-destroy")
}

test_production_target_destroy_lookalikes_allowed if {
	lookalike_allowed(bash(`redis-cli -h cache.staging.internal DEL session:42`), "dev.ahp-opa.effect.store-destroy")
	lookalike_allowed(bash(`redis-cli -h cache.prod.internal GET session:42`), "dev.ahp-opa.effect.store-destroy")
}

# rake, rails and make take variables as NAME=value operands: a test
# database named that way is the test database, and the task's name does
# not undo the table's judgement of it.
test_destructive_statement_env_operand_lookalikes_allowed if {
	not denies(bash("rails db:create db:schema:load RAILS_ENV=test"), "dev.ahp-opa.db.destructive-statement")
	allowed(bash("bundle exec rake db:reset RAILS_ENV=test"))
	allowed(bash("RAILS_ENV=test bundle exec rake db:reset"))
	denies(bash("bundle exec rake db:reset RAILS_ENV=production"), "dev.ahp-opa.db.destructive-statement")
}
