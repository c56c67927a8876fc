// Package redact masks secrets in text, in JSON-like values and in log
// records, so that no token an agent typed reaches a log, an audit record,
// a deny reason or an error message.
package redact

import (
	"fmt"
	"regexp"
	"sync"
)

// Mask replaces whatever a redaction rule matched.
const Mask = "[REDACTED]"

// builtinPatterns are secret shapes masked everywhere text leaves the
// process: audit records, logs and deny reasons. Each keeps its
// non-secret prefix (a header name, a key name) so a reader still sees
// what was there.
var builtinPatterns = []string{
	// Authorization headers and bearer tokens.
	`(?i)(authorization\s*[:=]\s*["']?(?:bearer|basic|token)\s+)[A-Za-z0-9._~+/=-]{8,}`,
	`(?i)(bearer\s+)[A-Za-z0-9._~+/=-]{16,}`,
	// key=value and "key": "value" pairs whose key names a secret.
	`(?i)((?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|client[_-]?secret|auth)["']?\s*[:=]\s*["']?)[^\s"'&,;]{4,}`,
	// Cloud and SaaS keys with a recognisable shape.
	`()\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`,
	`()\bgh[pousr]_[A-Za-z0-9]{36,}\b`,
	`()\bgithub_pat_[A-Za-z0-9_]{40,}\b`,
	`()\bxox[abprs]-[A-Za-z0-9-]{10,}\b`,
	`()\bsk-(?:live|test|proj|ant)?[-_A-Za-z0-9]{16,}\b`,
	`()\bAIza[0-9A-Za-z_-]{35}\b`,
	`()\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b`, // JWT
	// Private key blocks, whole.
	`()-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)`,
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

// String masks every secret in s.
func (r *Redactor) String(s string) string {
	for _, re := range builtinRules() {
		if !re.MatchString(s) {
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

// Value returns a copy of v (decoded JSON) with masked and dropped paths
// applied and every string redacted. path is v's dotted path ("" at the
// root).
func (r *Redactor) Value(v any, path string) any {
	switch v := v.(type) {
	case string:
		return r.String(v)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			p := k
			if path != "" {
				p = path + "." + k
			}
			switch {
			case r.drop[p]:
			case r.mask[p]:
				out[k] = Mask
			default:
				out[k] = r.Value(x, p)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = r.Value(x, path)
		}
		return out
	}
	return v
}
