package redact

import (
	"encoding/json"
	"testing"
)

// TestRedactCommandLineSecrets: a password given on a command line is
// masked wherever the command is written, by the flag that carries it
// (keyed on the program where the flag's meaning depends on it) or by the
// secret name of an environment assignment; the same flags meaning a
// port, a database or a user stay visible.
func TestRedactCommandLineSecrets(t *testing.T) {
	tests := []struct{ in, want string }{
		{"mysql -pPLAIN22abc -u root", "mysql -p[REDACTED] -u root"},
		{"/usr/bin/mysqldump -uroot -p'hunter 2' db", "/usr/bin/mysqldump -uroot -p'[REDACTED]' db"},
		{"mysql --password=PLAIN22abc db", "mysql --password=[REDACTED] db"},
		{"PGPASSWORD=PLAINpg1 psql -h db", "PGPASSWORD=[REDACTED] psql -h db"},
		{"sshpass -p PLAINssh1 ssh host", "sshpass -p [REDACTED] ssh host"},
		{"sshpass -pPLAINssh1 ssh host", "sshpass -p[REDACTED] ssh host"},
		{"curl -u bob:PLAINcurl1 https://x", "curl -u bob:[REDACTED] https://x"},
		{"curl --user 'bob:PLAIN curl' https://x", "curl --user 'bob:[REDACTED]' https://x"},
		{"redis-cli -h r -a PLAINredis1 ping", "redis-cli -h r -a [REDACTED] ping"},
		{"redis-cli --pass PLAINredis1 ping", "redis-cli --pass [REDACTED] ping"},
		{"htpasswd -b /etc/htpasswd bob PLAINhtp1", "htpasswd -b /etc/htpasswd bob [REDACTED]"},
		{"htpasswd -bc f bob PLAINhtp1 && ls", "htpasswd -bc f bob [REDACTED] && ls"},
		{"htpasswd -nb bob PLAINhtp1", "htpasswd -nb bob [REDACTED]"},
		{"docker login -u bob -p PLAINdock1 ghcr.io", "docker login -u bob -p [REDACTED] ghcr.io"},
		{"podman login -p=PLAINdock1 r", "podman login -p=[REDACTED] r"},
		{"ldapsearch -x -D cn=admin -w PLAINldap1 -b dc=x", "ldapsearch -x -D cn=admin -w [REDACTED] -b dc=x"},
		{"smbclient //h/s -U bob%PLAINsmb1", "smbclient //h/s -U bob%[REDACTED]"},
		{"zip -P PLAINzip1 out.zip f", "zip -P [REDACTED] out.zip f"},
		{"7z a -pPLAIN7z1 out.7z f", "7z a -p[REDACTED] out.7z f"},
		{"sqlcmd -S db -U sa -P PLAINsql1", "sqlcmd -S db -U sa -P [REDACTED]"},
		{"mongosh -u admin -p PLAINmongo1 --port 27017", "mongosh -u admin -p [REDACTED] --port 27017"},
		{"openssl pkcs12 -in a.p12 -passin pass:PLAINossl1 -out b", "openssl pkcs12 -in a.p12 -passin pass:[REDACTED] -out b"},
		{"ssh-keygen -t ed25519 -N PLAINkeygen1 -f k", "ssh-keygen -t ed25519 -N [REDACTED] -f k"},
		{"vault login -token PLAINvault1", "vault login -token [REDACTED]"},
		{"sshpass -p 'a b' ssh -p 2222 host", "sshpass -p '[REDACTED]' ssh -p 2222 host"},
		{"htpasswd -b -C 10 f bob PLAINhtp1; echo done", "htpasswd -b -C 10 f bob [REDACTED]; echo done"},
		{"mysql -p'x' -u root | sshpass -p pw2x ssh h", "mysql -p'[REDACTED]' -u root | sshpass -p [REDACTED] ssh h"},
		// Inside JSON text, an audit record's command field.
		{`{"command":"sshpass -p \"a b\" ssh host"}`, `{"command":"sshpass -p \"[REDACTED]\" ssh host"}`},
		{`{"command":"mysql -pPLAIN22abc -u root"}`, `{"command":"mysql -p[REDACTED] -u root"}`},
		// Look-alikes: the same letters meaning something else.
		{"mysql -p -u root db", "mysql -p -u root db"},
		{"mysql -p db", "mysql -p db"},
		{"docker run -p 8080:80 nginx", "docker run -p 8080:80 nginx"},
		{"ssh -p 2222 host", "ssh -p 2222 host"},
		{"scp -P 2222 f host:", "scp -P 2222 f host:"},
		{"redis-cli -p 6380 ping", "redis-cli -p 6380 ping"},
		{"curl -u bob https://x", "curl -u bob https://x"},
		{"htpasswd -D /etc/htpasswd bob", "htpasswd -D /etc/htpasswd bob"},
		{"grep -w pattern file", "grep -w pattern file"},
		{"unzip -p a.zip f", "unzip -p a.zip f"},
		{"cd /tmp; mkdir -p build", "cd /tmp; mkdir -p build"},
		{"mysql -u root; ls -pdir", "mysql -u root; ls -pdir"},
	}
	r := Default()
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := r.String(tt.in); got != tt.want {
				t.Errorf("String(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestRedactPasswordPhrases: "password X" in netrc text and in free text
// is masked; prose about passwords is kept.
func TestRedactPasswordPhrases(t *testing.T) {
	tests := []struct{ in, want string }{
		{"machine github.com login u password PLAINnetrc43", "machine github.com login u password [REDACTED]"},
		{"machine h\n  login bob\n  password hunter", "machine h\n  login bob\n  password [REDACTED]"},
		{"default login anonymous password guest", "default login anonymous password [REDACTED]"},
		{"the password Xy7#kq!z works", "the password [REDACTED] works"},
		{"PASSWORD s3cret99", "PASSWORD [REDACTED]"},
		{"passwd: PLAINpw1", "passwd: [REDACTED]"},
		{"passphrase 'open sesame 7'", "passphrase '[REDACTED]'"},
		// Prose is kept.
		{"send a password reset link", "send a password reset link"},
		{"Password Reset requested", "Password Reset requested"},
		{"the password is required", "the password is required"},
		{"enter your password (optional)", "enter your password (optional)"},
		{"password-protected file", "password-protected file"},
		{"password for bob expired", "password for bob expired"},
		{"run passwd bob42 to change it", "run passwd bob42 to change it"},
		{"password 1", "password 1"},
	}
	r := Default()
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := r.String(tt.in); got != tt.want {
				t.Errorf("String(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestSecretNameConfusables: a name spelt with look-alike letters
// (Cyrillic, Greek, full-width) or with invisible characters is judged as
// the name it imitates.
func TestSecretNameConfusables(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"p\u0430ssword", true},             // Cyrillic a
		{"\u0440assword", true},             // Cyrillic er
		{"t\u043Eken", true},                // Cyrillic o
		{"s\u0435cr\u0435t", true},          // Cyrillic ie
		{"\u03A1ASSWORD", true},             // Greek Rho
		{"api_k\u0435y", true},              // Cyrillic ie
		{"ＰＡＳＳＷＯＲＤ", true},                  // full-width
		{"pass\u200bword", true},            // zero-width space
		{"GITHUB_T\u041EKEN", true},         // Cyrillic O
		{"t\u043Eken_count", false},         // still a count
		{"max_t\u043Ekens", false},          // still a limit
		{"\u043A\u043B\u044E\u0447", false}, // a Russian word
		{"p\u0430ss", false},
	}
	for _, tt := range tests {
		if got := SecretName(tt.name); got != tt.want {
			t.Errorf("SecretName(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
	if got, want := Default().String(`{"pаssword": "PLAINCYR19abc"} tоken=PLAINtok2`), `{"pаssword": "[REDACTED]"} tоken=[REDACTED]`; got != want {
		t.Errorf("String: got %q, want %q", got, want)
	}
	got, _ := json.Marshal(Default().Value(decode(t, `{"p\u0430ssword":"PLAINCYR19abc","n\u0430me":"bob"}`), ""))
	if want := `{"nаme":"bob","pаssword":"[REDACTED]"}`; string(got) != want {
		t.Errorf("Value: got %s, want %s", got, want)
	}
}

// TestRedactPluralSecretNames: a plural secret word (tokens, api_keys)
// holding an object or an array is masked whole; under the same words a
// number, a count, stays visible.
func TestRedactPluralSecretNames(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"tokens":{"a":"PLAINTOKS39abc"}}`, `{"tokens":"[REDACTED]"}`},
		{`{"tokens":["t1","t2"]}`, `{"tokens":"[REDACTED]"}`},
		{`{"access_tokens":[{"id":1}],"api_keys":{"prod":"k"},"AccessKeys":["k"]}`, `{"AccessKeys":"[REDACTED]","access_tokens":"[REDACTED]","api_keys":"[REDACTED]"}`},
		{`{"max_tokens":4096,"token_count":12,"tokens_used":300,"tokens":1200,"input_tokens":"57"}`, `{"input_tokens":"57","max_tokens":4096,"token_count":12,"tokens":1200,"tokens_used":300}`},
		{`{"usage":{"output_tokens":9,"cache_tokens":null}}`, `{"usage":{"cache_tokens":null,"output_tokens":9}}`},
		{`{"keys":["sort","id"],"primary_keys":["id"],"tokenizers":["bpe"]}`, `{"keys":["sort","id"],"primary_keys":["id"],"tokenizers":["bpe"]}`},
	}
	r := Default()
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := json.Marshal(r.Value(decode(t, tt.in), ""))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("Value(%s)\n got %s\nwant %s", tt.in, got, tt.want)
			}
		})
	}
}
