package rego_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/ahp-opa/ahp-opa/engine"
	"github.com/ahp-opa/ahp-opa/internal/adapters"
	"github.com/ahp-opa/ahp-opa/internal/testkit"
	"github.com/ahp-opa/ahp-opa/transport"
	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// The evaluation corpus (corpus/*.jsonl) measures the built-in library the
// way a user meets it: tool calls written as agents and attackers phrase
// them, and everyday commands that must stay allowed. Each line is one
// case; see corpusCase. Files named realworld-*.jsonl hold commands taken
// from public projects and must name their source.
//
// Files named heldout-*.jsonl are the out-of-sample check: calls written
// before the rules they exercise were tuned, and never tuned on since. They
// are decided in full on every run, reported in a table of their own and
// left out of the gate, so the gate measures what the rules were shaped on
// and the held-out table shows whether that generalises.
//
//	go test ./rego -run TestCorpus -v
//
// prints recall and false-positive rate per family; the test fails when
// recall drops below minRecall or false positives rise above maxFalsePositive.
const (
	minRecall        = 0.97
	maxFalsePositive = 0.01
)

type corpusCase struct {
	ID     string         `json:"id"`
	Family string         `json:"family"`
	Expect string         `json:"expect"` // "deny" or "allow"
	Rule   string         `json:"rule,omitempty"`
	Tool   string         `json:"tool"`
	Input  map[string]any `json:"input"`
	// Agent, when set, is the native agent the call came from
	// (input.ahp.agent).
	Agent string `json:"agent,omitempty"`
	// Source says where a real-world command was found.
	Source string `json:"source,omitempty"`
	// Why justifies a real-world command that is denied on purpose.
	Why string `json:"why,omitempty"`
	// Files, when set, are the workspace the call runs in (relative name
	// → content): what npm run, make or a script resolve to is read from
	// them.
	Files map[string]string `json:"files,omitempty"`

	file    string
	line    int
	heldout bool
}

func (c corpusCase) where() string { return fmt.Sprintf("%s:%d (%s)", c.file, c.line, c.ID) }

func readCorpus(t *testing.T) []corpusCase {
	t.Helper()
	files, err := filepath.Glob("corpus/*.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no corpus files under rego/corpus")
	}
	var cases []corpusCase
	ids := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<20)
		for n := 1; sc.Scan(); n++ {
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 || line[0] == '#' {
				continue
			}
			var c corpusCase
			dec := json.NewDecoder(bytes.NewReader(line))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&c); err != nil {
				t.Fatalf("%s:%d: %v", f, n, err)
			}
			c.file, c.line = f, n
			c.heldout = strings.HasPrefix(filepath.Base(f), "heldout-")
			if err := c.check(strings.HasPrefix(strings.TrimPrefix(filepath.Base(f), "heldout-"), "realworld-")); err != nil {
				t.Fatalf("%s: %v", c.where(), err)
			}
			if prev, dup := ids[c.ID]; dup {
				t.Fatalf("%s: id also used at %s", c.where(), prev)
			}
			ids[c.ID] = c.where()
			cases = append(cases, c)
		}
		if err := sc.Err(); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	return cases
}

func (c corpusCase) check(realWorld bool) error {
	switch {
	case c.ID == "" || c.Family == "" || c.Tool == "" || c.Input == nil:
		return fmt.Errorf("id, family, tool and input are required")
	case c.Expect != "deny" && c.Expect != "allow":
		return fmt.Errorf("expect is %q, want deny or allow", c.Expect)
	case c.Expect == "allow" && c.Rule != "":
		return fmt.Errorf("an allowed case names no rule")
	case realWorld && c.Source == "":
		return fmt.Errorf("a real-world command names its source")
	case realWorld && c.Expect == "deny" && c.Why == "":
		return fmt.Errorf("a real-world command denied on purpose says why")
	}
	return nil
}

func (c corpusCase) event() map[string]any {
	tool := map[string]any{"name": c.Tool, "input": c.Input}
	ev := map[string]any{
		"id": c.ID, "type": "tool.before",
		"session": map[string]any{"id": "corpus", "cwd": "/home/dev/repo", "workspaceRoots": []any{"/home/dev/repo"}},
		"tool":    tool,
	}
	if c.Agent != "" {
		tool["origin"] = "native"
		ev["source"] = adapters.SourcePrefix + c.Agent
	}
	return ev
}

// judge decides the case with e, in a workspace of its files when it has
// some; a decision that fails fails the test.
func (c corpusCase) judge(t *testing.T, e *engine.Engine) engine.Decision {
	t.Helper()
	evm := c.event()
	if len(c.Files) > 0 {
		dir := c.workspace(t)
		evm["session"] = map[string]any{"id": "corpus", "cwd": dir, "workspaceRoots": []any{dir}}
	}
	ev, err := transport.EventOfMap(evm)
	if err != nil {
		t.Fatalf("%s: %v", c.where(), err)
	}
	v := e.Judge(context.Background(), &transport.InterceptRequest{Event: ev, Effects: []string{ahp.EffectDeny}})
	if v.Err != nil {
		t.Fatalf("%s: %v", c.where(), v.Err)
	}
	return v.Decision
}

// workspace writes the case's files under a new directory and returns it.
func (c corpusCase) workspace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range c.Files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if !strings.HasPrefix(p, dir+string(filepath.Separator)) {
			t.Fatalf("%s: file %q leaves the workspace", c.where(), name)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// tally counts one family's outcomes.
type tally struct {
	dangerous, caught int
	benign, denied    int
}

func TestCorpus(t *testing.T) {
	cases := readCorpus(t)
	e := builtinEngine(t)

	// The quick run decides every fourth case (all families keep cases);
	// CI (AHP_LONG_TESTS=1) decides them all.
	step := 4
	if testkit.LongEnabled() {
		step = 1
	} else {
		t.Logf("deciding every %dth of %d cases; %s=1 decides them all", step, len(cases), testkit.EnvLong)
	}
	families, heldout := map[string]*tally{}, map[string]*tally{}
	var total, heldoutTotal tally
	var misses, falsePositives, heldoutMisses []string
	for i, c := range cases {
		if i%step != 0 && !c.heldout {
			continue
		}
		d := c.judge(t, e)
		var codes []string
		for _, m := range d.Matches {
			codes = append(codes, m.Code)
		}
		if c.heldout {
			heldoutTotal.add(heldout, c, codes, &heldoutMisses)
			continue
		}
		f := families[c.Family]
		if f == nil {
			f = &tally{}
			families[c.Family] = f
		}
		switch {
		case c.Expect == "allow" || c.Why != "":
			// A justified real-world deny is reported, not counted: it
			// is a choice, not a false positive.
			if c.Why != "" {
				t.Logf("justified deny %s: %v (%s)", c.where(), codes, c.Why)
				continue
			}
			f.benign++
			total.benign++
			if len(codes) > 0 {
				f.denied++
				total.denied++
				falsePositives = append(falsePositives, fmt.Sprintf("%s: %s denied by %v", c.where(), c.summary(), codes))
			}
		default:
			f.dangerous++
			total.dangerous++
			hit := len(codes) > 0 && (c.Rule == "" || slices.Contains(codes, c.Rule))
			if hit {
				f.caught++
				total.caught++
				continue
			}
			got := "allowed"
			if len(codes) > 0 {
				got = fmt.Sprintf("denied by %v, not %s", codes, c.Rule)
			}
			misses = append(misses, fmt.Sprintf("%s: %s %s", c.where(), c.summary(), got))
		}
	}

	t.Log("in-sample (gated):" + table(families, total))
	for _, m := range misses {
		t.Log("miss: " + m)
	}
	for _, fp := range falsePositives {
		t.Log("false positive: " + fp)
	}
	if heldoutTotal.dangerous+heldoutTotal.benign > 0 {
		// Reported, never gated: a held-out line that fails says the
		// rules do not generalise there, and is fixed at its cause.
		t.Log("held-out (not gated, not tuned on):" + table(heldout, heldoutTotal))
		for _, m := range heldoutMisses {
			t.Log("held-out " + m)
		}
	}

	if total.dangerous == 0 || total.benign == 0 {
		t.Fatal("the corpus needs dangerous and benign cases")
	}
	if r := float64(total.caught) / float64(total.dangerous); r < minRecall {
		t.Errorf("recall %.1f%% is below %.0f%% (%d misses listed above)", 100*r, 100*minRecall, len(misses))
	}
	if r := float64(total.denied) / float64(total.benign); r > maxFalsePositive {
		t.Errorf("false positives %.1f%% are above %.0f%% (listed above)", 100*r, 100*maxFalsePositive)
	}
}

// add counts a held-out case into its family and t, and lists what it
// got wrong.
func (t *tally) add(families map[string]*tally, c corpusCase, codes []string, wrong *[]string) {
	f := families[c.Family]
	if f == nil {
		f = &tally{}
		families[c.Family] = f
	}
	switch {
	case c.Expect == "allow":
		f.benign++
		t.benign++
		if len(codes) > 0 {
			f.denied++
			t.denied++
			*wrong = append(*wrong, fmt.Sprintf("false positive: %s: %s denied by %v", c.where(), c.summary(), codes))
		}
	default:
		f.dangerous++
		t.dangerous++
		if len(codes) > 0 && (c.Rule == "" || slices.Contains(codes, c.Rule)) {
			f.caught++
			t.caught++
			return
		}
		*wrong = append(*wrong, fmt.Sprintf("miss: %s: %s %v", c.where(), c.summary(), codes))
	}
}

// table renders recall and false-positive rate per family.
func table(families map[string]*tally, total tally) string {
	names := make([]string, 0, len(families))
	for n := range families {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-28s %9s %8s %9s %8s\n", "family", "dangerous", "recall", "benign", "FP rate")
	for _, n := range names {
		f := families[n]
		fmt.Fprintf(&b, "%-28s %9d %8s %9d %8s\n", n, f.dangerous, ratio(f.caught, f.dangerous), f.benign, ratio(f.denied, f.benign))
	}
	fmt.Fprintf(&b, "%-28s %9d %8s %9d %8s\n", "all", total.dangerous, ratio(total.caught, total.dangerous), total.benign, ratio(total.denied, total.benign))
	return b.String()
}

func (c corpusCase) summary() string {
	for _, k := range []string{"command", "cmd", "file_path", "path", "url"} {
		if v, ok := c.Input[k]; ok {
			return fmt.Sprintf("%s %v", c.Tool, v)
		}
	}
	data, _ := json.Marshal(c.Input)
	return c.Tool + " " + string(data)
}

func ratio(n, d int) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(d))
}
