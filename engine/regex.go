package engine

import (
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"
	"github.com/open-policy-agent/opa/v1/topdown/builtins"
)

// regex.match with a literal prefilter.
//
// Policies for agents test many patterns against one command
// (`\bgit\s+push\b`, `\bterraform\s+destroy\b`, …), and most commands hold
// none of the words those patterns need. Go's matcher cannot skip ahead in
// a pattern that starts with \b or a group, so OPA's regex.match walks the
// whole command once per pattern: a third of the evaluation of such a
// policy. Here a pattern is compiled together with the literals every
// match must contain, and the matcher runs only when they are all in the
// string. The answer and the errors are OPA's (same compiler, same error
// texts); FuzzRegexMatch holds the answer to regexp's.

// InstallRegexPrefilter makes regex.match (and the deprecated re_match)
// use the literal prefilter, for every evaluation in the process, engines
// or not: OPA looks builtins up in one process-wide table, before any
// per-query function. Answers and errors stay OPA's; only the time
// changes. Without it, engines use OPA's own regex.match.
//
// The table has no lock, so call it at start, before any Rego evaluation
// can run (the ahp-opa command does, first thing in main). Later calls do
// nothing.
func InstallRegexPrefilter() {
	installRegex.Do(func() {
		topdown.RegisterBuiltinFunc(ast.RegexMatch.Name, builtinRegexMatch)
		topdown.RegisterBuiltinFunc(ast.RegexMatchDeprecated.Name, builtinRegexMatch)
	})
}

var installRegex sync.Once

func builtinRegexMatch(_ topdown.BuiltinContext, operands []*ast.Term, iter func(*ast.Term) error) error {
	pat, err := builtins.StringOperand(operands[0].Value, 1)
	if err != nil {
		return err
	}
	s, err := builtins.StringOperand(operands[1].Value, 2)
	if err != nil {
		return err
	}
	m, err := matchers.get(string(pat))
	if err != nil {
		return err
	}
	return iter(ast.InternedTerm(m.match(string(s))))
}

// matcher is a compiled pattern and what any string it matches contains:
// for every clause of need, one of the clause's literals.
type matcher struct {
	re   *regexp.Regexp
	need [][]string
}

func compileMatcher(pat string) (*matcher, error) {
	re, err := regexp.Compile(pat)
	if err != nil {
		return nil, err
	}
	m := &matcher{re: re}
	// regexp.Compile parses with the same flags, so this cannot fail here.
	if syn, err := syntax.Parse(pat, syntax.Perl); err == nil {
		m.need = required(syn.Simplify())
	}
	return m, nil
}

func (m *matcher) match(s string) bool {
	for _, clause := range m.need {
		if !containsAny(s, clause) {
			return false
		}
	}
	return m.re.MatchString(s)
}

func containsAny(s string, lits []string) bool {
	for _, l := range lits {
		if strings.Contains(s, l) {
			return true
		}
	}
	return false
}

// Bounds of the prefilter: a few clauses decide nearly every miss, and a
// clause with many alternatives costs more to test than it saves. maxAnyOf
// bounds the alternatives an alternation or a character class adds;
// spellings listed exactly (maxExact, e.g. the 16 of a case-folded
// four-letter word) may give a clause up to maxExact.
const (
	maxClauses = 4
	maxAnyOf   = 8
)

// required returns clauses every string matched by re satisfies (the
// string contains one literal of each clause), most selective first. It
// may return fewer clauses than could be found, never a wrong one.
func required(re *syntax.Regexp) [][]string { return clauses(analyse(re)) }

// clauses turns what analyse found into deduplicated clauses, most
// selective first, at most maxClauses.
func clauses(a facts) [][]string {
	need := slices.Clip(a.need) // appending must not write into a's array
	if c := clause(a.exact); c != nil {
		need = append(need, c)
	}
	var out [][]string
	for _, c := range need {
		if !slices.ContainsFunc(out, func(o []string) bool { return slices.Equal(o, c) }) {
			out = append(out, c)
		}
	}
	// Fewest alternatives first, then the longest literals.
	slices.SortStableFunc(out, func(a, b []string) int {
		if len(a) != len(b) {
			return len(a) - len(b)
		}
		return shortest(b) - shortest(a)
	})
	if len(out) > maxClauses {
		out = out[:maxClauses]
	}
	return out
}

// facts is what analyse knows of a node: exact, when not nil, is every
// string the node can match (few and short enough to list); need are
// clauses every match satisfies.
type facts struct {
	exact []string
	need  [][]string
}

// maxExact bounds the strings an exact set lists.
const maxExact = 16

func analyse(re *syntax.Regexp) facts {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText,
		syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return facts{exact: []string{""}}
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase == 0 {
			return facts{exact: literals(string(re.Rune))}
		}
		// A case-folded literal matches every spelling of its runes' cases.
		cur := []string{""}
		for _, r := range re.Rune {
			orbit := []string{string(r)}
			for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
				orbit = append(orbit, string(f))
			}
			if len(cur)*len(orbit) > maxExact {
				return facts{}
			}
			cur = product(cur, orbit)
		}
		return facts{exact: literals(cur...)}
	case syntax.OpCharClass:
		var set []string
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				if len(set) == maxAnyOf {
					return facts{}
				}
				set = append(set, string(r))
			}
		}
		return facts{exact: literals(set...)}
	case syntax.OpCapture:
		return analyse(re.Sub[0])
	case syntax.OpQuest:
		if a := analyse(re.Sub[0]); a.exact != nil {
			return facts{exact: union(a.exact, []string{""})}
		}
	case syntax.OpPlus:
		return atLeastOnce(analyse(re.Sub[0]))
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return atLeastOnce(analyse(re.Sub[0]))
		}
	case syntax.OpConcat:
		var f facts
		cur := []string{""} // the strings the children so far can match together
		exact := true
		for _, sub := range re.Sub {
			a := analyse(sub)
			f.need = append(f.need, a.need...)
			if a.exact != nil && len(cur)*len(a.exact) <= maxExact {
				cur = product(cur, a.exact)
				continue
			}
			exact = false
			if c := clause(cur); c != nil {
				f.need = append(f.need, c)
			}
			cur = a.exact
			if cur == nil {
				cur = []string{""}
			}
		}
		if exact {
			f.exact = cur
		} else if c := clause(cur); c != nil {
			f.need = append(f.need, c)
		}
		return f
	case syntax.OpAlternate:
		var exact, anyOf []string
		for i, sub := range re.Sub {
			a := analyse(sub)
			if exact != nil || i == 0 {
				if a.exact != nil && len(exact)+len(a.exact) <= maxExact {
					exact = union(exact, a.exact)
				} else {
					exact = nil
				}
			}
			// A match matches one branch, so it holds one literal of that
			// branch's best clause. Each branch is analysed once: nested
			// alternations would otherwise cost time exponential in depth.
			best := clauses(a)
			if anyOf != nil || i == 0 {
				if len(best) == 0 || len(anyOf)+len(best[0]) > maxAnyOf {
					anyOf = nil
				} else {
					anyOf = union(anyOf, best[0])
				}
			}
		}
		if exact != nil {
			return facts{exact: exact}
		}
		if anyOf != nil {
			return facts{need: [][]string{anyOf}}
		}
	}
	return facts{}
}

// literals returns lits as an exact set, or nil when one holds U+FFFD: in
// a pattern it also matches an invalid byte, which holds no U+FFFD.
func literals(lits ...string) []string {
	for _, l := range lits {
		if strings.ContainsRune(l, utf8.RuneError) {
			return nil
		}
	}
	return lits
}

// atLeastOnce is what a node repeated one or more times still needs.
func atLeastOnce(a facts) facts {
	need := slices.Clip(a.need)
	if c := clause(a.exact); c != nil {
		need = append(need, c)
	}
	return facts{need: need}
}

// clause turns an exact set into a clause; a set that holds "" says nothing.
func clause(exact []string) []string {
	if len(exact) == 0 || slices.Contains(exact, "") {
		return nil
	}
	return exact
}

func product(a, b []string) []string {
	out := make([]string, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			if s := x + y; !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func shortest(lits []string) int {
	n := len(lits[0])
	for _, l := range lits[1:] {
		n = min(n, len(l))
	}
	return n
}

// matcherCache holds compiled patterns; when full, it forgets an
// arbitrary one, as OPA's regex cache does, so that patterns built from
// input cannot grow it without bound.
type matcherCache struct {
	mu sync.RWMutex
	m  map[string]*matcher
}

const maxMatchers = 1024

var matchers = &matcherCache{m: make(map[string]*matcher)}

func (c *matcherCache) get(pat string) (*matcher, error) {
	c.mu.RLock()
	m, ok := c.m[pat]
	c.mu.RUnlock()
	if ok {
		return m, nil
	}
	m, err := compileMatcher(pat)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	for k := range c.m {
		if len(c.m) < maxMatchers {
			break
		}
		delete(c.m, k)
	}
	c.m[pat] = m
	c.mu.Unlock()
	return m, nil
}
