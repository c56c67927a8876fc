package rego

import (
	"context"
	"io/fs"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/tester"
)

// codePattern is the decision contract's pattern for a deny code.
var codePattern = regexp.MustCompile(`^(?:[A-Za-z][A-Za-z0-9_-]*\.)+[A-Za-z][A-Za-z0-9_-]*$`)

// loadModules returns the parsed .rego files of FS, with or without the
// test files.
func loadModules(t *testing.T, withTests bool) map[string]*ast.Module {
	t.Helper()
	all, err := parsedLibrary()
	if err != nil {
		t.Fatalf("loading embedded library: %v", err)
	}
	modules := selectModules(all, withTests)
	if len(modules) == 0 {
		t.Fatal("embedded library has no .rego files")
	}
	return modules
}

func selectModules(all map[string]*ast.Module, withTests bool) map[string]*ast.Module {
	modules := map[string]*ast.Module{}
	for path, m := range all {
		if withTests || !strings.HasSuffix(path, "_test.rego") {
			modules[path] = m
		}
	}
	return modules
}

// parsedLibrary parses FS once for the package: the recorded fixtures are
// ~700 KB of Rego, the costliest parse under -race. The tests that share
// the modules do not run in parallel: OPA's AST values sort lazily, so
// even reading them (String, Copy) from two goroutines races.
var parsedLibrary = sync.OnceValues(func() (map[string]*ast.Module, error) {
	modules := map[string]*ast.Module{}
	err := fs.WalkDir(FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".rego") {
			return err
		}
		src, err := fs.ReadFile(FS, path)
		if err != nil {
			return err
		}
		m, err := ast.ParseModuleWithOpts(path, string(src), ast.ParserOptions{
			ProcessAnnotation: true,
			RegoVersion:       ast.RegoV1,
		})
		if err != nil {
			return err
		}
		modules[path] = m
		return nil
	})
	return modules, err
})

// TestEmbedCoversAllFiles fails when a .rego file in this directory is not
// embedded, e.g. after adding a directory without updating the go:embed line.
func TestEmbedCoversAllFiles(t *testing.T) {
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".rego") {
			return err
		}
		if _, err := fs.Stat(FS, filepath.ToSlash(path)); err != nil {
			t.Errorf("%s is not embedded in FS", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRegoTests runs the library's Rego tests with OPA's tester.
func TestRegoTests(t *testing.T) {
	ch, err := tester.NewRunner().
		SetModules(loadModules(t, true)).
		RaiseBuiltinErrors(true).
		RunTests(context.Background(), nil)
	if err != nil {
		t.Fatalf("running Rego tests: %v", err)
	}
	var results []*tester.Result
	for r := range ch {
		results = append(results, r)
	}
	sort.Slice(results, func(i, j int) bool {
		return results[i].Package+"."+results[i].Name < results[j].Package+"."+results[j].Name
	})
	if len(results) < 80 {
		t.Errorf("found %d Rego tests, expected at least 80", len(results))
	}
	for _, r := range results {
		if r.Pass() {
			continue
		}
		where := "unknown location"
		if r.Location != nil {
			where = r.Location.String()
		}
		switch {
		case r.Error != nil:
			t.Errorf("%s.%s (%s): error: %v", r.Package, r.Name, where, r.Error)
		case r.Skip:
			t.Errorf("%s.%s (%s): skipped; the library should have no todo_ tests", r.Package, r.Name, where)
		default:
			t.Errorf("%s.%s (%s): FAIL", r.Package, r.Name, where)
		}
	}
	t.Logf("%d Rego tests run", len(results))
}

// TestRulesAreAnnotated checks that every built-in rule (a `violation`
// rule; `deny` only filters them) carries METADATA with a title, a
// description, custom.severity and a custom.code that fits the decision
// contract, and that its denial object carries that code.
func TestRulesAreAnnotated(t *testing.T) {
	for code, where := range ruleCodes(t) {
		if !codePattern.MatchString(code) || !strings.HasPrefix(code, "dev.ahp-opa.") {
			t.Errorf("%s: custom.code %q is not a dev.ahp-opa.* reverse-DNS code", where, code)
		}
	}
}

// ruleCodes returns the code of every built-in rule with its location,
// failing the test for a rule that is not annotated properly.
func ruleCodes(t *testing.T) map[string]string {
	t.Helper()
	c, err := compiledLibrary()
	if err != nil {
		t.Fatal(err)
	}
	annotations := c.GetAnnotationSet()
	severities := map[string]bool{"low": true, "medium": true, "high": true, "critical": true}
	codes := map[string]string{}
	for _, m := range c.Modules {
		for _, r := range m.Rules {
			name := r.Head.Name.String()
			if name == "deny" && strings.HasPrefix(m.Package.Path.String(), "data.ahp.tool.before") {
				// The collector: it must stay a multi-value rule.
				if r.Head.RuleKind() != ast.MultiValue {
					t.Errorf("%s: deny must be a multi-value rule (deny contains ...)", r.Location)
				}
				continue
			}
			if name != "violation" {
				continue
			}
			where := r.Location.String()
			if r.Head.RuleKind() != ast.MultiValue {
				t.Errorf("%s: violation must be a multi-value rule (violation contains ...)", where)
			}
			var a *ast.Annotations
			for _, x := range annotations.GetRuleScope(r) {
				a = x
			}
			if a == nil {
				t.Errorf("%s: rule has no METADATA", where)
				continue
			}
			if a.Title == "" || a.Description == "" {
				t.Errorf("%s: METADATA needs a title and a description", where)
			}
			if sev, _ := a.Custom["severity"].(string); !severities[sev] {
				t.Errorf("%s: custom.severity %q is not one of low, medium, high, critical", where, sev)
			}
			code, _ := a.Custom["code"].(string)
			if other, dup := codes[code]; dup {
				t.Errorf("%s: custom.code %q is also used at %s", where, code, other)
			}
			codes[code] = where
			if !strings.Contains(r.Head.Key.String(), `"`+code+`"`) {
				t.Errorf("%s: the denial object does not carry its custom.code %q", where, code)
			}
		}
	}
	if len(codes) == 0 {
		t.Fatal("no built-in rules found")
	}
	return codes
}

// compiledLibrary compiles the library without its tests once for the
// package; the tests only read the compiler.
var compiledLibrary = sync.OnceValues(func() (*ast.Compiler, error) {
	all, err := parsedLibrary()
	if err != nil {
		return nil, err
	}
	c := ast.NewCompiler()
	if c.Compile(selectModules(all, false)); c.Failed() {
		return nil, c.Errors
	}
	return c, nil
})

// TestEveryRuleHasThreeTests counts, for each rule code, the Rego tests
// that name it: each rule needs denied cases, evasions and look-alikes.
func TestEveryRuleHasThreeTests(t *testing.T) {
	codes := ruleCodes(t)
	tests := map[string]int{}
	for _, m := range loadModules(t, true) {
		for _, r := range m.Rules {
			if !strings.HasPrefix(r.Head.Name.String(), "test_") {
				continue
			}
			body := r.Body.String()
			for code := range codes {
				if strings.Contains(body, `"`+code+`"`) {
					tests[code]++
				}
			}
		}
	}
	for code, where := range codes {
		if tests[code] < 3 {
			t.Errorf("%s (%s) has %d tests, want at least 3", code, where, tests[code])
		}
	}
	t.Logf("%d rules", len(codes))
}
