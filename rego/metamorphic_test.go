package rego_test

import (
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"

	"github.com/ahp-opa/ahp-opa/internal/adapters"
	"github.com/ahp-opa/ahp-opa/internal/testkit"
)

// Metamorphic tests: a command keeps its verdict whatever route carries it.
// For every shell row of the corpus that the library decides as labelled,
// each transformation below builds an equivalent call (through a wrapper,
// eval, a variable, a script, an encoding, another agent's tool shape) and
// the call must be decided the same: a denied row stays denied, and an
// allowed row stays allowed through the transformations that keep it
// harmless. A broken equivalence is a blind spot of the analysis.
//
//	go test ./rego -run TestMetamorphic -v
//
// prints the invariance per transformation and per corpus family, and lists
// the broken equivalences; the test fails below the floors.
//
// The floors sit just under what was measured when the test landed (all
// rows: 99.97 % of 15750 dangerous, 99.99 % of 40258 benign); the known
// broken ones are xargs fed a substitution (printf '%s\0' "$(curl …)" |
// xargs -0 perl -e) and Codex's bash -lc around commands its agent rules
// read differently (ssh -T, docker run -it).
const (
	minDangerInvariance = 0.995
	minBenignInvariance = 0.999
)

// transform turns a row into an equivalent call. It returns ok false when
// the route does not apply to the command (env cannot run a builtin).
type transform struct {
	name string
	// benign says the route keeps an everyday command harmless, so an
	// allowed row must stay allowed through it.
	benign bool
	apply  func(c corpusCase, cmd string) (corpusCase, bool)
}

// withCommand is c with its shell command replaced.
func withCommand(c corpusCase, cmd string) corpusCase {
	c.Input = maps.Clone(c.Input)
	c.Input["command"] = cmd
	return c
}

// shellQuote quotes s as one single-quoted shell word.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// wrapText builds a command from the row's command alone.
func wrapText(f func(cmd string) string) func(corpusCase, string) (corpusCase, bool) {
	return func(c corpusCase, cmd string) (corpusCase, bool) { return withCommand(c, f(cmd)), true }
}

// prefixSimple puts a runner before a simple command: runners such as
// env, timeout and nice run one program, not a list or a builtin.
func prefixSimple(runner string) func(corpusCase, string) (corpusCase, bool) {
	return func(c corpusCase, cmd string) (corpusCase, bool) {
		if _, ok := simpleCommand(cmd); !ok {
			return c, false
		}
		return withCommand(c, runner+" "+cmd), true
	}
}

// viaXargs passes the last argument of a simple command through xargs
// (printf '%s\0' ARG | xargs -0 PROG ARGS…): NUL-separated, so that an
// argument with blanks stays one.
func viaXargs(c corpusCase, cmd string) (corpusCase, bool) {
	call, ok := simpleCommand(cmd)
	if !ok || len(call.Args) < 2 {
		return c, false
	}
	last := call.Args[len(call.Args)-1]
	start, end := call.Args[0].Pos().Offset(), last.Pos().Offset()
	arg := cmd[last.Pos().Offset():last.End().Offset()]
	return withCommand(c, "printf '%s\\0' "+arg+" | xargs -0 "+strings.TrimSpace(cmd[start:end])), true
}

// shellBuiltins cannot be run by env, timeout, nice or xargs.
var shellBuiltins = map[string]bool{
	"cd": true, "export": true, "source": true, ".": true, "eval": true, "exec": true, "set": true,
	"unset": true, "alias": true, "declare": true, "typeset": true, "local": true, "read": true,
	"readonly": true, "shopt": true, "trap": true, "ulimit": true, "umask": true, "builtin": true,
	"command": true, "type": true, "hash": true, "history": true, "fc": true, "jobs": true,
	"bg": true, "fg": true, "wait": true, "disown": true, "let": true, "return": true, "exit": true,
	"shift": true, "getopts": true, "pushd": true, "popd": true, "dirs": true, "mapfile": true,
	"readarray": true, "compgen": true, "complete": true, "enable": true, "caller": true,
	"[[": true, "((": true, ":": true,
}

// simpleCommand returns the command when cmd is one program run with
// arguments (no list, pipe, assignment, redirection or builtin).
func simpleCommand(cmd string) (*syntax.CallExpr, bool) {
	f, err := syntax.NewParser().Parse(strings.NewReader(cmd), "")
	if err != nil || len(f.Stmts) != 1 {
		return nil, false
	}
	st := f.Stmts[0]
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || st.Negated || st.Background || st.Coprocess || len(st.Redirs) > 0 ||
		len(call.Assigns) > 0 || len(call.Args) == 0 {
		return nil, false
	}
	name := call.Args[0].Lit()
	if name == "" || shellBuiltins[name] || strings.Contains(name, "=") {
		return nil, false
	}
	return call, true
}

// agentShape sends the command through one agent's native shell tool.
func agentShape(agent, tool string, argv bool) func(corpusCase, string) (corpusCase, bool) {
	return func(c corpusCase, cmd string) (corpusCase, bool) {
		c = withCommand(c, cmd)
		c.Agent, c.Tool = agent, tool
		if argv {
			c.Input["command"] = []any{"bash", "-lc", cmd}
		}
		return c, true
	}
}

// The transformations. Channels another engineer adds (ssh, kubectl exec,
// docker exec, pwsh) are one row each here.
var transforms = []transform{
	{"bash -c", true, wrapText(func(cmd string) string { return "bash -c " + shellQuote(cmd) })},
	{"sh -c", true, wrapText(func(cmd string) string { return "sh -c " + shellQuote(cmd) })},
	{"env VAR=1", true, prefixSimple("env LC_ALL=C")},
	{"timeout 10", true, prefixSimple("timeout 10")},
	{"nice", true, prefixSimple("nice")},
	{"xargs", true, viaXargs},
	{"eval", true, wrapText(func(cmd string) string { return "eval " + shellQuote(cmd) })},
	{"variable + eval", true, wrapText(func(cmd string) string { return "c=" + shellQuote(cmd) + `; eval "$c"` })},
	{"claude Bash", true, agentShape(adapters.ClaudeCode, "Bash", false)},
	{"gemini run_shell_command", true, agentShape(adapters.GeminiCLI, "run_shell_command", false)},
	{"codex shell argv", true, agentShape(adapters.Codex, "shell", true)},
	{"copilot bash", true, agentShape(adapters.Copilot, "bash", false)},
	{"cursor run_terminal_cmd", true, agentShape(adapters.Cursor, "run_terminal_cmd", false)},
	// A script written to /tmp then run, and a decoded pipe to sh, are
	// suspicious in themselves: only the dangerous rows must keep their
	// verdict.
	{"script file", false, wrapText(func(cmd string) string {
		return "printf '%s\\n' " + shellQuote(cmd) + " > /tmp/x.sh && sh /tmp/x.sh"
	})},
	{"base64 | sh", false, wrapText(func(cmd string) string {
		return "echo " + base64.StdEncoding.EncodeToString([]byte(cmd)) + " | base64 -d | sh"
	})},
}

// invariance counts kept and broken equivalences.
type invariance struct{ kept, broken int }

func (v *invariance) add(ok bool) {
	if ok {
		v.kept++
	} else {
		v.broken++
	}
}

func (v invariance) String() string {
	n := v.kept + v.broken
	if n == 0 {
		return "     -"
	}
	return fmt.Sprintf("%5.1f%% of %d", 100*float64(v.kept)/float64(n), n)
}

func (v invariance) rate() float64 {
	if v.kept+v.broken == 0 {
		return 1
	}
	return float64(v.kept) / float64(v.kept+v.broken)
}

func TestMetamorphic(t *testing.T) {
	cases := readCorpus(t)
	e := builtinEngine(t)
	denied := func(c corpusCase) bool {
		t.Helper()
		return len(c.judge(t, e).Matches) > 0
	}

	// The quick run transforms every 8th shell row; AHP_LONG_TESTS=1 all.
	step := 8
	if testkit.Exhaustive() {
		step = 1
	}
	var shellRows []corpusCase
	for _, c := range cases {
		cmd, ok := c.Input["command"].(string)
		if c.Tool != "Bash" || c.Agent != "" || !ok || cmd == "" || c.Why != "" {
			continue
		}
		shellRows = append(shellRows, c)
	}
	if step > 1 {
		t.Logf("transforming every %dth of %d shell rows; %s=1 without -race transforms them all", step, len(shellRows), testkit.EnvLong)
	}

	danger, benign := map[string]*invariance{}, map[string]*invariance{}
	byFamily := map[string]*invariance{}
	var dangerTotal, benignTotal invariance
	var broken []string
	skipped := 0
	for i, c := range shellRows {
		if i%step != 0 {
			continue
		}
		cmd := c.Input["command"].(string)
		dangerous := c.Expect == "deny"
		if denied(c) != dangerous {
			skipped++ // the corpus test reports the row itself
			continue
		}
		for _, tr := range transforms {
			if !dangerous && !tr.benign {
				continue
			}
			tc, ok := tr.apply(c, cmd)
			if !ok {
				continue
			}
			kept := denied(tc) == dangerous
			table, total := benign, &benignTotal
			if dangerous {
				table, total = danger, &dangerTotal
			}
			if table[tr.name] == nil {
				table[tr.name] = &invariance{}
			}
			table[tr.name].add(kept)
			total.add(kept)
			fam := c.Family
			if byFamily[fam] == nil {
				byFamily[fam] = &invariance{}
			}
			byFamily[fam].add(kept)
			if !kept {
				want := "allowed"
				if dangerous {
					want = "denied"
				}
				broken = append(broken, fmt.Sprintf("%s [%s] not %s: %s", c.where(), tr.name, want, clip(fmt.Sprint(tc.Input["command"]))))
			}
		}
	}

	var b strings.Builder
	fmt.Fprintf(&b, "\n%-26s %-16s %-16s\n", "transformation", "dangerous kept", "benign kept")
	for _, tr := range transforms {
		d, bn := invariance{}, invariance{}
		if v := danger[tr.name]; v != nil {
			d = *v
		}
		if v := benign[tr.name]; v != nil {
			bn = *v
		}
		fmt.Fprintf(&b, "%-26s %-16s %-16s\n", tr.name, d, bn)
	}
	fmt.Fprintf(&b, "%-26s %-16s %-16s\n", "all", dangerTotal, benignTotal)
	t.Log("metamorphic invariance per transformation:" + b.String())
	b.Reset()
	b.WriteString("\n")
	for _, fam := range slices.Sorted(maps.Keys(byFamily)) {
		fmt.Fprintf(&b, "%-34s %s\n", fam, byFamily[fam])
	}
	t.Log("metamorphic invariance per corpus family:" + b.String())
	if skipped > 0 {
		t.Logf("%d rows the library does not decide as labelled were not transformed", skipped)
	}
	for _, s := range broken {
		t.Log("broken equivalence: " + s)
	}

	if dangerTotal.kept == 0 || benignTotal.kept == 0 {
		t.Fatal("no transformed dangerous or benign rows")
	}
	if r := dangerTotal.rate(); r < minDangerInvariance {
		t.Errorf("dangerous rows keep their deny through %.1f%% of routes, below %.0f%% (broken ones listed above)", 100*r, 100*minDangerInvariance)
	}
	if r := benignTotal.rate(); r < minBenignInvariance {
		t.Errorf("benign rows stay allowed through %.1f%% of routes, below %.0f%% (broken ones listed above)", 100*r, 100*minBenignInvariance)
	}
}

// clip shortens a command for the list of broken equivalences.
func clip(s string) string {
	if len(s) > 160 {
		return s[:160] + "…"
	}
	return s
}
