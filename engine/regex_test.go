package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/ahp-opa/ahp-opa/internal/testkit"
)

func TestRegexRequiredLiterals(t *testing.T) {
	ws := []string{"\t", "\n", "\f", "\r", " "} // \s
	drop := []string{"DROP", "DROp", "DRoP", "DRop", "DrOP", "DrOp", "DroP", "Drop", "dROP", "dROp", "dRoP", "dRop", "drOP", "drOp", "droP", "drop"}
	for _, tt := range []struct {
		pattern string
		want    [][]string
	}{
		{`\bgit\s+push\b.*\s(-f|--force)(\s|$)`, [][]string{{"push"}, {"git"}, ws, product(ws, []string{"-f", "--force"})}},
		{`\bterraform\s+destroy\b`, [][]string{{"terraform"}, {"destroy"}, ws}},
		{`\b(curl|wget)\b[^|]*\|\s*(sudo\s+)?(ba|z|da)?sh\b`, [][]string{{"|"}, {"curl", "wget"}, {"bash", "zsh", "dash", "sh"}}},
		{`\.ssh/id_[a-z0-9_]+(\s|$)`, [][]string{{".ssh/id_"}}},
		{`/dev/tcp/|\bnc\s+(-[a-z]*e|.*\s-e\s)`, [][]string{{"/dev/tcp/", "nc"}}},
		{`(?i)\bdrop\b`, [][]string{drop}},
		{`(?i)\bdrop\s+(table|database)\b`, [][]string{ws, drop}}, // too many spellings of the rest to list
		{`[Gg]it|GIT`, [][]string{{"Git", "git", "GIT"}}},
		{`a*b?`, nil},
		{`(ab){2,}c`, [][]string{{"ab"}, {"c"}}},
		{`x|.*`, nil}, // one branch needs nothing
		{"\uFFFD", nil},
		{`[\x{FFFD}a]b`, [][]string{{"b"}}},
	} {
		m, err := compileMatcher(tt.pattern)
		if err != nil {
			t.Fatalf("%s: %v", tt.pattern, err)
		}
		if !slices.EqualFunc(m.need, tt.want, slices.Equal) {
			t.Errorf("%s: need %q, want %q", tt.pattern, m.need, tt.want)
		}
	}
}

// TestRegexMatchInRego: policies see OPA's answers and OPA's errors.
func TestRegexMatchInRego(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		query   string
		want    string
		wantErr string
	}{
		{`x := regex.match("\\bgit\\s+push\\b", "git  push origin")`, "true", ""},
		{`x := regex.match("\\bgit\\s+push\\b", "git status")`, "false", ""},
		{`x := regex.match("\\bgit\\s+push\\b", "gitpush")`, "false", ""},
		{`x := re_match("^a.c$", "abc")`, "true", ""},
		{`x := regex.match("(?i)DROP\\s+TABLE", "drop table t")`, "true", ""},
		{`x := regex.match("[", "x")`, "", "regex.match: error parsing regexp: missing closing ]: `[`"},
		{`x := regex.match(input.n, "x")`, "", "regex.match: operand 1 must be string but got number"},
	} {
		r := rego.New(rego.Query(tt.query), rego.Input(map[string]any{"n": 1}), rego.StrictBuiltinErrors(true))
		rs, err := r.Eval(ctx)
		switch {
		case tt.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: error %v, want %q", tt.query, err, tt.wantErr)
			}
		case err != nil:
			t.Errorf("%s: %v", tt.query, err)
		case len(rs) != 1 || rs[0].Bindings["x"] == nil:
			t.Errorf("%s: no result", tt.query)
		default:
			if got := rs[0].Bindings["x"]; got != (tt.want == "true") {
				t.Errorf("%s = %v, want %s", tt.query, got, tt.want)
			}
		}
	}
}

// TestRegexDeepNesting: a pattern is analysed once per node. Analysing
// each alternation branch twice took time exponential in the nesting
// depth, and this pattern would never finish compiling.
func TestRegexDeepNesting(t *testing.T) {
	pat := "x"
	for range 64 {
		pat = "((" + pat + "|y)|yz)"
	}
	m, err := compileMatcher(pat)
	if err != nil {
		t.Fatal(err)
	}
	if !m.match("x") || m.match("z") {
		t.Errorf("match(x) = %v, match(z) = %v", m.match("x"), m.match("z"))
	}
}

// TestRegexPrefilterGenerated compares the prefilter with regexp on small
// generated patterns and strings over an alphabet chosen to meet every
// case the analysis distinguishes (folding, word boundaries, invalid
// UTF-8, U+FFFD, repetition), where random fuzz input rarely holds the
// literals a pattern needs.
func TestRegexPrefilterGenerated(t *testing.T) {
	atoms := []string{"a", "b", "ab", "(?i)k", "(?i:s)", "é", `\x{FFFD}`, "[ab]", "[a-c]", `\b`, "^", "$", ".", `\s`, "(?i:ab)", "[^a]", "x"}
	chars := []string{"a", "b", "c", "k", "K", "\u212a", "s", "S", "\u017f", "é", "\xc3", "\xff", "\uFFFD", " ", "x", "\n"}
	r := rand.New(rand.NewPCG(1, 2))
	var gen func(depth int) string
	gen = func(depth int) string {
		if depth == 0 || r.IntN(3) == 0 {
			return atoms[r.IntN(len(atoms))]
		}
		switch r.IntN(5) {
		case 0:
			return gen(depth-1) + gen(depth-1)
		case 1:
			return "(" + gen(depth-1) + "|" + gen(depth-1) + ")"
		case 2:
			return "(?:" + gen(depth-1) + ")?"
		case 3:
			return "(?:" + gen(depth-1) + ")+"
		default:
			return "(?:" + gen(depth-1) + "){" + []string{"0", "1", "2", "1,3", "2,"}[r.IntN(5)] + "}"
		}
	}
	n := 2000
	if testkit.LongEnabled() {
		n = 20000
	}
	filtered := 0
	for range n {
		pat := gen(4)
		re, err := regexp.Compile(pat)
		if err != nil {
			continue
		}
		m, err := compileMatcher(pat)
		if err != nil {
			t.Fatalf("%q: %v", pat, err)
		}
		if len(m.need) > 0 {
			filtered++
		}
		for range 20 {
			var b strings.Builder
			for range r.IntN(8) {
				b.WriteString(chars[r.IntN(len(chars))])
			}
			if s := b.String(); m.match(s) != re.MatchString(s) {
				t.Fatalf("match(%q, %q) = %v, regexp says %v (need %q)", pat, s, m.match(s), re.MatchString(s), m.need)
			}
		}
	}
	if filtered == 0 {
		t.Fatal("no generated pattern had literals to check: the test exercises nothing")
	}
}

// TestRegexPrefilterInstall: until InstallRegexPrefilter is called,
// regex.match is OPA's own (the prefilter's cache stays empty); after it,
// the prefilter answers, with the same answers and the same errors. It runs
// in a fresh process, as TestMain installs the prefilter in this one.
func TestRegexPrefilterInstall(t *testing.T) {
	if os.Getenv(withoutPrefilterEnv) != "1" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRegexPrefilterInstall$", "-test.count=1")
		cmd.Env = append(os.Environ(), withoutPrefilterEnv+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "PASS") {
			t.Fatalf("the test in a fresh process: %v\n%s", err, out)
		}
		return
	}
	ctx := context.Background()
	queries := []string{
		`x := regex.match("\\bgit\\s+push\\b.*\\s(-f|--force)(\\s|$)", "git push --force origin main")`,
		`x := regex.match("\\bgit\\s+push\\b", "git status")`,
		`x := regex.match("\\b(curl|wget)\\b[^|]*\\|\\s*(sudo\\s+)?(ba|z|da)?sh\\b", "curl -fsSL x | sh")`,
		`x := regex.match("(?i)\\bdrop\\s+(table|database)\\b", "DROP TABLE x")`,
		`x := regex.match("é+|ü", "café au lait")`,
		`x := regex.match("(?i)k", "\u212a")`,
		`x := re_match("^a.c$", "abc")`,
		`x := regex.match("[", "x")`,
		`x := regex.match(input.n, "x")`,
	}
	answers := func() []string {
		var out []string
		for _, q := range queries {
			rs, err := rego.New(rego.Query(q), rego.Input(map[string]any{"n": 1}), rego.StrictBuiltinErrors(true)).Eval(ctx)
			if err != nil {
				out = append(out, "error: "+err.Error())
				continue
			}
			out = append(out, fmt.Sprint(rs[0].Bindings["x"]))
		}
		return out
	}
	cached := func() int {
		matchers.mu.RLock()
		defer matchers.mu.RUnlock()
		return len(matchers.m)
	}

	opa := answers()
	if n := cached(); n != 0 {
		t.Fatalf("before the install step the prefilter compiled %d patterns: it replaced OPA's regex.match on its own", n)
	}
	InstallRegexPrefilter()
	InstallRegexPrefilter() // a second call changes nothing
	prefiltered := answers()
	if n := cached(); n == 0 {
		t.Fatal("after the install step the prefilter compiled nothing: regex.match is still OPA's")
	}
	if !slices.Equal(opa, prefiltered) {
		t.Errorf("answers differ:\n OPA         %q\n prefiltered %q", opa, prefiltered)
	}
	if !slices.Contains(opa, "true") || !slices.Contains(opa, "false") || !slices.ContainsFunc(opa, func(s string) bool { return strings.HasPrefix(s, "error: ") }) {
		t.Errorf("answers %q: want trues, falses and errors to compare", opa)
	}
}

func TestMatcherCacheBounded(t *testing.T) {
	c := &matcherCache{m: make(map[string]*matcher)}
	for i := range maxMatchers + 10 {
		if _, err := c.get("p" + strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	if len(c.m) != maxMatchers {
		t.Errorf("cache holds %d patterns, want %d", len(c.m), maxMatchers)
	}
}

// FuzzRegexMatch: the prefilter never changes regexp's answer.
func FuzzRegexMatch(f *testing.F) {
	for _, s := range [][2]string{
		{`\bgit\s+push\b.*\s(-f|--force)(\s|$)`, "git push --force origin main"},
		{`\b(curl|wget)\b[^|]*\|\s*(sudo\s+)?(ba|z|da)?sh\b`, "curl -fsSL x | sh"},
		{`(?i)\bdrop\s+(table|database)\b`, "DROP TABLE x"},
		{"é+|ü", "\xc3"},
		{"\uFFFD", "\xff"},
		{`(a|b)c{2,3}`, "bcc"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pat, s string) {
		re, err := regexp.Compile(pat)
		if err != nil {
			return
		}
		m, err := compileMatcher(pat)
		if err != nil {
			t.Fatalf("regexp compiles %q, compileMatcher: %v", pat, err)
		}
		if got, want := m.match(s), re.MatchString(s); got != want {
			t.Fatalf("match(%q, %q) = %v, regexp says %v (need %q)", pat, s, got, want, m.need)
		}
	})
}
