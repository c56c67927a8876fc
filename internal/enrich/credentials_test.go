package enrich

import (
	"strings"
	"testing"
)

func TestCredentialCatalogue(t *testing.T) {
	pc := newPathContext("/home/dev/repo", []string{"/home/dev/repo"}, "/home/dev")
	tests := []struct {
		path          string
		kind, dirKind string
		holds         bool
	}{
		{"~/.claude/.credentials.json", "claude-code", "", false},
		{"~/.codex/auth.json", "codex", "", false},
		{"~/.gemini/oauth_creds.json", "gemini-cli", "", false},
		{"~/.config/github-copilot/hosts.json", "copilot", "", false},
		{"~/.aws/credentials", "aws", "", false},
		{"~/.aws/config", "", "", false}, // profiles and regions, no secret
		{"~/.aws", "", "aws", true},
		{"~/.aws/*", "", "aws", true},
		{"~/.aws/**", "", "aws", true},
		{"~/.aws/sso/cache/abc.json", "aws", "aws", false},
		{"/home/alice/.kube/config", "kube", "", false},
		{"~/.ssh/config", "", "", false},
		{"~/.ssh", "", "ssh", false}, // id_* keys are judged by name (paths.ssh_private_key),
		{"~/.password-store/work/db.gpg", "password-manager", "password-manager", false},
		{"~/.password-store/work", "password-manager", "password-manager", false},
		{"~/Library/Keychains/login.keychain-db", "keychain", "keychain", false},
		{"~/.mozilla/firefox/abc.default/cookies.sqlite", "browser", "browser", false},
		{"~/Library/Application Support/Google/Chrome/Default/Cookies", "browser", "browser", false},
		{"~/.m2/settings.xml", "registry", "", false},
		{"~/.gradle/gradle.properties", "registry", "", false},
		{"~/.zsh_history", "history", "", false},
		{"/proc/1/environ", "system", "", false},
		{"/proc/self/environ", "system", "", false},
		{"/etc/shadow", "system", "", false},
		{"/etc/ssl/private/server.key", "system", "system", false},
		// An unknown expansion may name any file there.
		{"~/.aws/$f", "", "aws", true},
		{"~/.password-store/${entry}.gpg", "password-manager", "", false},
		{"~/.config/gh/$name", "", "cloud-other", true},
		{"~/projects/$name/README.md", "", "", false},
		// Sweeps: a directory above credential locations.
		{"~", "", "", true},
		{"/home/dev/", "", "", true},
		{"~/.config", "", "", true},
		{"~/Library", "", "", true},
		{"/", "", "", true},
		{"/home", "", "", true},
		{"/etc", "", "", true},
		{"~/**/*", "", "", true},
		{"~/**/*.json", "", "", true},
		{"~/.config/**", "", "", true},
		// Not secrets, reaching none.
		{"~/**/*.go", "", "", false},
		{"~/projects/app", "", "", false},
		{"~/.config/nvim/init.lua", "", "", false},
		{"/home/dev/repo/src", "", "", false},
		{"/etc/nginx", "", "", false},
		{"/tmp/build", "", "", false},
		{"~/.bashrc", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			pi := pc.resolve(tt.path)
			m := credentialOf(&pi)
			if m.kind != tt.kind || m.dirKind != tt.dirKind || m.holds != tt.holds {
				t.Errorf("credentialOf(%s) = %+v, want kind %q dir %q holds %v", pi.abs, m, tt.kind, tt.dirKind, tt.holds)
			}
			if (m != credentialMatch{}) && !pi.sensitive() && m.kind != "" && pi.inHome {
				// Not required (Enrich ORs them), but a sign the two drifted.
				t.Logf("%s is a credential the name heuristics miss", pi.abs)
			}
		})
	}
}

func TestCredentialCatalogueRejectsBadRows(t *testing.T) {
	for _, doc := range []string{
		`{`,
		`{"locations": [{"what": "no kind", "files": ["~/.x"]}]}`,
		`{"locations": [{"kind": "k", "files": ["relative/path"]}]}`,
		`{"locations": [{"kind": "k", "files": ["~/*.kdbx"]}]}`,
		`{"locations": [{"kind": "k", "files": ["~/a/../b"]}]}`,
		`{"locations": [{"kind": "k", "files": ["~/a/[b"]}]}`,
	} {
		if _, _, err := parseCredentials([]byte(doc)); err == nil {
			t.Errorf("parseCredentials(%s) accepted it", doc)
		}
	}
	rows, _, err := parseCredentials(credentialsJSON)
	if err != nil || len(rows) == 0 {
		t.Fatalf("built-in catalogue: %d rows, %v", len(rows), err)
	}
	for _, r := range rows {
		if r.What == "" || strings.TrimSpace(r.Kind) != r.Kind {
			t.Errorf("row %q needs a description and a clean kind", r.Kind)
		}
	}
}

// FuzzCredentialOf feeds the catalogue paths as agents write them: it must
// never panic, and a path it marks must be judged sensitive by Enrich.
func FuzzCredentialOf(f *testing.F) {
	for _, s := range []string{"~/.aws/credentials", "~", "/", "~/.aws/*", "/proc/1/environ", "~/**/*.json", "C:\\Users\\u\\.netrc", "../../.ssh", "~/[", "/home//x/.kube/config"} {
		f.Add(s)
	}
	pc := newPathContext("/home/dev/repo", []string{"/home/dev/repo"}, "/home/dev")
	f.Fuzz(func(t *testing.T, raw string) {
		pi := pc.resolve(raw)
		m := credentialOf(&pi)
		if m == (credentialMatch{}) {
			return
		}
		ev := eventOf(t, map[string]any{
			"session": map[string]any{"cwd": "/home/dev/repo", "workspaceRoots": []any{"/home/dev/repo"}},
			"tool":    map[string]any{"name": "Read", "input": map[string]any{"file_path": raw}},
		})
		if r := Enrich(ev, Options{Home: "/home/dev"}, All); !r.Sensitive {
			t.Fatalf("%q is a credential location (%+v) but the call is not marked sensitive", raw, m)
		}
	})
}
