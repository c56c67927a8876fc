package engine

import (
	"context"
	"slices"
	"sort"
	"testing"

	"github.com/ahp-opa/ahp-opa/internal/enrich"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
)

// evalLib evaluates a query against the built-in library and returns the
// value of its first expression, or nil when it is undefined.
func evalLib(t *testing.T, s *Snapshot, query string, input ast.Value) any {
	t.Helper()
	opts := []func(*rego.Rego){rego.Query(query), rego.Compiler(s.Compiler)}
	if input != nil {
		opts = append(opts, rego.ParsedInput(input))
	}
	rs, err := rego.New(opts...).Eval(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) == 0 {
		return nil
	}
	return rs[0].Expressions[0].Value
}

// The program classes of input.ahp.shell.classes are the library's lists.
func TestClassesMatchLibraryLists(t *testing.T) {
	t.Parallel()
	s := builtinEngine(t).Snapshot()
	for class, rule := range map[string]string{
		enrich.ClassShell:       "data.ahp.lib.shell.shells",
		enrich.ClassInterpreter: "data.ahp.lib.shell.interpreters",
		enrich.ClassDownloader:  "data.ahp.lib.shell.downloaders",
		enrich.ClassNetwork:     "data.ahp.lib.shell.network_tools",
		enrich.ClassEscalator:   "data.ahp.lib.shell.escalators",
		enrich.ClassDBClient:    "data.ahp.tool.before.builtin._db_clients",
		enrich.ClassInfra:       "{k | some k, _ in data.ahp.tool.before.builtin._infra_kind}",
		enrich.ClassPublisher:   "{k | some k, _ in data.ahp.tool.before.builtin._publish_kind}",
		enrich.ClassMkfs:        `{n | some n in ["mkfs", "mke2fs", "mkswap", "newfs", "mkdosfs", "mkntfs"]; data.ahp.tool.before.builtin._mkfs(n)}`,
	} {
		var lib []string
		for _, x := range evalLib(t, s, rule, nil).([]any) {
			lib = append(lib, x.(string))
		}
		got := slices.Clone(enrich.ClassMembers(class))
		sort.Strings(lib)
		sort.Strings(got)
		if !slices.Equal(got, lib) {
			t.Errorf("class %s = %v, library %s = %v", class, got, rule, lib)
		}
	}
	for _, op := range enrich.WriteOps() {
		if evalLib(t, s, `"`+op+`" in data.ahp.lib.shell.write_ops`, nil) != true {
			t.Errorf("write op %q is not in ahp.lib.shell.write_ops", op)
		}
	}
}

// input.ahp.sensitive must be set whenever a path predicate of the secret
// rules matches, and input.ahp.writes whenever ahp.lib.shell.writes holds
// something: the rules that start with them are skipped otherwise.
func TestHintsCoverThePredicates(t *testing.T) {
	t.Parallel()
	s := builtinEngine(t).Snapshot()
	paths := []string{
		"~/.ssh/id_rsa", "~/.ssh/id_ed25519.pub", "/root/.ssh/id_x", ".ssh/id_rsa", "~/.ssh/*", "/x/.ssh/*",
		".env", ".env.production", "prod.env", ".envrc", "x/.env.local", ".env.example",
		"~/.aws/credentials", "~/.netrc", "~/_netrc", "~/.git-credentials", "~/.docker/config.json",
		"~/.kube/config", "~/.password-store/a.gpg", "~/.config/gcloud/legacy_credentials/x",
		"/proc/self/environ", "/proc/1/task/2/environ", "/etc/shadow", "/etc/sudoers", "/etc/ssl/private/k",
		"/run/secrets/db", "/var/run/secrets/kubernetes.io/token", "/etc/pki/tls/private/x",
		"server.key", "cert.PEM", "ca.pem", "a.p12", "b.pfx", "c.ppk", "d.jks", "e.keystore", "f.p8",
		"id_rsa", "backup/id_ed25519_sk", "~/.bash_history", "/Users/u/.zsh_history", "C:/Users/u/.netrc",
		"~/.aws", "~/.ssh/", "/root/.ssh", "/home/alice/.kube/*", "/Users/u/.gnupg", "/etc/ssl/private",
		"~/.config/gcloud", "/home/bob/.docker", "~/.aws/**",
		"~/.claude/.credentials.json", "~/.codex/auth.json", "~/.gemini/oauth_creds.json",
		"~/Library/Keychains/login.keychain-db", "~/Library/Application Support/Google/Chrome/Default/Cookies",
		"~/.m2/settings.xml", "~", "~/.config", "/etc", "/", "~/**/*.json", "vault.kdbx",
		"main.go", "/home/dev/repo/src/app.ts", "./...", "/tmp/x", "~/repo/README.md",
	}
	secret := 0
	for _, p := range paths {
		ev := benchEvent("Read", map[string]any{"file_path": p})
		in := fullInput(t, ev, "/home/dev")
		n := toString(evalLib(t, s, `sum([count([p | some p in input.ahp.tool.paths; data.ahp.lib.paths.ssh_private_key(p)]),
			count([p | some p in input.ahp.tool.paths; data.ahp.lib.paths.env_file(p)]),
			count([p | some p in input.ahp.tool.paths; data.ahp.lib.paths.credential_file(p)]),
			count([p | some p in input.ahp.tool.paths; data.ahp.lib.paths.credential_dir(p)]),
			count([p | some p in input.ahp.tool.paths; data.ahp.lib.paths.holds_credentials(p)])])`, in))
		hint := evalLib(t, s, "input.ahp.sensitive", in)
		if n != "0" {
			secret++
			if hint != true {
				t.Errorf("%q matches a secret-file predicate but input.ahp.sensitive is not set", p)
			}
		}
	}
	if secret < len(paths)/2 {
		t.Errorf("only %d of %d paths match a predicate: the test proves little", secret, len(paths))
	}
	commands := []string{
		"echo x > a", "echo x >> a", "cat a >| b", "ls &> log", "ls &>> log", "cat <> f",
		"tee a < b", "truncate -s 0 f", "sort f | sponge f", "cp a b", "mv a b", "install a b", "ln -s a b",
		"rsync -a a/ b/", "ditto a b", "sed -i s/a/b/ f", "perl -pi -e s/a/b/ f", "gsed -i s/a/b/ f",
		"curl -o out https://x", "wget -O out https://x", "dd if=/dev/zero of=/tmp/x", "sudo tee /etc/x",
		"bash -c 'echo x > /etc/hosts'", "git status", "go test ./...", "cat < f",
	}
	writing := 0
	for _, c := range commands {
		in := fullInput(t, benchEvent("Bash", map[string]any{"command": c}), "/home/dev")
		n := evalLib(t, s, "count(data.ahp.lib.shell.writes)", in)
		hint := evalLib(t, s, "input.ahp.writes", in)
		if toString(n) != "0" {
			writing++
		}
		if toString(n) != "0" && hint != true {
			t.Errorf("%q: shell.writes has %v entries but input.ahp.writes is not set", c, n)
		}
	}
	if writing < len(commands)/2 {
		t.Errorf("only %d of %d commands write: the test proves little", writing, len(commands))
	}
}

func toString(v any) string {
	b, _ := ast.InterfaceToValue(v)
	return b.String()
}
