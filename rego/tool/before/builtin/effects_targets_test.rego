package ahp.tool.before.builtin_test

# Rows of the effect table (rego/lib/effects/clis.json) that judge a call
# by the target it names: a migration whose own environment or URL names
# a real database, an rsync whose destination is another host, a store
# upload, a login that stores a secret. Each denies the act and lets its
# look-alike (a development environment, a local destination, a read)
# pass.

test_effect_migration_named_target if {
	every c in [
		"MIX_ENV=prod mix ecto.migrate",
		"RAILS_ENV=production bundle exec rails db:migrate",
		"DATABASE_URL=postgres://app@db.prod.internal:5432/app npx prisma migrate deploy",
		"sqlx migrate run --database-url postgres://app@db.prod.internal:5432/app",
		"npx sequelize-cli db:migrate --env production",
		"NODE_ENV=production npx knex migrate:latest",
		"mysql -h db.prod.example.com -u root app < dump.sql",
		"psql -h db.prod.example.com -U app -d app < migrations/001.sql",
	] {
		denies(bash(c), "dev.ahp-opa.effect.remote-change")
	}
	every c in [
		"mix ecto.migrate",
		"MIX_ENV=test mix ecto.migrate",
		"RAILS_ENV=test bin/rails db:migrate",
		"DATABASE_URL=postgres://postgres@localhost:5432/app npx prisma migrate deploy",
		"sqlx migrate run --database-url postgres://postgres@127.0.0.1/app_test",
		"npx sequelize-cli db:migrate --env test",
		"npx knex migrate:latest",
		"mysql -h 127.0.0.1 -u root app < dump.sql",
		"mysql -h db.prod.example.com -e 'SHOW TABLES'",
		"psql -U postgres -f schema.sql",
		"mysql -h mysql -u root app < schema.sql",
	] {
		lookalike_allowed(bash(c), "dev.ahp-opa.effect.remote-change")
	}
}

test_effect_rsync_destination if {
	every c in [
		"rsync -avz --delete dist/ deploy@web01.example.com:/var/www/html/",
		"rsync -rt --delete-after public/ www.example.com:site/",
	] {
		denies(bash(c), "dev.ahp-opa.effect.publish")
	}
	every c in [
		"rsync -av --delete dist/ build/site/",
		"rsync -avz dist/ deploy@web01.example.com:/var/www/html/",
		"rsync -av --delete deploy@web01.example.com:/var/backups/ ./backups/",
		"rsync --dry-run -avz --delete dist/ web01.example.com:/srv/www/",
	] {
		lookalike_allowed(bash(c), "dev.ahp-opa.effect.publish")
	}
}

test_effect_site_and_store_uploads if {
	every c in [
		"hugo deploy --target production",
		"mkdocs gh-deploy --force",
		"ghp-import -n -p -f _build/html",
		"snapcraft upload --release=stable app_1.0_amd64.snap",
		"fastlane supply --track production --aab app.aab",
		"fastlane ios release",
		"xcrun altool --upload-app -f build/App.ipa -t ios",
		"gcloud deployment-manager deployments update prod --config prod.yaml",
	] {
		denies(bash(c), "dev.ahp-opa.effect.publish")
	}

	# Any blob upload is the cloud-storage rule's, which covers the effect.
	denied_only(bash("az storage blob upload-batch -d '$web' -s ./build --account-name site"), "dev.ahp-opa.deploy.cloud-storage")
	every c in [
		"hugo --gc --minify",
		"hugo deploy --target production --dryRun",
		"mkdocs build --strict",
		"ghp-import -n -f _build/html",
		"snapcraft --use-lxd",
		"fastlane test",
		"xcrun simctl list devices",
		"az storage blob download-batch -d ./build -s artifacts --account-name ci",
		"gcloud deployment-manager deployments describe prod",
	] {
		lookalike_allowed(bash(c), "dev.ahp-opa.effect.publish")
	}
}

test_effect_stored_credentials_and_switches if {
	every c in [
		`echo "$TOKEN" | docker login -u bot --password-stdin`,
		"gcloud auth activate-service-account --key-file=key.json",
		"az login --service-principal -u app -p secret --tenant t",
		"home-manager switch --flake .#dev",
		"darwin-rebuild switch --flake .",
	] {
		denies(bash(c), "dev.ahp-opa.effect.config-change")
	}
	every c in [
		`echo "$TOKEN" | docker login localhost:5000 -u bot --password-stdin`,
		"gcloud auth list",
		"az account show",
		"home-manager build --flake .#dev",
		"darwin-rebuild build --flake .",
	] {
		lookalike_allowed(bash(c), "dev.ahp-opa.effect.config-change")
	}
}

test_effect_windows_security_controls if {
	every c in [
		"Set-MpPreference -DisableRealtimeMonitoring $true",
		"Add-MpPreference -ExclusionPath C:\\Users\\dev",
		"Set-NetFirewallProfile -Profile Domain,Public,Private -Enabled False",
		"Set-ExecutionPolicy Unrestricted -Force",
		"Stop-Service WinDefend",
		`pwsh -c "Set-MpPreference -DisableRealtimeMonitoring $true"`,
	] {
		denies(bash(c), "dev.ahp-opa.effect.security-weaken")
	}
	every c in [
		"Get-MpPreference",
		"Set-MpPreference -SignatureUpdateInterval 4",
		"Set-NetFirewallProfile -Profile Domain -Enabled True",
		"Set-ExecutionPolicy RemoteSigned -Scope CurrentUser",
		"Stop-Service nginx",
		`pwsh -c "Get-MpPreference | Select-Object DisableRealtimeMonitoring"`,
	] {
		lookalike_allowed(bash(c), "dev.ahp-opa.effect.security-weaken")
	}
}
