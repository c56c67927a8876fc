package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-opa/ahp-opa/internal/testkit"
)

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const passingPolicy = `package ahp.tool.before.t
deny contains "no" if input.tool.name == "X"
`

func TestTestCommand(t *testing.T) {
	tests := []struct {
		name     string
		files    map[string]string
		opts     testOptions
		exit     int
		contains []string
	}{
		{
			name: "pass",
			files: map[string]string{
				"p.rego":          passingPolicy,
				"sub/p_test.rego": "package ahp.tool.before.t_test\nimport data.ahp.tool.before.t\ntest_x if { t.deny == {\"no\"} with input as {\"tool\": {\"name\": \"X\"}} }\ntest_y if { count(t.deny) == 0 with input as {} }\n",
				".hidden/x.rego":  "package broken {",
				"data.json":       `{"unused": 1}`,
			},
			opts:     testOptions{verbose: true},
			contains: []string{"test_x: PASS", "test_y: PASS", "PASS: 2/2"},
		},
		{
			name: "failure",
			files: map[string]string{
				"p.rego":      passingPolicy,
				"p_test.rego": "package ahp.tool.before.t_test\ntest_bad if { 1 == 2 }\ntest_good if { true }\n",
			},
			exit:     2,
			contains: []string{"test_bad: FAIL", "FAIL: 1/2"},
		},
		{
			name: "run filter",
			files: map[string]string{
				"p_test.rego": "package x_test\ntest_bad if { 1 == 2 }\ntest_good if { true }\n",
			},
			opts:     testOptions{run: "good"},
			contains: []string{"PASS: 1/1"},
		},
		{
			name:     "no tests says so",
			files:    map[string]string{"p.rego": passingPolicy},
			contains: []string{"no tests found in "},
		},
		{
			name:     "no tests, fail on empty",
			files:    map[string]string{"p.rego": passingPolicy},
			opts:     testOptions{failOnEmpty: true},
			exit:     1,
			contains: []string{"no tests found in "},
		},
		{
			name: "tests of the library without it name the flag",
			files: map[string]string{
				"p_test.rego": "package x_test\nimport data.ahp.tool.before.builtin\ntest_lib if { count(builtin.deny) == 0 with input as {} }\n",
			},
			exit:     2,
			contains: []string{"FAIL: 1/1", "loaded only with --with-builtin: run ahp-opa test --with-builtin "},
		},
		{
			name: "error",
			files: map[string]string{
				"p_test.rego": "package x_test\ntest_err if { to_number(input.x) == 1 with input as {\"x\": \"abc\"} }\ntest_good if { true }\n",
			},
			exit:     2,
			contains: []string{"test_err: ERROR", "ERROR: 1/2"},
		},
		{
			name: "skipped counts, as in opa",
			files: map[string]string{
				"p_test.rego": "package x_test\ntodo_test_later if { true }\ntest_good if { true }\n",
			},
			exit:     2,
			contains: []string{"SKIPPED"},
		},
		{
			name: "skipped with -z",
			files: map[string]string{
				"p_test.rego": "package x_test\ntodo_test_later if { true }\ntest_good if { true }\n",
			},
			opts:     testOptions{skipZero: true},
			contains: []string{"SKIPPED"},
		},
		{
			name: "verbose trace and durations",
			files: map[string]string{
				"p_test.rego": "package x_test\ntest_bad if { trace(\"checking one\"); 1 == 2 }\n",
			},
			opts:     testOptions{verbose: true},
			exit:     2,
			contains: []string{"test_bad: FAIL (", "Note \"checking one\"", "Fail 1 = 2"},
		},
		{
			name: "json",
			files: map[string]string{
				"p_test.rego": "package x_test\ntest_bad if { 1 == 2 }\ntest_good if { true }\n",
			},
			opts:     testOptions{format: "json"},
			exit:     2,
			contains: []string{`"name": "test_bad"`, `"fail": true`, `"duration"`},
		},
		{
			name: "coverage threshold",
			files: map[string]string{
				"p.rego":      passingPolicy,
				"p_test.rego": "package x_test\ntest_good if { true }\n",
			},
			opts:     testOptions{coverage: true, threshold: 100},
			exit:     2,
			contains: []string{`"coverage"`, "below the threshold"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeFiles(t, tt.files)
			var out bytes.Buffer
			err := runTests(context.Background(), &out, []string{dir}, tt.opts)
			var exit exitError
			switch {
			case tt.exit == 0 && err != nil:
				t.Fatalf("err = %v\n%s", err, out.String())
			case tt.exit != 0 && (!errors.As(err, &exit) || exit.code != tt.exit):
				t.Fatalf("err = %v, want exit %d\n%s", err, tt.exit, out.String())
			}
			for _, s := range tt.contains {
				if !strings.Contains(out.String(), s) {
					t.Errorf("output lacks %q:\n%s", s, out.String())
				}
			}
		})
	}
}

// TestBuiltinAndExamplesPass runs the embedded library's tests and every
// example policy's, as the documentation tells users to. The library's
// through the command only in the long run: parsing its test suite under
// -race costs a minute, and the rego package runs every one of them.
func TestBuiltinAndExamplesPass(t *testing.T) {
	cases := []struct {
		paths []string
		opts  testOptions
	}{
		{[]string{"../../examples/policy"}, testOptions{withBuiltin: true}},
		{[]string{"../../examples/quickstart"}, testOptions{failOnEmpty: true}},
		{[]string{"../../examples/session"}, testOptions{failOnEmpty: true}},
		{[]string{"../../examples/agents"}, testOptions{failOnEmpty: true}},
	}
	if testkit.LongEnabled() {
		cases = append(cases, struct {
			paths []string
			opts  testOptions
		}{nil, testOptions{failOnEmpty: true}})
	}
	for _, c := range cases {
		var out bytes.Buffer
		if err := runTests(context.Background(), &out, c.paths, c.opts); err != nil {
			t.Errorf("%v: %v\n%s", c.paths, err, out.String())
		}
	}
}

// TestTestCommandLoadError: a file that does not parse is exit 1 (an error
// running the tests), not 2 (failing tests), as in opa test.
func TestTestCommandLoadError(t *testing.T) {
	dir := writeFiles(t, map[string]string{"p_test.rego": "package x_test\ntest_a if {\n"})
	var out bytes.Buffer
	err := runTests(context.Background(), &out, []string{dir}, testOptions{})
	var exit exitError
	if err == nil || errors.As(err, &exit) {
		t.Fatalf("err = %v, want a plain error (exit 1)", err)
	}
	if !strings.Contains(err.Error(), "p_test.rego:") {
		t.Errorf("error does not name the file: %v", err)
	}
}
