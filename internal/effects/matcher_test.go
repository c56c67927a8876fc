package effects

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ahp-opa/ahp-opa/internal/shell"
)

// workspace is /home/dev/repo; relative paths start there.
type workspace struct{}

func (workspace) Inside(arg string) bool {
	return !strings.HasPrefix(arg, "/") && !strings.HasPrefix(arg, "~") && !strings.HasPrefix(arg, "..") || strings.HasPrefix(arg, "/home/dev/repo/")
}

func (w workspace) Outside(arg string) (string, bool) {
	if w.Inside(arg) || strings.HasPrefix(arg, "/dev/") || strings.HasPrefix(arg, "-") {
		return "", false
	}
	return arg, true
}

// effectsOf renders the effects of a command line as
// "effect program confidence [local [assumed]]" lines, for compact tables.
func effectsOf(t *testing.T, m *Matcher, line string) []string {
	t.Helper()
	a := shell.Analyze(line, shell.DefaultLimits)
	var out []Effect
	for i := range a.Commands {
		out = m.Command(&a.Commands[i], i, workspace{}, out)
	}
	var got []string
	for _, e := range out {
		s := fmt.Sprintf("%s %s %s", e.Effect, e.Program, e.Confidence)
		if e.Local != "" {
			s += " local"
		}
		if e.LocalAssumed {
			s += " assumed"
		}
		got = append(got, s)
	}
	return got
}

func TestBuiltinTable(t *testing.T) {
	m, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(m.programs); n < 200 {
		t.Errorf("the built-in table knows %d programs, want hundreds", n)
	}
	for _, tc := range []struct {
		line string
		want string // effects joined by "; ", "" for none
	}{
		// data rows
		{"kubectl --namespace prod delete statefulset postgres", "store.destroy kubectl high"},
		{"kubectl get pods -n production", ""},
		{"kubectl diff -f k8s/", ""},
		{"kubectl apply -f k8s/", "publish kubectl high"},
		{"kubectl --context kind-dev delete pod web-0", "store.destroy kubectl high local"},
		{"kubectl delete pod web-0 --dry-run=client", "store.destroy kubectl high local"},
		{"kubectl delete pod web-0 --dry-run=none", "store.destroy kubectl high"},
		{"kubectl get secret db -o jsonpath='{.data.password}'", "secret.read kubectl high"},
		{"kubectl get secrets -o name", ""},
		{"aws s3 rb s3://logs --force", "store.destroy aws high"},
		{"aws --endpoint-url http://localhost:4566 s3 rb s3://logs", "store.destroy aws high local"},
		{"AWS_ENDPOINT_URL=http://127.0.0.1:4566 aws dynamodb delete-table --table-name t", "store.destroy aws high local"},
		{"aws ssm get-parameter --name /db/pw --with-decryption", "secret.read aws high"},
		{"aws ssm get-parameter --name /db/host", ""},
		{"aws s3 ls", ""},
		{"gcloud compute instances delete vm-1 --zone us-east1-b", "store.destroy gcloud high"},
		{"gcloud compute instances list", ""},
		{"terraform plan -out tf.plan", ""},
		{"terraform apply -auto-approve", "remote.change terraform high"},
		// env conditions: what the command's own environment names
		{"MIX_ENV=prod mix ecto.migrate", "remote.change mix medium"},
		{"MIX_ENV=test mix ecto.migrate", "remote.change mix low"},
		{"mix ecto.migrate", "remote.change mix low"},
		{"RAILS_ENV=production bin/rails db:migrate", "remote.change rails medium"},
		{"RAILS_ENV=test bin/rails db:migrate", "remote.change rails low local"},
		{"DATABASE_URL=postgres://app@db.prod.internal/app npx prisma migrate deploy", "remote.change prisma medium"},
		{"DATABASE_URL=postgres://postgres@localhost:5432/app npx prisma migrate deploy", "remote.change prisma medium local"},
		{"npx sequelize-cli db:migrate --env production", "remote.change sequelize-cli medium"},
		{"npx sequelize-cli db:migrate", "remote.change sequelize-cli low"},
		// rsync: the destination decides
		{"rsync -avz --delete dist/ deploy@web01.example.com:/var/www/html/", "remote.change rsync low; publish rsync high"},
		{"rsync -av --delete dist/ build/site/", ""},
		{"rsync -av --delete deploy@web01.example.com:/var/backups/ ./backups/", "remote.change rsync low local; publish rsync high local"},
		{"rsync -avzn --delete dist/ web01.example.com:/srv/www/", "remote.change rsync low; publish rsync high"},
		{"rsync --dry-run -avz --delete dist/ web01.example.com:/srv/www/", "remote.change rsync low local; publish rsync high local"},
		// a script fed to a database server the call names
		{"mysql -h db.prod.example.com -u root app < dump.sql", "remote.change mysql medium"},
		{"mysql -h 127.0.0.1 -u root app < dump.sql", "remote.change mysql medium local"},
		{"mysql -h db.prod.example.com -e 'SELECT 1'", ""},
		{"psql -h 10.0.3.7 -U app app < migrate.sql", "remote.change psql medium"},
		{"mysql -h mysql -u root app < schema.sql", ""},
		{"psql -U postgres -f schema.sql", ""},
		// a quiet program's own deploy subcommand
		{"hugo deploy --target production", "publish hugo high"},
		{"hugo --minify", ""},
		{"xcrun altool --upload-app -f build/App.ipa -t ios", "publish altool high"},
		{"xcrun simctl list devices", ""},
		{"tofu destroy", "store.destroy tofu high"},
		{"helm template web ./chart", ""},
		{"helm upgrade --install web ./chart --kube-context minikube", "publish helm high local"},
		{"docker push localhost:5000/app:dev", "publish docker high local"},
		{"docker push ghcr.io/acme/app:1.0", "publish docker high"},
		{"docker build -t app .", ""},
		{"npm publish --registry http://localhost:4873", "publish npm high local"},
		{"npm publish --dry-run", "publish npm high local"},
		{"npm run deploy-docs", ""},
		{"npx semantic-release", "publish semantic-release high"},
		{"python -m twine upload dist/*", "publish twine high"},
		{"pnpm dlx semantic-release@24", "publish semantic-release high"},
		{"npx @railway/cli up", "publish railway high"},
		{"npm exec -- firebase deploy", "publish firebase high"},
		{"npm exec --package=firebase-tools -- firebase deploy", "publish firebase high"},
		{"npm exec -- eslint .", ""},
		{"npx eas-cli submit -p ios", "publish eas-cli high"},
		{"npx firebase-tools deploy --only hosting", "publish firebase-tools high"},
		{"pnpm dlx pkg-pr-new@0.0 publish ./packages/a", "publish pkg-pr-new high"},
		{"./gradlew publishToMavenLocal", ""},
		{"./gradlew clean publish", "publish gradlew high"},
		{"mvn -B clean deploy -P release", "publish mvn high"},
		{"mvn -B release:prepare -DdryRun=true", "remote.change mvn high local"},
		{"mvn -B release:prepare -DdryRun=false", "remote.change mvn high"},
		{"redis-cli FLUSHALL", "store.destroy redis-cli high local assumed"},
		{"redis-cli -h 127.0.0.1 FLUSHALL", "store.destroy redis-cli high local"},
		{"REDISCLI_HOST=cache.internal redis-cli FLUSHALL", "store.destroy redis-cli high"},
		{"redis-cli -h cache.internal FLUSHALL", "store.destroy redis-cli high"},
		{"psql -h db.prod -c 'DROP TABLE users'", "store.destroy psql high"},
		{"psql -h localhost -c 'DROP TABLE users'", "store.destroy psql high local"},
		{"psql -c 'select 1'", ""},
		{"sqlite3 :memory: 'drop table t'", "store.destroy sqlite3 high local"},
		{"pass show email/work", "secret.read pass high"},
		{"pass ls", ""},
		{"pass github.com", "secret.read pass medium"},
		{"crontab -l", ""},
		{"crontab jobs.txt", "persistence crontab high"},
		{"sudo systemctl stop firewalld", "security.weaken systemctl high"},
		{"systemctl status nginx", ""},
		{"git push origin feature/x", "remote.change git low"},
		{"git push --dry-run origin main", "remote.change git low local"},
		{"goreleaser release --snapshot --clean", "publish goreleaser high local"},
		{"rm -rf ~/.cache/foo", "fs.delete-outside rm high"},
		{"rm -rf build/", ""},
		{"RAILS_ENV=production bin/rails db:drop", "store.destroy rails high"},
		{"bin/rails db:drop", "store.destroy rails high local assumed"},
		// a URL is not a workspace path, however relative it reads
		{"dotnet nuget push bin/App.1.0.nupkg --source https://api.nuget.org/v3/index.json", "publish dotnet high"},
		{"dotnet nuget push bin/App.1.0.nupkg --source ./feed", "publish dotnet high local"},
		// a bare source name is configured elsewhere, not a directory
		{"dotnet nuget push bin/App.1.0.nupkg -s nuget.org", "publish dotnet high"},
		{"dotnet nuget push bin/App.1.0.nupkg -s artifacts/feed", "publish dotnet high local"},
		// values that never leave the machine
		{"liquibase --url=jdbc:h2:mem:test update", "remote.change liquibase medium local"},
		{"mvn deploy -DaltDeploymentRepository=local::default::file:./target/repo", "publish mvn high local"},
		// unknown CLIs: verbs speak, look-alikes do not
		{"acmectl deploy --env production", "publish acmectl medium"},
		{"acmectl release list", ""},
		// cargo's plugins (cargo-X) speak by their own words
		{"cargo ci homebrew publish --formula x.rb", "publish cargo-ci medium"},
		{"cargo xtask deploy --env prod", "publish cargo-xtask medium"},
		{"cargo test release", ""},
		{"cargo nextest run --release", ""},
		{"cargo semver-checks check-release", ""},
		// an HTTP write that carries credentials changes a remote API
		{`curl -X POST -H "Authorization: token $T" https://api.vendor.example.com/v1/releases -d @r.json`, "remote.change curl medium"},
		{`curl -T pkg.tgz -u "$U:$P" https://repo.corp.example.com/pkgs/`, "remote.change curl medium"},
		{`curl --json '{"a":1}' -H "X-Api-Key: $K" https://hooks.vendor.io/in`, "remote.change curl medium"},
		{`curl -XPATCH -H "PRIVATE-TOKEN: $T" https://gitlab.example.com/api/v4/projects/1`, "remote.change curl medium"},
		{`curl -X POST -H "Authorization: Bearer $T" http://localhost:3000/api`, "remote.change curl medium local"},
		{`curl -X PUT -H "Authorization: Bearer $T" https://api.svc.test/v1`, "remote.change curl medium local"},
		// a short literal is a documentation example, not a credential
		{`curl -X PUT -H "X-API-Token: 123" -d name=x https://echo.vendor.io/put`, ""},
		{`http PUT echo.vendor.io/put X-API-Token:123 name=x`, ""},
		{`curl -H "Authorization: Bearer $T" https://api.vendor.io/v1/me`, ""},
		{`curl -G -d q=x -H "Authorization: Bearer $T" https://api.vendor.io/search`, ""},
		{`curl -X POST -H "Content-Type: application/json" -d '{}' https://httpbin.org/post`, ""},
		{`http -a "$U:$P" POST https://api.vendor.example.com/v1/notes text=hi`, "remote.change http medium"},
		{`xh PATCH https://api.vendor.io/v1/apps/1 "Authorization:Bearer $T" public:=true`, "remote.change xh medium"},
		{`http POST https://httpbin.org/post a=1`, ""},
		{`http GET https://api.vendor.io/v1/me "Authorization:Bearer $T"`, ""},
		{`curl -X POST -H "Authorization: token $T" -d '{"body":"ok"}' https://api.github.com/repos/a/b/issues/1/comments`, ""},
		// push and upload mean it, as delete does, on a published thing's
		// noun or past a confirmation
		{"vendorcli artifacts upload ./dist", "publish vendorcli medium"},
		{"vendorcli image push reg.vendor.io/app:2", "publish vendorcli medium"},
		{"vendorcli push --yes", "publish vendorcli medium"},
		{"vendorcli push", "publish vendorcli low"},
		{"vendorcli upload notes.txt", "publish vendorcli low"},
		// compound subcommands speak by their words
		{"vendorcli art build-promote 1.2 libs-stable", "publish vendorcli medium"},
		{"acmectl create_store_release v2", "publish acmectl medium"},
		{"acmectl lib-release", "publish acmectl low"},
		{"acmectl release-notes v2", ""},
		{"acmectl lint scripts/deploy.sh", ""},
		{"pn dist-tag rm @acme/ui beta", "publish pn high"},
		{"acmectl cluster destroy prod", "store.destroy acmectl medium"},
		{"acmectl deploy --help", ""},
		// a template of metadata only reads no secret value
		{"kubectl get secret app-tls -n dev -o jsonpath='{.metadata.creationTimestamp}'", "secret.read kubectl high local"},
		{"kubectl get secrets -o custom-columns=NAME:.metadata.name,TYPE:.type", "secret.read kubectl high local"},
		{"kubectl get secret app-tls -o jsonpath='{.data.tls\\.key}'", "secret.read kubectl high"},
		{"kubectl get secret app -o jsonpath='{.metadata.name}{.data}'", "secret.read kubectl high"},
		{"kubectl get secret app -o jsonpath=\"{.items[*]['data']}\"", "secret.read kubectl high"},
		{"kubectl get secret app -o jsonpath='{.metadata}{.}'", "secret.read kubectl high"},
		{"kubectl get secret app -o go-template='{{.metadata.name}} {{toJson .}}'", "secret.read kubectl high"},
		{"kubectl get secret app -o yaml", "secret.read kubectl high"},
		// a rehearsal is one whatever route found the act
		{"dart pub publish --dry-run", "publish dart medium local"},
		{"dart pub publish", "publish dart medium"},
		{"acmectl deploy --env production --dry_run", "publish acmectl medium local"},
		{"acmectl deploy --env production --dry-run=false", "publish acmectl medium"},
		{"acmectl release --skip=sign,publish", "publish acmectl medium local"},
		{"acmectl cluster destroy prod --snapshot", "store.destroy acmectl medium"},
		{"twine upload --dry-run dist/*", "publish twine high local"},
		{"acmectl --version", ""},
		{"acmectl release deploy --project web --version 1.2.0", "publish acmectl medium"},
		// a delete is sure with a confirmation skipped or a data noun next to it
		{"acmectl cache delete --yes", "store.destroy acmectl medium"},
		{"acmectl database delete prod", "store.destroy acmectl medium"},
		{"acmectl compute instance delete web-1", "store.destroy acmectl medium"},
		{"acmectl user delete bob", "store.destroy acmectl low"},
		{"acmectl compute thing delete web-1", ""},
		{"pyenv uninstall -f 3.8.0", ""}, // a version manager: quiet
		{"acmectl plugin uninstall --force x", "store.destroy acmectl low"},
		{"conan upload \"*\" -r conancenter --confirm", "publish conan high"},
		{"conan remove \"*\" --confirm", ""},
		// release tracks and aliases
		{"gcloud beta run deploy api --image x", "publish gcloud high"},
		{"gcloud alpha storage ls", ""},
		{"k delete ns prod", "store.destroy k high"},
		// PowerShell cmdlets the table does not know speak by their verb
		{"Remove-AzResourceGroup -Name prod -Force", "store.destroy remove-azresourcegroup medium"},
		{"Remove-AzSqlDatabase -ServerName s -DatabaseName d", "store.destroy remove-azsqldatabase medium"},
		{"Remove-AzTag -Name x", "store.destroy remove-aztag low"},
		{"Publish-Module -Name Acme -NuGetApiKey k", "publish publish-module medium"},
		{"Get-AzResourceGroup -Name prod", ""},
		{"Clear-Host", ""},
		{"Remove-Item -Recurse -Force ./bin", ""}, // a file delete: the file rules judge it
		{"Remove-Variable -Name x -Force", ""},
		{"echo deploy now", ""},
		{"make release-notes", ""},
		{"grep -rn publish src/", ""},
	} {
		got := strings.Join(effectsOf(t, m, tc.line), "; ")
		if got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.line, got, tc.want)
		}
	}
}

func TestTeamRows(t *testing.T) {
	doc := map[string]any{"programs": map[string]any{
		"acmectl": map[string]any{"rows": []any{
			map[string]any{"path": "release list", "effect": "none"},
			map[string]any{"path": "db wipe", "effect": "store.destroy", "target": "acme database"},
		}},
		"kubectl": map[string]any{"local": []any{map[string]any{"options": []any{"--context"}, "match": []any{"dev-*"}, "why": "our dev clusters"}}},
	}}
	m, err := WithTeam(doc)
	if err != nil {
		t.Fatal(err)
	}
	for line, want := range map[string]string{
		"acmectl db wipe":                         "store.destroy acmectl high",
		"acmectl deploy":                          "", // now known: its verbs no longer guess
		"kubectl --context dev-eu delete pod x":   "store.destroy kubectl high local",
		"kubectl --context prod-eu delete pod x":  "store.destroy kubectl high",
		"kubectl --context minikube delete pod x": "store.destroy kubectl high local",
	} {
		if got := strings.Join(effectsOf(t, m, line), "; "); got != want {
			t.Errorf("%s: got %q, want %q", line, got, want)
		}
	}
}

func TestTableErrors(t *testing.T) {
	for name, doc := range map[string]string{
		"unknown effect":  `{"programs": {"x": {"rows": [{"path": "a", "effect": "store.destory"}]}}}`,
		"bad confidence":  `{"programs": {"x": {"rows": [{"path": "a", "effect": "publish", "confidence": "sure"}]}}}`,
		"bad regexp":      `{"programs": {"x": {"rows": [{"path": "", "effect": "publish", "args": "("}]}}}`,
		"local no why":    `{"programs": {"x": {"local": [{"options": ["-h"], "loopback": true}]}}}`,
		"local no test":   `{"programs": {"x": {"local": [{"options": ["-h"], "why": "w"}]}}}`,
		"unknown key":     `{"programs": {"x": {"rowz": []}}}`,
		"dangling alias":  `{"programs": {"x": {"alias": "y"}}}`,
		"bad env regexp":  `{"programs": {"x": {"rows": [{"path": "", "effect": "publish", "env": {"X_ENV": "("}}]}}}`,
		"unknown operand": `{"programs": {"x": {"rows": [{"path": "", "effect": "publish", "operands": "all"}]}}}`,
		"bad also_args":   `{"programs": {"x": {"rows": [{"path": "", "effect": "publish", "also_args": ["("]}]}}}`,
		"bad unless":      `{"programs": {"x": {"rows": [{"path": "", "effect": "publish", "unless": "[a"}]}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			tab, err := Parse([]byte(doc))
			if err == nil {
				_, err = Compile(tab)
			}
			if !errors.Is(err, ErrTable) {
				t.Fatalf("got %v, want an ErrTable", err)
			}
		})
	}
}

func TestOnMachine(t *testing.T) {
	for in, want := range map[string]bool{
		"http://localhost:4566":                          true,
		"jdbc:h2:mem:test":                               true,
		"jdbc:h2:./build/db":                             true,
		"jdbc:hsqldb:mem:app":                            true,
		"jdbc:derby:memory:x;create=true":                true,
		"jdbc:sqlite:app.db":                             true,
		"sqlite:///data/app.db":                          true,
		"sqlite+pysqlite:///:memory:":                    true,
		"local::default::file:./target/staging-repo":     true,
		"local::file:///tmp/repo":                        true,
		"jdbc:h2:tcp://db.example.com/app":               false,
		"jdbc:postgresql://db.prod.example.com:5432/app": false,
		"releases::default::https://repo.example.com/m2": false,
		"sqlite:latest":                                  false,
		"sqlite:3.45":                                    false,
		"file:1.0":                                       false,
		"h2:mem":                                         false,
		"sqlite:db/development.sqlite3":                  true,
		"file:./dev.db":                                  true,
		"ghcr.io/acme/sqlite:3":                          false,
		"postgres://u:p@db.example.com:5432/app":         false,
	} {
		if got := OnMachine(in); got != want {
			t.Errorf("OnMachine(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestHostOf(t *testing.T) {
	for in, want := range map[string]string{
		"http://localhost:4566":                  "localhost",
		"localhost:5000/app:dev":                 "localhost",
		"ghcr.io/acme/app":                       "ghcr.io",
		"docker://127.0.0.1:5000/x":              "127.0.0.1",
		"jdbc:postgresql://localhost:5432/db":    "localhost",
		"postgres://u:p@db.example.com:5432/app": "db.example.com",
		"[::1]:6379":                             "::1",
		"cache.internal":                         "cache.internal",
	} {
		if got := HostOf(in); got != want {
			t.Errorf("HostOf(%q) = %q, want %q", in, got, want)
		}
	}
}
