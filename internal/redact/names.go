package redact

import (
	"strings"
	"unicode"
)

// SecretName reports whether a field, variable, header or flag named name
// holds a secret: its last word is password, passwd, passphrase, secret,
// token, credential(s), cookie, authorization or auth (db_password,
// clientSecret, X-Auth-Token, GITHUB_TOKEN, set-cookie, basic_auth); it is
// an API, access, private or other secret key (api_key, x-api-key,
// privateKey, SIGNING_KEY); an environment-style name ending in _KEY
// (AWS_SECRET_ACCESS_KEY, STRIPE_KEY); or a compound such as apikey,
// authtoken or dbpassword. Words are split at _, -, ., spaces and camel
// case, and compared without case.
//
// Names that only mention a secret are not secrets: the last word decides,
// so token_count, max_tokens, password_policy, secret_name, private_key_id
// and session_id hold none, and neither do a bare key, primary_key or
// sort_key, or keyboard and tokenizer.
//
// A name spelt with look-alike letters or invisible characters is judged
// as the name it imitates (foldName).
func SecretName(name string) bool {
	if len(name) > maxNameBytes {
		return false
	}
	name = foldName(name)
	if len(name) < 3 || len(name) > 128 || !mentionsSecret(name) {
		return false
	}
	// One word in any case: pAsSwOrD splits into pieces no word list
	// knows, yet names the same field.
	if secretWords[strings.ToLower(name)] {
		return true
	}
	words := splitWords(name)
	if len(words) == 0 {
		return false
	}
	last := words[len(words)-1]
	if secretWords[last] {
		return true
	}
	switch last {
	case "pwd", "pass", "pat": // PWD alone is the working directory, pass alone a verdict
		return len(words) > 1
	case "key":
		if len(words) == 1 {
			return false
		}
		if keyOwners[words[len(words)-2]] {
			return true
		}
		// An environment variable named *_KEY holds one, unless it says
		// the key is public.
		return envStyle(name) && words[len(words)-2] != "public" && words[len(words)-2] != "publishable"
	}
	for _, suffix := range []string{"token", "password", "passwd", "secret"} {
		if len(last) > len(suffix)+1 && strings.HasSuffix(last, suffix) {
			return true // authtoken, dbpassword, clientsecret
		}
	}
	return false
}

// PluralSecretName reports whether name is the plural of a secret word
// that SecretName leaves to the value: tokens, access_tokens, api_keys,
// AccessKeys. Under such a name a structure (an object or an array) holds
// secrets and is masked whole, while a number or a text is a count or a
// limit (max_tokens, tokens_used, input_tokens) and stays.
func PluralSecretName(name string) bool {
	if len(name) > maxNameBytes {
		return false
	}
	name = foldName(name)
	if len(name) < 4 || len(name) > 128 {
		return false
	}
	words := splitWords(name)
	if len(words) == 0 {
		return false
	}
	last := words[len(words)-1]
	switch {
	case last == "tokens" || len(last) > len("tokens")+1 && strings.HasSuffix(last, "tokens"):
		return true // tokens, authtokens
	case last == "keys":
		return len(words) > 1 && keyOwners[words[len(words)-2]]
	case last == "apikeys" || last == "accesskeys" || last == "privatekeys" || last == "secretkeys":
		return true
	}
	return false
}

// maxNameBytes bounds the names folded before they are judged: a name
// of 128 characters, each up to four bytes.
const maxNameBytes = 4 * 128

// secretWords are the words that, last in a name, make it a secret's.
var secretWords = map[string]bool{
	"password": true, "passwords": true, "passwd": true, "passphrase": true, "passphrases": true,
	"secret": true, "secrets": true, "token": true, "credential": true, "credentials": true,
	"cookie": true, "cookies": true, "authorization": true, "auth": true,
	"apikey": true, "privatekey": true, "accesskey": true, "secretkey": true,
}

// secretMarkers are the lower-case texts one of which every secret name
// holds.
var secretMarkers = []string{"pass", "pwd", "secret", "token", "cred", "cookie", "auth", "key", "pat"}

// mentionsSecret reports whether name holds one of secretMarkers, without
// regard to case: most names do not, and are rejected before they are
// split into words.
func mentionsSecret(name string) bool {
	var buf [128]byte
	lower := buf[:len(name)]
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	l := string(lower)
	for _, m := range secretMarkers {
		if strings.Contains(l, m) {
			return true
		}
	}
	return false
}

// keyOwners are the words that make the key after them a secret one.
var keyOwners = map[string]bool{
	"api": true, "access": true, "secret": true, "private": true, "signing": true, "encryption": true,
	"decryption": true, "master": true, "client": true, "ssh": true, "auth": true, "license": true,
	"service": true, "account": true, "app": true, "deploy": true, "session": true, "webhook": true,
	"hmac": true, "jwt": true, "shared": true, "root": true, "admin": true, "subscription": true,
	"storage": true, "gpg": true, "pgp": true, "consumer": true,
}

// envStyle reports an environment-style name: upper case, digits and
// underscores, with at least one underscore.
func envStyle(name string) bool {
	under := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_':
			under = true
		case c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		default:
			return false
		}
	}
	return under
}

// splitWords splits a name into lower-case words at separators and camel
// case boundaries: "AWSSecretAccessKey" and "aws_secret_access_key" both
// give aws, secret, access, key.
func splitWords(name string) []string {
	var words []string
	rs := []rune(name)
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			words = append(words, strings.ToLower(string(rs[start:end])))
		}
		start = -1
	}
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush(i)
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		prev := rs[i-1]
		// fooBar | FOOBar: a word ends before an upper-case letter that
		// follows a lower-case one, or that starts a lower-case run after
		// upper-case ones.
		if unicode.IsUpper(r) && (unicode.IsLower(prev) || unicode.IsDigit(prev)) ||
			unicode.IsUpper(r) && unicode.IsUpper(prev) && i+1 < len(rs) && unicode.IsLower(rs[i+1]) {
			flush(i)
			start = i
		}
	}
	flush(len(rs))
	return words
}

// headerName reports names whose value runs to the end of the line, as an
// HTTP header's does: "Authorization: Bearer abc", "Cookie: a=1; b=2".
func headerName(name string) bool {
	switch strings.ToLower(name) {
	case "authorization", "proxy-authorization", "cookie", "set-cookie":
		return true
	}
	return false
}

// authScheme returns the length of the authentication scheme and space
// that start an Authorization value ("Bearer "), kept visible.
func authScheme(v string) int {
	word, _, ok := strings.Cut(v, " ")
	if !ok {
		return 0
	}
	switch strings.ToLower(word) {
	case "bearer", "basic", "token", "digest", "negotiate", "aws4-hmac-sha256":
		return len(word) + 1
	}
	return 0
}

// isNameByte reports the bytes a field, variable or flag name is made of.
func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}

// minPairValue is the shortest unquoted value maskPairs masks: "token: a"
// in prose is no secret.
const minPairValue = 4

// Pair is the value of a secret-named field, variable or flag in a text:
// its name, and the byte span of the value (s[Start:End]).
type Pair struct {
	Name       string
	Start, End int
}

// SecretPairs returns the values of name/value pairs in text whose name
// is a secret one (SecretName): NAME=value, name: value, "name": "value",
// 'name': 'value', map[name:value], --name=value, --name value and
// -name value. A quoted value runs to its closing quote, a header's
// (Authorization, Cookie) to the end of its line, any other up to the
// next space, quote or one of &,;)]}. The policy's outbound scan and the
// log redaction read the same pairs.
func SecretPairs(s string) []Pair {
	var out []Pair
	for i := 0; i < len(s); i++ {
		c := s[i]
		var vstart int
		var name string
		switch {
		case c == '=' || c == ':':
			name = nameBefore(s, i)
			if name == "" {
				continue
			}
			vstart = i + 1
		case c == '-' && (i == 0 || s[i-1] == ' ' || s[i-1] == '"' || s[i-1] == '\''):
			// --name value or -name value: a flag followed by a space and
			// its value (-token t is a Go-style long flag).
			k := i + 1
			if k < len(s) && s[k] == '-' {
				k++
			}
			j := k
			for j < len(s) && isNameByte(s[j]) {
				j++
			}
			if j == k || j >= len(s) || s[j] != ' ' || j+1 < len(s) && s[j+1] == '-' {
				continue
			}
			name, vstart = s[k:j], j
		default:
			continue
		}
		if !SecretName(name) {
			continue
		}
		header := headerName(name)
		start, end := valueSpan(s, vstart, header)
		if header {
			start += authScheme(s[start:end])
		}
		if end <= start {
			continue
		}
		out = append(out, Pair{Name: name, Start: start, End: end})
		i = end - 1
	}
	return out
}

// maskPairs masks the values of the secret pairs of s (SecretPairs).
func maskPairs(s string) string {
	var b strings.Builder
	last := 0 // s[last:] is not yet written to b
	for _, p := range SecretPairs(s) {
		if strings.HasPrefix(s[p.Start:p.End], Mask) {
			continue
		}
		b.WriteString(s[last:p.Start])
		b.WriteString(Mask)
		last = p.End
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// nameBefore returns the name that ends just before the separator at
// s[i]: letters, digits, _, - and ., possibly in quotes, possibly followed
// by spaces. Leading dashes (--password=) are not part of it.
func nameBefore(s string, i int) string {
	j := i
	for j > 0 && s[j-1] == ' ' {
		j--
	}
	if j > 0 && (s[j-1] == '"' || s[j-1] == '\'') {
		j--
		if j > 0 && s[j-1] == '\\' { // JSON quoted inside a string: \"name\":
			j--
		}
	}
	k := j
	// Bytes of non-ASCII letters are taken too: a name spelt with
	// look-alikes (pаssword) is folded and judged by SecretName.
	for k > 0 && (isNameByte(s[k-1]) || s[k-1] >= 0x80) && j-k < 130 {
		k--
	}
	return strings.TrimLeft(s[k:j], "-.")
}

// valueSpan returns the span of the value that starts at s[i], after any
// spaces (and one opening quote, not part of the span).
func valueSpan(s string, i int, header bool) (start, end int) {
	for i < len(s) && s[i] == ' ' {
		i++
	}
	if strings.HasPrefix(s[i:], `\"`) { // JSON quoted inside a string: \"value\"
		end := strings.Index(s[i+2:], `\"`)
		if end < 0 {
			return i + 2, len(s)
		}
		return i + 2, i + 2 + end
	}
	if i < len(s) && (s[i] == '"' || s[i] == '\'') {
		q := s[i]
		i++
		j := i
		for j < len(s) && s[j] != q && (!header || s[j] != '\n') {
			if s[j] == '\\' && q == '"' && j+1 < len(s) {
				j++ // an escaped quote does not end the value
			}
			j++
		}
		return i, min(j, len(s))
	}
	j := i
	if header {
		for j < len(s) && s[j] != '\n' && s[j] != '\r' && s[j] != '"' && s[j] != '\'' {
			j++
		}
		return i, j
	}
	if i < len(s) && (s[i] == '{' || s[i] == '[') {
		return i, i // a structure: its own fields are looked at one by one
	}
	for j < len(s) && !strings.ContainsRune(" \t\r\n\"'&,;)]}<>`", rune(s[j])) {
		j++
	}
	if j-i < minPairValue {
		return i, i
	}
	return i, j
}
