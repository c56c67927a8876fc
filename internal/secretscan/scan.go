// Package secretscan finds the shapes of secrets (private key blocks and
// live tokens) in text in one cheap pass, and reports where they are and
// what kind they are, never the secret itself.
//
// Every shape starts with a literal (`-----BEGIN `, `AKIA`, `ghp_`, `xox`,
// `sk-`, …), so the scan looks for those literals with strings.Index,
// which runs at memory speed, and checks the shape only where one occurs.
// The shapes are exactly those of the regular expressions the built-in
// library used before (kept in the tests as the oracle), so moving the
// scan from Rego to Go neither loses nor adds a detection.
package secretscan

import (
	"sort"
	"strings"
)

// Kinds of secret, as reported in Finding.Kind.
const (
	PrivateKey   = "private-key"        // -----BEGIN … PRIVATE KEY-----
	AWSAccessKey = "aws-access-key"     // AKIA…, ASIA…, ABIA…, ACCA…
	GitHubToken  = "github-token"       // ghp_, gho_, ghu_, ghs_, ghr_
	GitHubPAT    = "github-pat"         // github_pat_
	GitLabToken  = "gitlab-token"       // glpat-
	SlackToken   = "slack-token"        // xoxa-, xoxb-, xoxp-, xoxr-, xoxs-
	StripeKey    = "stripe-key"         // sk_live_, rk_live_
	AnthropicKey = "anthropic-key"      // sk-ant-
	OpenAIKey    = "openai-key"         // sk-, sk-proj-
	GoogleAPIKey = "google-api-key"     // AIza
	NPMToken     = "npm-token"          // npm_
	SendGridKey  = "sendgrid-key"       // SG.
	HFToken      = "huggingface-token"  // hf_
	PyPIToken    = "pypi-token"         // pypi-AgEIcHlwaS5vcmc
	DOToken      = "digitalocean-token" // dop_v1_
	VaultToken   = "vault-token"        // hvs.
)

// Kinds lists every kind the scanner reports.
var Kinds = []string{
	PrivateKey, AWSAccessKey, GitHubToken, GitHubPAT, GitLabToken, SlackToken,
	StripeKey, AnthropicKey, OpenAIKey, GoogleAPIKey, NPMToken,
	SendGridKey, HFToken, PyPIToken, DOToken, VaultToken,
}

// Finding is one secret shape in a text. It says where the shape is, never
// what it holds.
type Finding struct {
	Kind   string
	Offset int // byte offset of the first byte of the shape
	Length int // bytes of the shape
	Line   int // 1-based line of Offset
	// Placeholder is set for documented stand-ins: a shape holding
	// "EXAMPLE", a run of eight or more x, "..." or <…>.
	Placeholder bool
}

// shape is one secret shape: the literal it starts with and the function
// that measures the shape starting at a given offset (0: no match).
type shape struct {
	kind    string
	literal string
	// wordStart: the shape begins with a word character and must not
	// follow one (the \b of the regular expression).
	wordStart bool
	// lead is the number of bytes of the shape before its literal.
	lead  int
	match func(s string, i int) int
}

// shapes are the catalogue of secret shapes: what Scan detects here and
// what package redact masks in every text that leaves the process. They
// are searched one literal at a time; a kind may have several literals
// (AWS prefixes), each searched on its own.
var shapes = []shape{
	{PrivateKey, "-----BEGIN ", false, 0, matchPrivateKey},
	{AWSAccessKey, "AKIA", true, 0, matchAWS},
	{AWSAccessKey, "ASIA", true, 0, matchAWS},
	{AWSAccessKey, "ABIA", true, 0, matchAWS},
	{AWSAccessKey, "ACCA", true, 0, matchAWS},
	{GitHubToken, "gh", true, 0, matchGitHubToken},
	{GitHubPAT, "github_pat_", true, 0, runMatcher(len("github_pat_"), classWordChars, 50, false)},
	{GitLabToken, "glpat-", true, 0, runMatcher(len("glpat-"), classToken, 20, false)},
	{SlackToken, "xox", true, 0, matchSlack},
	{StripeKey, "k_live_", false, 1, matchStripe},
	{AnthropicKey, "sk-ant-", true, 0, runMatcher(len("sk-ant-"), classToken, 30, false)},
	{OpenAIKey, "sk-", true, 0, matchOpenAI},
	{GoogleAPIKey, "AIza", true, 0, runMatcher(len("AIza"), classToken, 35, true)},
	{NPMToken, "npm_", true, 0, runMatcher(len("npm_"), classAlnum, 36, true)},
	{SendGridKey, "SG.", true, 0, matchSendGrid},
	{HFToken, "hf_", true, 0, runMatcher(len("hf_"), classAlpha, 34, true)},
	{PyPIToken, "pypi-AgEIcHlwaS5vcmc", true, 0, runMatcher(len("pypi-AgEIcHlwaS5vcmc"), classToken, 50, false)},
	{DOToken, "dop_v1_", true, 0, runMatcher(len("dop_v1_"), classHex, 64, true)},
	{VaultToken, "hvs.", true, 0, runMatcher(len("hvs."), classToken, 24, false)},
}

// examples are made-up, well-formed instances of the shapes, by literal
// (kept apart from shapes, which the scan's loop reads).
var examples = map[string]string{
	"-----BEGIN ":          "-----BEGIN RSA PRIVATE KEY-----",
	"AKIA":                 example("AKIA", classBase32, 16),
	"ASIA":                 example("ASIA", classBase32, 16),
	"ABIA":                 example("ABIA", classBase32, 16),
	"ACCA":                 example("ACCA", classBase32, 16),
	"gh":                   example("ghs_", classAlnum, 36),
	"github_pat_":          example("github_pat_", classWordChars, 82),
	"glpat-":               example("glpat-", classToken, 20),
	"xox":                  example("xoxb-", classSlack, 24),
	"k_live_":              example("rk_live_", classAlnum, 24),
	"sk-ant-":              example("sk-ant-api03-", classToken, 24),
	"sk-":                  example("sk-proj-", classToken, 48),
	"AIza":                 example("AIza", classToken, 35),
	"npm_":                 example("npm_", classAlnum, 36),
	"SG.":                  example("SG.", classToken, 22) + example(".", classToken, 43),
	"hf_":                  example("hf_", classAlpha, 34),
	"pypi-AgEIcHlwaS5vcmc": example("pypi-AgEIcHlwaS5vcmc", classToken, 60),
	"dop_v1_":              example("dop_v1_", classHex, 64),
	"hvs.":                 example("hvs.", classToken, 90),
}

// Shape is one entry of the catalogue of secret shapes.
type Shape struct {
	Kind    string
	Literal string // the text every instance holds, which the scan looks for first
	Example string // a made-up, well-formed instance
}

// Shapes returns the catalogue of secret shapes, one entry per literal
// searched.
func Shapes() []Shape {
	out := make([]Shape, len(shapes))
	for i, sh := range shapes {
		out[i] = Shape{Kind: sh.kind, Literal: sh.literal, Example: examples[sh.literal]}
	}
	return out
}

// example returns prefix and n characters of class in: the body of a
// made-up instance, with no run of x and no EXAMPLE, so it is no
// placeholder.
func example(prefix string, in class, n int) string {
	const pool = "Zq7Rk2Wm9Tv4Jp6Ys3Ln8Hc5Gd0Fb-_"
	b := []byte(prefix)
	for i := 0; len(b) < len(prefix)+n; i++ {
		if c := pool[i%len(pool)]; in(c) {
			b = append(b, c)
		}
	}
	return string(b)
}

// Scan returns the secret shapes in s, ordered by offset (placeholders
// after real shapes when limit cuts the list). At most limit findings are
// returned; limit <= 0 means no limit. Real shapes are kept before
// placeholders, so a file full of stand-ins cannot hide a live token past
// the limit.
func Scan(s string, limit int) []Finding {
	var real, stand []Finding
	for k := range shapes {
		sh := &shapes[k]
		next := 0 // matches of one kind do not overlap, as with regexp's FindAll
		for from := 0; from < len(s); {
			j := strings.Index(s[from:], sh.literal)
			if j < 0 {
				break
			}
			i := from + j
			from = i + 1
			start := i - sh.lead
			if start < next || (sh.wordStart && i > 0 && isWord(s[i-1])) {
				continue
			}
			n := sh.match(s, i)
			if n == 0 {
				continue
			}
			n += sh.lead
			f := Finding{Kind: sh.kind, Offset: start, Length: n, Placeholder: placeholder(s[start : start+n])}
			next = start + n
			from = next
			if f.Placeholder {
				if limit <= 0 || len(stand) < limit {
					stand = append(stand, f)
				}
			} else if limit <= 0 || len(real) < limit {
				real = append(real, f)
			}
		}
	}
	out := append(real, stand...)
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Offset < out[b].Offset })
	lineAt(s, out)
	return out
}

// lineAt fills the Line of findings sorted by offset, counting newlines
// once over the text.
func lineAt(s string, fs []Finding) {
	line, pos := 1, 0
	for i := range fs {
		line += strings.Count(s[pos:fs[i].Offset], "\n")
		pos = fs[i].Offset
		fs[i].Line = line
	}
}

// Placeholder reports whether a secret's text is a documented stand-in:
// it holds EXAMPLE, "...", a <…> or a run of eight x.
func Placeholder(m string) bool { return placeholder(m) }

// placeholder reports whether a shape is a documented stand-in.
func placeholder(m string) bool {
	if strings.Contains(m, "EXAMPLE") || strings.Contains(m, "...") {
		return true
	}
	if lt := strings.IndexByte(m, '<'); lt >= 0 && strings.IndexByte(m[lt:], '>') >= 0 {
		return true
	}
	run := 0
	for i := 0; i < len(m); i++ {
		if m[i] == 'x' || m[i] == 'X' {
			if run++; run >= 8 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

func isWord(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// Character classes of the shapes' bodies.
type class func(byte) bool

func classAlnum(c byte) bool     { return isWord(c) && c != '_' } // [A-Za-z0-9]
func classWordChars(c byte) bool { return isWord(c) }             // [A-Za-z0-9_]
func classToken(c byte) bool     { return isWord(c) || c == '-' } // [A-Za-z0-9_-]
func classSlack(c byte) bool     { return classAlnum(c) || c == '-' }
func classBase32(c byte) bool    { return c >= 'A' && c <= 'Z' || c >= '2' && c <= '7' }
func classAlpha(c byte) bool     { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func classHex(c byte) bool       { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' }

// body measures body = class{min,} (or exactly min when exact) starting at
// s[i], followed by a word boundary, as a backtracking matcher would:
// the longest run that ends on a boundary. It returns the body's length,
// or -1 when there is none.
func body(s string, i int, in class, min int, exact bool) int {
	j := i
	for j < len(s) && in(s[j]) && (!exact || j-i < min) {
		j++
	}
	for end := j; end-i >= min; end-- {
		if boundary(s, end) {
			return end - i
		}
		if exact {
			break
		}
	}
	return -1
}

// boundary reports a word boundary (\b) before s[i].
func boundary(s string, i int) bool {
	before := i > 0 && isWord(s[i-1])
	after := i < len(s) && isWord(s[i])
	return before != after
}

// runMatcher matches a fixed prefix of length pre followed by a body.
func runMatcher(pre int, in class, min int, exact bool) func(string, int) int {
	return func(s string, i int) int {
		if n := body(s, i+pre, in, min, exact); n >= 0 {
			return pre + n
		}
		return 0
	}
}

// matchPrivateKey: -----BEGIN ((RSA|EC|DSA|OPENSSH|ENCRYPTED|PGP) )?PRIVATE KEY( BLOCK)?-----
func matchPrivateKey(s string, i int) int {
	j := i + len("-----BEGIN ")
	rest := s[j:]
	for _, algo := range []string{"RSA ", "EC ", "DSA ", "OPENSSH ", "ENCRYPTED ", "PGP "} {
		if strings.HasPrefix(rest, algo+"PRIVATE KEY") {
			j += len(algo)
			break
		}
	}
	if !strings.HasPrefix(s[j:], "PRIVATE KEY") {
		return 0
	}
	j += len("PRIVATE KEY")
	switch {
	case strings.HasPrefix(s[j:], " BLOCK-----"):
		return j + len(" BLOCK-----") - i
	case strings.HasPrefix(s[j:], "-----"):
		return j + len("-----") - i
	}
	return 0
}

// matchAWS: (AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b
func matchAWS(s string, i int) int {
	if n := body(s, i+4, classBase32, 16, true); n >= 0 {
		return 4 + n
	}
	return 0
}

// matchGitHubToken: gh[pousr]_[A-Za-z0-9]{36,}\b
func matchGitHubToken(s string, i int) int {
	if i+4 > len(s) || s[i+3] != '_' || strings.IndexByte("pousr", s[i+2]) < 0 {
		return 0
	}
	if n := body(s, i+4, classAlnum, 36, false); n >= 0 {
		return 4 + n
	}
	return 0
}

// matchSendGrid: SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b
func matchSendGrid(s string, i int) int {
	j := i + len("SG.")
	n := body(s, j, classToken, 22, true)
	if n < 0 || j+n >= len(s) || s[j+n] != '.' {
		return 0
	}
	j += n + 1
	m := body(s, j, classToken, 43, true)
	if m < 0 {
		return 0
	}
	return j + m - i
}

// matchSlack: xox[abprs]-[A-Za-z0-9-]{10,}\b
func matchSlack(s string, i int) int {
	if i+5 > len(s) || s[i+4] != '-' || strings.IndexByte("abprs", s[i+3]) < 0 {
		return 0
	}
	if n := body(s, i+5, classSlack, 10, false); n >= 0 {
		return 5 + n
	}
	return 0
}

// matchStripe: \b[sr]k_live_[A-Za-z0-9]{20,}\b, found by its "k_live_"
// (i is the offset of the k); the length returned excludes the s or r.
func matchStripe(s string, i int) int {
	if i == 0 || (s[i-1] != 's' && s[i-1] != 'r') || (i > 1 && isWord(s[i-2])) {
		return 0
	}
	if n := body(s, i+len("k_live_"), classAlnum, 20, false); n >= 0 {
		return len("k_live_") + n
	}
	return 0
}

// matchOpenAI: sk-(proj-)?[A-Za-z0-9_-]{40,}\b. The optional "proj-" is
// itself made of body characters, so it changes nothing but the minimum
// length, which the run without it already covers.
func matchOpenAI(s string, i int) int {
	if n := body(s, i+3, classToken, 40, false); n >= 0 {
		return 3 + n
	}
	return 0
}
