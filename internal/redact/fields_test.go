package redact

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ahp-opa/ahp-opa/internal/secretscan"
)

// decode parses a JSON document for Value.
func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}

// TestRedactValueByFieldName: recorded input is masked by the names of
// its fields, at any depth, whatever the value looks like; fields whose
// names only resemble a secret's are kept as they are.
func TestRedactValueByFieldName(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"password",
			`{"password":"correct horse battery staple","user":"bob"}`,
			`{"password":"[REDACTED]","user":"bob"}`},
		{"env map of an MCP server",
			`{"env":{"AWS_SECRET_ACCESS_KEY":"wJalrXUtnFEMI/K7MDENG","AWS_REGION":"eu-west-1","GITHUB_TOKEN":"t0k3n","PATH":"/bin"}}`,
			`{"env":{"AWS_REGION":"eu-west-1","AWS_SECRET_ACCESS_KEY":"[REDACTED]","GITHUB_TOKEN":"[REDACTED]","PATH":"/bin"}}`},
		{"env array of NAME=value",
			`{"env":["AWS_SECRET_ACCESS_KEY=wJalr XUtn","DB_PASSWORD=pw","HOME=/root","EMPTY_TOKEN="]}`,
			`{"env":["AWS_SECRET_ACCESS_KEY=[REDACTED]","DB_PASSWORD=[REDACTED]","HOME=/root","EMPTY_TOKEN="]}`},
		{"HTTP header map",
			`{"headers":{"Authorization":"Bearer abc","Cookie":"sid=1; theme=dark","X-Api-Key":"k1","Proxy-Authorization":"Basic dTpw","Accept":"*/*","Set-Cookie":["a=1","b=2"]}}`,
			`{"headers":{"Accept":"*/*","Authorization":"[REDACTED]","Cookie":"[REDACTED]","Proxy-Authorization":"[REDACTED]","Set-Cookie":"[REDACTED]","X-Api-Key":"[REDACTED]"}}`},
		{"camel case and kebab case",
			`{"clientSecret":"cs","apiKey":"ak","AWSSecretAccessKey":"sk","x-auth-token":"t","privateKey":"pk","refreshToken":"rt"}`,
			`{"AWSSecretAccessKey":"[REDACTED]","apiKey":"[REDACTED]","clientSecret":"[REDACTED]","privateKey":"[REDACTED]","refreshToken":"[REDACTED]","x-auth-token":"[REDACTED]"}`},
		{"compound and upper case names",
			`{"APIKEY":"a","authtoken":"b","dbpassword":"c","MYSQL_PWD":"d","smtp_pass":"e","STRIPE_KEY":"f","basic_auth":"u:p"}`,
			`{"APIKEY":"[REDACTED]","MYSQL_PWD":"[REDACTED]","STRIPE_KEY":"[REDACTED]","authtoken":"[REDACTED]","basic_auth":"[REDACTED]","dbpassword":"[REDACTED]","smtp_pass":"[REDACTED]"}`},
		{"a credentials object, whole",
			`{"credentials":{"username":"bob","id":7},"tokens":[{"token":"t1"},{"token":"t2","token_type":"Bearer"}]}`,
			`{"credentials":"[REDACTED]","tokens":"[REDACTED]"}`},
		{"numbers and nested arrays under a secret name",
			`{"pin_password":123456,"secrets":["a","b"]}`,
			`{"pin_password":"[REDACTED]","secrets":"[REDACTED]"}`},
		{"unset values stay",
			`{"password":"","token":null,"cookie":false}`,
			`{"cookie":false,"password":"","token":null}`},
		// A secret's name may sit beside it rather than above it: a
		// name/value object (Kubernetes env, header lists), a flag and
		// its value in argv, a [name, value] pair.
		{"name and value objects",
			`{"env":[{"name":"DB_PASSWORD","value":"pw1"},{"name":"HOME","value":"/root"}],"headers":[{"Name":"Authorization","Value":"Basic dTpw"}],"kv":{"key":"password","value":"pw2"},"field":{"name":"token_count","value":3}}`,
			`{"env":[{"name":"DB_PASSWORD","value":"[REDACTED]"},{"name":"HOME","value":"/root"}],"field":{"name":"token_count","value":3},"headers":[{"Name":"Authorization","Value":"[REDACTED]"}],"kv":{"key":"password","value":"[REDACTED]"}}`},
		{"a flag and its value in argv",
			`{"args":["--user","bob","--password","pw1","-token","t1","--password-file","/run/pw","--api-key",""]}`,
			`{"args":["--user","bob","--password","[REDACTED]","-token","[REDACTED]","--password-file","/run/pw","--api-key",""]}`},
		{"name and value pairs",
			`{"headers":[["X-Api-Key","k1"],["Accept","*/*"],["Authorization","Basic dTpw"]]}`,
			`{"headers":[["X-Api-Key","[REDACTED]"],["Accept","*/*"],["Authorization","[REDACTED]"]]}`},
		{"plural passwords and odd case",
			`{"passwords":["a"],"passphrases":["b"],"pAsSwOrD":"c","PassWord":"d","ApiKey":"e"}`,
			`{"ApiKey":"[REDACTED]","PassWord":"[REDACTED]","pAsSwOrD":"[REDACTED]","passphrases":"[REDACTED]","passwords":"[REDACTED]"}`},
		{"look-alikes are kept",
			`{"token_count":12,"max_tokens":4096,"keyboard":"us","primary_key":"id","sort_key":"ts","key":"k","secret_name":"prod/db","session_id":"s1","tokenizer":"bpe","PWD":"/repo","password_policy":"strong","author":"me","private_key_id":"k1","PUBLIC_KEY":"ssh-ed25519 AAAA","passwordless":true,"pass":true}`,
			`{"PUBLIC_KEY":"ssh-ed25519 AAAA","PWD":"/repo","author":"me","key":"k","keyboard":"us","max_tokens":4096,"pass":true,"password_policy":"strong","passwordless":true,"primary_key":"id","private_key_id":"k1","secret_name":"prod/db","session_id":"s1","sort_key":"ts","token_count":12,"tokenizer":"bpe"}`},
	}
	r := Default()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
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

// TestRedactStringByFieldName: text that quotes fields (JSON, a Go map, a
// Rego value in a trace, env assignments, headers, flags, query strings)
// is masked by the same names.
func TestRedactStringByFieldName(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"JSON text", `{"password": "correct horse", "env": {"AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI"}}`,
			`{"password": "[REDACTED]", "env": {"AWS_SECRET_ACCESS_KEY": "[REDACTED]"}}`},
		{"JSON inside a string", `"{\"password\":\"correct horse\",\"user\":\"bob\"}"`, `"{\"password\":\"[REDACTED]\",\"user\":\"bob\"}"`},
		{"escaped quote inside a value", `{"token": "ab\"cd", "n": 1}`, `{"token": "[REDACTED]", "n": 1}`},
		{"Go map", `map[password:hunter22 user:bob]`, `map[password:[REDACTED] user:bob]`},
		{"env assignments", "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI OPENAI_API_KEY='abc def' make deploy",
			"AWS_SECRET_ACCESS_KEY=[REDACTED] OPENAI_API_KEY='[REDACTED]' make deploy"},
		{"curl headers", `curl -H "Authorization: Bearer abc.def" -H 'Cookie: sid=1; csrf=2' -H "X-Api-Key: k123" https://x`,
			`curl -H "Authorization: Bearer [REDACTED]" -H 'Cookie: [REDACTED]' -H "X-Api-Key: [REDACTED]" https://x`},
		{"header lines", "Authorization: Basic dXNlcjpwYXNz\nAccept: */*\nCookie: a=1; b=2\n",
			"Authorization: Basic [REDACTED]\nAccept: */*\nCookie: [REDACTED]\n"},
		{"flags", "mysql --password=hunter22 --user root; vault login --token s.abcdEFGH --method=token",
			"mysql --password=[REDACTED] --user root; vault login --token [REDACTED] --method=token"},
		{"query string", "GET /cb?code=1&access_token=ya29.abcd&state=x", "GET /cb?code=1&access_token=[REDACTED]&state=x"},
		{"YAML", "db:\n  password: s3cr3t!\n  port: 5432\n", "db:\n  password: [REDACTED]\n  port: 5432\n"},
		{"look-alikes", `{"max_tokens": 4096, "token_count": 12, "keyboard": "us"} CREATE TABLE t (id int PRIMARY KEY); primary_key=True`,
			`{"max_tokens": 4096, "token_count": 12, "keyboard": "us"} CREATE TABLE t (id int PRIMARY KEY); primary_key=True`},
		{"prose", "token: a; read the password policy", "token: a; read the password policy"},
	}
	r := Default()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.String(tt.in); got != tt.want {
				t.Errorf("String(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestRedactPrivateKeyBlock: a private key is masked from its header to
// its END line, or to the end of a text that cuts it short.
func TestRedactPrivateKeyBlock(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"whole block", "a\n-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----\nb", "a\n[REDACTED]\nb"},
		{"PGP block", "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF\n-----END PGP PRIVATE KEY BLOCK-----", "[REDACTED]"},
		{"cut short", "x -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNz", "x [REDACTED]"},
		{"another END first", "-----BEGIN RSA PRIVATE KEY-----\nAAA\n-----END CERTIFICATE-----\nBBB\n-----END RSA PRIVATE KEY----- ok", "[REDACTED] ok"},
		{"two blocks", "-----BEGIN PRIVATE KEY-----\nA\n-----END PRIVATE KEY-----|-----BEGIN PRIVATE KEY-----\nB\n-----END PRIVATE KEY-----", "[REDACTED]|[REDACTED]"},
	}
	for _, tt := range tests {
		if got := Default().String(tt.in); got != tt.want {
			t.Errorf("%s: String(%q)\n got %q\nwant %q", tt.name, tt.in, got, tt.want)
		}
	}
}

// TestCatalogueMaskedAndDetected: detection and masking use one catalogue.
// Every shape secretscan detects, in every context it may stand in, is
// masked, and nothing of it is left.
func TestCatalogueMaskedAndDetected(t *testing.T) {
	contexts := []string{"%s", "echo %s | tool", `{"value": "%s"}`, "x=%s\n", "url https://h/?k=%s&z"}
	shapes := secretscan.Shapes()
	if len(shapes) < len(secretscan.Kinds) {
		t.Fatalf("the catalogue has %d shapes for %d kinds", len(shapes), len(secretscan.Kinds))
	}
	for _, sh := range shapes {
		for _, c := range contexts {
			text := strings.Replace(c, "%s", sh.Example, 1)
			found := false
			for _, f := range secretscan.Scan(text, 0) {
				found = found || f.Kind == sh.Kind && text[f.Offset:f.Offset+f.Length] == sh.Example
			}
			if !found {
				t.Errorf("%s: not detected in %q", sh.Kind, text)
			}
			got := Default().String(text)
			if strings.Contains(got, sh.Example) || !strings.Contains(got, Mask) {
				t.Errorf("%s: not masked: %q -> %q", sh.Kind, text, got)
			}
			if fs := secretscan.Scan(got, 0); len(fs) > 0 {
				t.Errorf("%s: the masked text still holds %v: %q", sh.Kind, fs, got)
			}
		}
	}
}

// TestRedactOnceUnmaskedShapes: the tokens the scanner found and redaction
// used to leave in clear, by name.
func TestRedactOnceUnmaskedShapes(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"GitLab", "git remote add o https://gitlab.com/x.git # glpat-Zq7Rk2Wm9Tv4Jp6Ys3Ln", "git remote add o https://gitlab.com/x.git # [REDACTED]"},
		{"npm", "echo //registry.npmjs.org/:_authToken=npm_Zq7Rk2Wm9Tv4Jp6Ys3Ln8Hc5Gd0FbZq7Rk2 > .npmrc", "echo //registry.npmjs.org/:_authToken=[REDACTED] > .npmrc"},
		{"Stripe restricted", "stripe --api rk_live_Zq7Rk2Wm9Tv4Jp6Ys3Ln8Hc5 charges", "stripe --api [REDACTED] charges"},
		{"AWS ABIA", "id ABIAZR7WJYLH2345ZRTW in use", "id [REDACTED] in use"},
	}
	for _, tt := range tests {
		if got := Default().String(tt.in); got != tt.want {
			t.Errorf("%s: String(%q)\n got %q\nwant %q", tt.name, tt.in, got, tt.want)
		}
	}
}

// FuzzRedact: masking never panics, and what it leaves holds no shape of
// the catalogue and no value of a secret-named JSON field.
func FuzzRedact(f *testing.F) {
	f.Add(`{"password": "a\"b", "n": 1}`)
	f.Add("Authorization: Bearer abcdefghijklmnopqrstuvwxyz\n-----BEGIN RSA PRIVATE KEY-----\nabc")
	f.Add("--token x --password=yyyyy AWS_SECRET_ACCESS_KEY=zzzz glpat-Zq7Rk2Wm9Tv4Jp6Ys3Ln")
	f.Add(`{"p\u0430ssword":"x1","tokens":{"a":"b"},"max_tokens":5}`)
	f.Add("mysql -p'a b' -u r; curl -u u:pw x | sshpass -p \"q w\" ssh; htpasswd -bc f u p")
	f.Add("machine h login u password hunter2\npassword 'x y'")
	for _, sh := range secretscan.Shapes() {
		f.Add("k=" + sh.Example + " tail")
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Default().String(s)
		for _, fd := range secretscan.Scan(got, 0) {
			t.Fatalf("masked text still holds a %s at %d: %q -> %q", fd.Kind, fd.Offset, s, got)
		}
		var v any
		if json.Unmarshal([]byte(s), &v) == nil {
			masked, _ := json.Marshal(Default().Value(v, ""))
			var back any
			if err := json.Unmarshal(masked, &back); err != nil {
				t.Fatalf("masked value is not JSON: %v", err)
			}
			checkNoSecretField(t, back)
		}
	})
}

// checkNoSecretField fails when a secret-named field of v still holds a
// non-empty string, a number or a structure, or a plural secret name
// (tokens, api_keys) still holds a structure.
func checkNoSecretField(t *testing.T, v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if SecretName(k) && holdsSecret(x) && x != Mask {
				t.Fatalf("field %q kept %v", k, x)
			}
			if PluralSecretName(k) && structured(x) {
				t.Fatalf("plural secret field %q kept %v", k, x)
			}
			checkNoSecretField(t, x)
		}
	case []any:
		for _, x := range v {
			checkNoSecretField(t, x)
		}
	}
}

func TestSecretName(t *testing.T) {
	secret := []string{
		"password", "PASSWORD", "db_password", "userPassword", "passwd", "passphrase", "MYSQL_PWD", "smtp_pass",
		"secret", "client_secret", "clientSecret", "secrets", "token", "access_token", "GITHUB_TOKEN", "X-Auth-Token",
		"authtoken", "credentials", "credential", "cookie", "Set-Cookie", "authorization", "Proxy-Authorization",
		"auth", "basic_auth", "api_key", "apiKey", "APIKEY", "x-api-key", "private_key", "privateKey",
		"AWS_SECRET_ACCESS_KEY", "AWSSecretAccessKey", "GITLAB_PAT", "passwords", "passphrases", "pAsSwOrD", "PassWord", "sEcReT", "aws_access_key", "STRIPE_KEY", "SIGNING_KEY", "spring.datasource.password",
	}
	plain := []string{
		"", "pw", "key", "Key", "keyboard", "monkey", "primary_key", "sort_key", "cache_key", "PUBLIC_KEY", "publicKey",
		"token_count", "max_tokens", "tokens", "tokenizer", "token_type", "password_policy", "passwordless", "secret_name",
		"secretName", "private_key_id", "session_id", "PWD", "pass", "bypass", "author", "oauth", "authority", "cookie_consent",
	}
	for _, n := range secret {
		if !SecretName(n) {
			t.Errorf("SecretName(%q) = false, want true", n)
		}
	}
	for _, n := range plain {
		if SecretName(n) {
			t.Errorf("SecretName(%q) = true, want false", n)
		}
	}
}
