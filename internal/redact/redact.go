// Package redact masks secrets in text, in JSON-like values and in log
// records, so that no token an agent typed reaches a log, an audit record,
// a deny reason or an error message.
package redact

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/ahp-opa/ahp-opa/internal/secretscan"
)

// Mask replaces whatever a redaction rule matched.
const Mask = "[REDACTED]"

// builtinPatterns are the secrets recognised by their context rather
// than by a shape of their own, masked everywhere text leaves the process:
// audit records, logs and deny reasons. The shapes of live tokens and
// private keys are secretscan's catalogue, which the detection of secrets
// in written files uses too. Each pattern keeps its non-secret prefix (a
// header name, a scheme) so a reader still sees what was there.
var builtinPatterns = []string{
	// Bearer tokens wherever they are written.
	`(?i)(bearer\s+)[A-Za-z0-9._~+/=-]{16,}`,
	// JWTs: signed claims, often a session's bearer credential. Not in the
	// catalogue: a JWT in a written file is usually a test fixture, not a
	// reason to deny the write.
	`()\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b`,
	// Credentials in URLs: scheme://user:password@host.
	`([a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@]+:)[^/\s@]+(@)`,
}

// builtinRules are builtinPatterns compiled, group 1 kept before the mask
// and group 2 after. They are compiled on first use, once per process: a
// per_event start that redacts nothing never pays for them.
var builtinRules = sync.OnceValue(func() []*regexp.Regexp {
	res := make([]*regexp.Regexp, len(builtinPatterns))
	for i, p := range builtinPatterns {
		res[i] = regexp.MustCompile(p)
	}
	return res
})

// builtinLiterals are what a text must contain for builtinRules to match
// (case-insensitively, for the bearer rule): most text has none, and
// testing them is cheaper than running the expressions.
var builtinLiterals = [][]string{{"earer", "EARER"}, {"eyJ"}, {"://"}}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// Redactor masks secrets in text and in JSON-like values.
type Redactor struct {
	patterns []*regexp.Regexp // user patterns, masked whole
	mask     map[string]bool  // dotted paths whose values are replaced by Mask
	drop     map[string]bool  // dotted paths removed
}

// Config adds to the built-in rules.
type Config struct {
	// Patterns are extra regular expressions; what they match is masked.
	Patterns []string `koanf:"patterns"`
	// Mask lists dotted paths into the event (e.g. "tool.input.content")
	// whose values are replaced by the mask in recorded input.
	Mask []string `koanf:"mask"`
	// Drop lists dotted paths removed from recorded input.
	Drop []string `koanf:"drop"`
}

// New compiles the built-in rules plus cfg.
func New(cfg Config) (*Redactor, error) {
	r := &Redactor{mask: set(cfg.Mask), drop: set(cfg.Drop)}
	for _, p := range cfg.Patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("redaction pattern %q: %w", p, err)
		}
		r.patterns = append(r.patterns, re)
	}
	return r, nil
}

// Default returns a redactor with the built-in rules only, for the places
// that mask text before any configuration is known.
var Default = sync.OnceValue(func() *Redactor {
	r, _ := New(Config{}) // no user pattern: nothing to fail
	return r
})

func set(keys []string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// String masks every secret in s: every shape of secretscan's catalogue
// (a private key block to its END line), the values of secret-named
// fields and variables (SecretName), bearer tokens, JWTs and URL
// passwords, then what the configured patterns match.
func (r *Redactor) String(s string) string {
	s = maskShapes(s)
	s = maskPairs(s)
	s = maskCommands(s)
	s = maskPhrases(s)
	for i, re := range builtinRules() {
		if !containsAny(s, builtinLiterals[i]) || !re.MatchString(s) {
			continue
		}
		s = re.ReplaceAllStringFunc(s, func(m string) string {
			sub := re.FindStringSubmatch(m)
			out := sub[1] + Mask
			if len(sub) > 2 {
				out += sub[2]
			}
			return out
		})
	}
	for _, re := range r.patterns {
		s = re.ReplaceAllString(s, Mask)
	}
	return s
}

// maskShapes masks every secret shape secretscan finds in s, placeholders
// included; a private key's header is masked with the block it starts, up
// to its END line or, cut short, to the end of s.
func maskShapes(s string) string {
	found := secretscan.Scan(s, 0)
	if len(found) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, f := range found {
		start, end := f.Offset, f.Offset+f.Length
		if f.Kind == secretscan.PrivateKey {
			end = privateKeyEnd(s, end)
		}
		if end <= last {
			continue // inside a block already masked
		}
		if start < last {
			start = last // overlapping shapes (sk-ant- is also sk-) merge
		} else {
			b.WriteString(s[last:start])
			b.WriteString(Mask)
		}
		last = end
	}
	b.WriteString(s[last:])
	return b.String()
}

// privateKeyEnd returns the end of the private key block whose header
// ends at s[i]: after its -----END [A-Z ]*PRIVATE KEY( BLOCK)?----- line,
// or len(s) when the block is cut short.
func privateKeyEnd(s string, i int) int {
	for {
		j := strings.Index(s[i:], "-----END ")
		if j < 0 {
			return len(s)
		}
		i += j + len("-----END ")
		k := i
		for k < len(s) && (s[k] >= 'A' && s[k] <= 'Z' || s[k] == ' ') {
			k++
		}
		label := strings.TrimSuffix(s[i:k], " BLOCK")
		if strings.HasSuffix(label, "PRIVATE KEY") && strings.HasPrefix(s[k:], "-----") {
			return k + len("-----")
		}
	}
}

// Value returns a copy of v (decoded JSON) with masked and dropped paths
// applied, the whole value of every field with a secret name (SecretName:
// password, env.AWS_SECRET_ACCESS_KEY, headers.Authorization, a
// credentials object) masked, and every string redacted, an env-style
// "NAME=value" string to its end when NAME is a secret name. path is v's
// dotted path ("" at the root).
func (r *Redactor) Value(v any, path string) any {
	switch v := v.(type) {
	case string:
		if name, val, ok := strings.Cut(v, "="); ok && val != "" && envName(name) && SecretName(name) {
			return name + "=" + Mask
		}
		return r.String(v)
	case map[string]any:
		out := make(map[string]any, len(v))
		named := namesSecret(v)
		for k, x := range v {
			p := k
			if path != "" {
				p = path + "." + k
			}
			switch {
			case r.drop[p]:
			case r.mask[p], (SecretName(k) || named && valueKeys[k]) && holdsSecret(x), PluralSecretName(k) && structured(x):
				out[k] = Mask
			default:
				out[k] = r.Value(x, p)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			if i > 0 && labelsNext(v, i-1) && holdsSecret(x) {
				out[i] = Mask
				continue
			}
			out[i] = r.Value(x, path)
		}
		return out
	}
	return v
}

// nameKeys and valueKeys are the fields of an object that holds one named
// value: {"name": "DB_PASSWORD", "value": …} in a Kubernetes env list, a
// header list, a key-value store's entry.
var (
	nameKeys  = []string{"name", "Name", "key", "Key", "header", "Header"}
	valueKeys = map[string]bool{"value": true, "Value": true, "val": true}
)

// namesSecret reports whether an object is a named value whose name is a
// secret's.
func namesSecret(m map[string]any) bool {
	for _, k := range nameKeys {
		if n, ok := m[k].(string); ok && SecretName(n) {
			return true
		}
	}
	return false
}

// labelsNext reports whether element i of a list names the secret after
// it: a flag such as --password or -token in argv, or the name of a
// [name, value] pair.
func labelsNext(list []any, i int) bool {
	s, ok := list[i].(string)
	if !ok {
		return false
	}
	if flag := strings.TrimLeft(s, "-"); flag != s {
		return !strings.Contains(flag, "=") && SecretName(flag)
	}
	return len(list) == 2 && i == 0 && SecretName(s)
}

// holdsSecret reports whether a value under a secret name is worth
// masking: null, a boolean and "" hold nothing, and keeping them shows
// that the field was unset.
func holdsSecret(v any) bool {
	switch v := v.(type) {
	case nil, bool:
		return false
	case string:
		return v != ""
	}
	return true
}

// structured reports an object or an array.
func structured(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return true
	}
	return false
}

// envName reports a shell variable name: [A-Za-z_][A-Za-z0-9_]*.
func envName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
