package secretscan

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// oracle holds the regular expressions the built-in library ran in Rego
// before the scan moved to Go (secrets.rego, _secret_patterns), by kind.
// The scanner must find exactly what they find.
var oracle = map[string]*regexp.Regexp{
	PrivateKey:   regexp.MustCompile(`-----BEGIN ((RSA|EC|DSA|OPENSSH|ENCRYPTED|PGP) )?PRIVATE KEY( BLOCK)?-----`),
	AWSAccessKey: regexp.MustCompile(`\b(AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b`),
	GitHubToken:  regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{36,}\b`),
	GitHubPAT:    regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{50,}\b`),
	GitLabToken:  regexp.MustCompile(`\bglpat-[A-Za-z0-9_-]{20,}\b`),
	SlackToken:   regexp.MustCompile(`\bxox[abprs]-[A-Za-z0-9-]{10,}\b`),
	StripeKey:    regexp.MustCompile(`\b[sr]k_live_[A-Za-z0-9]{20,}\b`),
	AnthropicKey: regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_-]{30,}\b`),
	OpenAIKey:    regexp.MustCompile(`\bsk-(proj-)?[A-Za-z0-9_-]{40,}\b`),
	GoogleAPIKey: regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}\b`),
	NPMToken:     regexp.MustCompile(`\bnpm_[A-Za-z0-9]{36}\b`),
	SendGridKey:  regexp.MustCompile(`\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b`),
	HFToken:      regexp.MustCompile(`\bhf_[A-Za-z]{34}\b`),
	PyPIToken:    regexp.MustCompile(`\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}\b`),
	DOToken:      regexp.MustCompile(`\bdop_v1_[0-9a-f]{64}\b`),
	VaultToken:   regexp.MustCompile(`\bhvs\.[A-Za-z0-9_-]{24,}\b`),
}

// oraclePlaceholder is the library's former test for stand-ins.
var oraclePlaceholder = regexp.MustCompile(`(?i)x{8,}|\.{3}|<.*>`)

// oracleFindings returns what the regular expressions find in s, in the
// scanner's form.
func oracleFindings(s string) []Finding {
	var out []Finding
	for _, kind := range Kinds {
		for _, loc := range oracle[kind].FindAllStringIndex(s, -1) {
			m := s[loc[0]:loc[1]]
			out = append(out, Finding{
				Kind:        kind,
				Offset:      loc[0],
				Length:      loc[1] - loc[0],
				Line:        strings.Count(s[:loc[0]], "\n") + 1,
				Placeholder: strings.Contains(m, "EXAMPLE") || oraclePlaceholder.MatchString(m),
			})
		}
	}
	sortFindings(out)
	return out
}

func sortFindings(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		if a.Offset != b.Offset {
			return a.Offset - b.Offset
		}
		return strings.Compare(a.Kind, b.Kind)
	})
}

// checkAgainstOracle fails unless Scan(s) finds exactly what the
// regular expressions find.
func checkAgainstOracle(t *testing.T, s string) {
	t.Helper()
	got := Scan(s, 0)
	sortFindings(got)
	want := oracleFindings(s)
	if !slices.Equal(got, want) {
		t.Errorf("Scan(%.200q):\n got %v\nwant %v", s, got, want)
	}
}

// Tokens of every shape, fake but well-formed.
const (
	ghp     = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	aws     = "AKIAQWERTYUIOPASDFGH"
	pemHead = "-----BEGIN OPENSSH PRIVATE KEY-----"
)

func TestScanShapes(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string // kinds, by offset
	}{
		{"empty", "", nil},
		{"prose", "nothing to see here; sk- and gh are words", nil},
		{"private key rsa", "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----", []string{PrivateKey}},
		{"private key bare", "-----BEGIN PRIVATE KEY-----", []string{PrivateKey}},
		{"private key ec", "-----BEGIN EC PRIVATE KEY-----", []string{PrivateKey}},
		{"private key dsa", "-----BEGIN DSA PRIVATE KEY-----", []string{PrivateKey}},
		{"private key openssh", pemHead, []string{PrivateKey}},
		{"private key encrypted", "-----BEGIN ENCRYPTED PRIVATE KEY-----", []string{PrivateKey}},
		{"private key pgp block", "-----BEGIN PGP PRIVATE KEY BLOCK-----", []string{PrivateKey}},
		{"public key", "-----BEGIN PUBLIC KEY-----", nil},
		{"certificate", "-----BEGIN CERTIFICATE-----", nil},
		{"unknown algorithm", "-----BEGIN FOO PRIVATE KEY-----", nil},
		{"aws akia", "key=" + aws, []string{AWSAccessKey}},
		{"aws asia", "ASIAQWERTYUIOPASDFGH", []string{AWSAccessKey}},
		{"aws abia", "ABIAQWERTYUIOPASDFGH", []string{AWSAccessKey}},
		{"aws acca", "ACCAQWERTYUIOPASDFGH", []string{AWSAccessKey}},
		{"aws too long", aws + "Q", nil},
		{"aws glued", "X" + aws, nil},
		{"aws example", "AKIAIOSFODNN7EXAMPLE", []string{AWSAccessKey}},
		{"github ghp", ghp, []string{GitHubToken}},
		{"github gho", "gho_" + strings.Repeat("a", 36), []string{GitHubToken}},
		{"github ghu", "ghu_" + strings.Repeat("B", 40), []string{GitHubToken}},
		{"github ghs", "ghs_" + strings.Repeat("7", 36), []string{GitHubToken}},
		{"github ghr", "ghr_" + strings.Repeat("z", 36), []string{GitHubToken}},
		{"github short", "ghp_" + strings.Repeat("a", 35), nil},
		{"github underscore tail", "ghp_" + strings.Repeat("a", 36) + "_", nil},
		{"github pat", "github_pat_" + strings.Repeat("A1_", 20), []string{GitHubPAT}},
		{"gitlab", "glpat-" + strings.Repeat("a-", 12), []string{GitLabToken}},
		{"slack xoxb", "xoxb-1234567890-abcdefghij", []string{SlackToken}},
		{"slack xoxa", "xoxa-1234567890", []string{SlackToken}},
		{"slack xoxp", "xoxp-1234567890", []string{SlackToken}},
		{"slack xoxr", "xoxr-1234567890", []string{SlackToken}},
		{"slack xoxs", "xoxs-1234567890", []string{SlackToken}},
		{"slack xoxq", "xoxq-1234567890", nil},
		{"stripe sk", "sk_live_" + strings.Repeat("a", 24), []string{StripeKey}},
		{"stripe rk", "rk_live_" + strings.Repeat("a", 24), []string{StripeKey}},
		{"stripe glued", "ask_live_" + strings.Repeat("a", 24), nil},
		{"anthropic and openai", "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789", []string{AnthropicKey, OpenAIKey}},
		{"openai", "sk-" + strings.Repeat("a", 48), []string{OpenAIKey}},
		{"openai proj", "sk-proj-" + strings.Repeat("a", 40), []string{OpenAIKey}},
		{"openai dash tail", "sk-" + strings.Repeat("a", 40) + "-", []string{OpenAIKey}},
		{"google", "AIza" + strings.Repeat("b", 35), []string{GoogleAPIKey}},
		{"google too long", "AIza" + strings.Repeat("b", 36), nil},
		{"npm", "npm_" + strings.Repeat("c", 36), []string{NPMToken}},
		{"npm too long", "npm_" + strings.Repeat("c", 37), nil},
		{"sendgrid", "SG." + strings.Repeat("a", 22) + "." + strings.Repeat("b-", 21) + "c", []string{SendGridKey}},
		{"sendgrid short", "SG." + strings.Repeat("a", 21) + "." + strings.Repeat("b", 43), nil},
		{"sendgrid prose", "SG.Jones wrote it", nil},
		{"huggingface", "hf_" + strings.Repeat("aB", 17), []string{HFToken}},
		{"huggingface digits", "hf_" + strings.Repeat("a1", 17), nil},
		{"pypi", "pypi-AgEIcHlwaS5vcmc" + strings.Repeat("x1_", 20), []string{PyPIToken}},
		{"digitalocean", "dop_v1_" + strings.Repeat("0af9", 16), []string{DOToken}},
		{"digitalocean upper", "dop_v1_" + strings.Repeat("0AF9", 16), nil},
		{"vault", "hvs." + strings.Repeat("CAES", 8), []string{VaultToken}},
		{"vault short", "hvs.abc", nil},
		{"two of a kind", aws + " " + aws, []string{AWSAccessKey, AWSAccessKey}},
		{"placeholder", "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", []string{GitHubToken}},
		{"not ascii boundary", "é" + aws, []string{AWSAccessKey}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var kinds []string
			for _, f := range Scan(tt.text, 0) {
				kinds = append(kinds, f.Kind)
			}
			if !slices.Equal(kinds, tt.want) {
				t.Errorf("kinds %v, want %v", kinds, tt.want)
			}
			checkAgainstOracle(t, tt.text)
		})
	}
}

func TestScanPlaceholders(t *testing.T) {
	for _, s := range []string{
		"AKIAIOSFODNN7EXAMPLE",
		"ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
		"sk-XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
	} {
		fs := Scan(s, 0)
		if len(fs) != 1 || !fs[0].Placeholder {
			t.Errorf("Scan(%q) = %v, want one placeholder", s, fs)
		}
	}
	if fs := Scan(aws, 0); len(fs) != 1 || fs[0].Placeholder {
		t.Errorf("a live key is not a placeholder: %v", fs)
	}
}

// TestScanLargeContent: a shape is found wherever it sits in a large text,
// and its position is exact.
func TestScanLargeContent(t *testing.T) {
	const line = "func f() { return x + y } // a line of code\n"
	filler := strings.Repeat(line, (4<<20)/len(line)+1) // just over 4 MiB
	tests := []struct {
		name   string
		text   string
		offset int
		line   int
	}{
		{"at the very end of 4 MB", filler + aws, len(filler), strings.Count(filler, "\n") + 1},
		{"at the very start", aws + "\n" + filler, 0, 1},
		{"on the last line, no newline after", filler + "token = '" + ghp + "'", len(filler) + len("token = '"), strings.Count(filler, "\n") + 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := Scan(tt.text, 0)
			if len(fs) != 1 || fs[0].Offset != tt.offset || fs[0].Line != tt.line {
				t.Fatalf("got %v, want one finding at offset %d line %d", fs, tt.offset, tt.line)
			}
			if f := fs[0]; oracle[f.Kind].FindString(tt.text[f.Offset:f.Offset+f.Length]) != tt.text[f.Offset:f.Offset+f.Length] {
				t.Errorf("the finding's bytes are not a %s", f.Kind)
			}
		})
	}
}

// TestScanAcrossFirstAndLastLine: a secret spread over the whole text
// (a private key block whose header is the first line and whose footer is
// the last), and secrets on the first and on the last line of the same
// text, are all found.
func TestScanAcrossFirstAndLastLine(t *testing.T) {
	middle := strings.Repeat("b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n", 1000)
	block := pemHead + "\n" + middle + "-----END OPENSSH PRIVATE KEY-----"
	fs := Scan(block, 0)
	if len(fs) != 1 || fs[0].Kind != PrivateKey || fs[0].Offset != 0 || fs[0].Line != 1 {
		t.Errorf("key block spanning the text: %v", fs)
	}
	both := ghp + "\n" + strings.Repeat("plain text\n", 10000) + "export KEY=" + aws
	fs = Scan(both, 0)
	if len(fs) != 2 || fs[0].Line != 1 || fs[1].Line != 10002 || fs[1].Offset+fs[1].Length != len(both) {
		t.Errorf("first and last line: %v", fs)
	}
	crlf := strings.ReplaceAll(both, "\n", "\r\n")
	if fs := Scan(crlf, 0); len(fs) != 2 {
		t.Errorf("CRLF text: %v", fs)
	}
}

// TestScanLimitKeepsRealSecrets: stand-ins beyond the limit cannot push a
// live token out of the findings.
func TestScanLimitKeepsRealSecrets(t *testing.T) {
	text := strings.Repeat("ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n", 100) + aws
	fs := Scan(text, 8)
	if len(fs) != 8 {
		t.Fatalf("got %d findings, want the limit 8", len(fs))
	}
	if !slices.ContainsFunc(fs, func(f Finding) bool { return !f.Placeholder && f.Kind == AWSAccessKey }) {
		t.Errorf("the live key was cut: %v", fs)
	}
}

// TestScanMatchesOracleOnMixedText compares the scanner with the regular
// expressions on random texts made of shape fragments, separators and
// near misses, where boundaries and overlaps are most likely to go wrong.
func TestScanMatchesOracleOnMixedText(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 3000; i++ {
		checkAgainstOracle(t, randomText(r))
		if t.Failed() {
			return
		}
	}
}

var fragments = []string{
	"-----BEGIN ", "RSA ", "PGP ", "PRIVATE KEY", " BLOCK", "-----", "AKIA", "ASIA", "ABIA", "ACCA",
	"QWERTYUIOPASDFGH", "QWERTY234567", "gh", "ghp_", "gho_", "github_pat_", "glpat-", "xoxb-", "xox",
	"sk_live_", "rk_live_", "k_live_", "sk-ant-", "sk-", "sk-proj-", "AIza", "npm_", "EXAMPLE", "xxxxxxxx",
	"SG.", ".", "hf_", "pypi-AgEIcHlwaS5vcmc", "dop_v1_", "0af9", "hvs.", "aB",
	"...", "<", ">", "-", "_", " ", "\n", "\"", "é", "a", "Z", "9", "abcdefghij", "ABCDEFGHIJ", "0123456789",
}

func randomText(r *rand.Rand) string {
	var b strings.Builder
	for n := r.IntN(40); n > 0; n-- {
		f := fragments[r.IntN(len(fragments))]
		for k := r.IntN(3) + 1; k > 0; k-- {
			b.WriteString(f)
		}
	}
	return b.String()
}

func FuzzScan(f *testing.F) {
	for _, s := range []string{"", aws, ghp, pemHead, "sk-ant-" + strings.Repeat("a", 40), "xoxb-1234567890-abcdefghij"} {
		f.Add(s)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 20; i++ {
		f.Add(randomText(r))
	}
	f.Fuzz(func(t *testing.T, s string) {
		fs := Scan(s, 0)
		for _, x := range fs {
			if x.Offset < 0 || x.Length <= 0 || x.Offset+x.Length > len(s) {
				t.Fatalf("finding %v outside the text of %d bytes", x, len(s))
			}
			m := s[x.Offset : x.Offset+x.Length]
			loc := oracle[x.Kind].FindStringIndex(s[x.Offset:])
			if loc == nil || loc[0] != 0 || loc[1] != x.Length {
				t.Fatalf("finding %v: %q is not a %s shape", x, m, x.Kind)
			}
		}
		checkAgainstOracle(t, s)
		if limited := Scan(s, 2); len(limited) > 2 {
			t.Fatalf("limit 2 gave %d findings", len(limited))
		}
	})
}

func ExampleScan() {
	for _, f := range Scan("config:\n  key: AKIAQWERTYUIOPASDFGH\n", 0) {
		fmt.Println(f.Kind, "line", f.Line, "offset", f.Offset, "length", f.Length)
	}
	// Output: aws-access-key line 2 offset 15 length 20
}

// TestShapesExamples: every entry of the catalogue has an example, and the
// scan finds it whole, as a live secret of its kind.
func TestShapesExamples(t *testing.T) {
	for _, sh := range Shapes() {
		for _, text := range []string{sh.Example, "x = " + sh.Example + "\n", `"` + sh.Example + `"`} {
			got := Scan(text, 0)
			off := strings.Index(text, sh.Example)
			want := []Finding{{Kind: sh.Kind, Offset: off, Length: len(sh.Example), Line: 1}}
			if sh.Example == "" || !slices.Equal(got, want) {
				t.Errorf("%s %q: Scan(%q) = %v, want %v", sh.Kind, sh.Literal, text, got, want)
			}
		}
		if !strings.Contains(sh.Example, sh.Literal) {
			t.Errorf("%s: example %q lacks the literal %q", sh.Kind, sh.Example, sh.Literal)
		}
	}
}
