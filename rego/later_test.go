package rego_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/ahp-opa/ahp-opa/internal/testkit"
	"github.com/ahp-opa/ahp-opa/transport"
	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// minWrittenInvariance is the share of corpus commands whose verdict must
// not change when the command is written to a file and then run in the
// same call, or written where it runs later.
const minWrittenInvariance = 0.98

// writtenForms are the ways of writing a command and running it: each
// must get the verdict the command gets typed. quote is the command as a
// single-quoted shell word.
var writtenForms = []struct {
	name string
	form func(cmd string) string
}{
	{"heredoc-script", func(cmd string) string { return "cat > run.sh <<'EOF'\n" + cmd + "\nEOF\nbash run.sh" }},
	{"echo-script", func(cmd string) string { return "echo " + shQuote(cmd) + " > run.sh && sh run.sh" }},
	{"printf-makefile", func(cmd string) string {
		return `printf 'all:\n\t%s\n' ` + shQuote(strings.ReplaceAll(cmd, "$", "$$")) + " > Makefile && make"
	}},
}

func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestWrittenThenRunInvariance: the same act gets the same verdict typed
// or written to a file and run (metamorphic: every one-line shell case of
// the corpus, through each written form). Reported per form; a broken
// equivalence is a gap in the analysis of written text.
func TestWrittenThenRunInvariance(t *testing.T) {
	cases := readCorpus(t)
	e := builtinEngine(t)
	denied := func(cmd string) bool {
		ev, err := transport.EventOfMap(map[string]any{
			"id": "w", "type": "tool.before",
			"session": map[string]any{"id": "w", "cwd": "/home/dev/repo", "workspaceRoots": []any{"/home/dev/repo"}},
			"tool":    map[string]any{"name": "Bash", "input": map[string]any{"command": cmd}},
		})
		if err != nil {
			t.Fatal(err)
		}
		v := e.Judge(context.Background(), &transport.InterceptRequest{Event: ev, Effects: []string{ahp.EffectDeny}})
		return v.Err == nil && len(v.Decision.Matches) > 0
	}
	step := 8
	if testkit.Exhaustive() {
		step = 1
	}
	type count struct{ same, all int }
	perForm := map[string]*count{}
	var broken []string
	n := 0
	for _, c := range cases {
		cmd, ok := c.Input["command"].(string)
		if c.Tool != "Bash" || !ok || len(c.Files) > 0 || strings.ContainsAny(cmd, "\n\\") || strings.Contains(cmd, "EOF") {
			continue
		}
		if n++; n%step != 0 {
			continue
		}
		typed := denied(cmd)
		for _, f := range writtenForms {
			k := perForm[f.name]
			if k == nil {
				k = &count{}
				perForm[f.name] = k
			}
			k.all++
			if denied(f.form(cmd)) == typed {
				k.same++
			} else if typed {
				broken = append(broken, fmt.Sprintf("%s: %s: denied typed, allowed written (%s)", f.name, c.where(), cmd))
			} else {
				broken = append(broken, fmt.Sprintf("%s: %s: allowed typed, denied written (%s)", f.name, c.where(), cmd))
			}
		}
	}
	names := make([]string, 0, len(perForm))
	for name := range perForm {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		k := perForm[name]
		r := float64(k.same) / float64(k.all)
		t.Logf("written then run, %s: %d/%d same verdict (%.1f%%)", name, k.same, k.all, 100*r)
		if r < minWrittenInvariance {
			t.Errorf("%s: invariance %.1f%% is below %.0f%%", name, 100*r, 100*minWrittenInvariance)
		}
	}
	for _, b := range broken {
		t.Log("broken: " + b)
	}
}
