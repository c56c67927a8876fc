package indirect

import (
	"strings"
	"testing"
)

// buildFile is a build file in the style of shelljs/make: a table of
// targets, helpers they call, and top-level code that dispatches.
const buildFile = "const { exec } = require('child_process');\n" +
	"function run(cmd) { exec(cmd); }\n" +
	"function publishSite() {\n\trun('git push origin HEAD:gh-pages -f');\n}\n" +
	"const tagRelease = (v) => { run(`git tag -f v${v}`); };\n" +
	"target.lint = function ([fix = false] = []) {\n\trun(fix ? 'eslint --fix .' : 'eslint .');\n};\n" +
	"target.test = () => {\n\ttarget.lint();\n\trun('mocha');\n};\n" +
	"target.fuzz = function ({ amount = 1000 } = {}) { run('node fuzz.js ' + amount); };\n" +
	"target.release = ([v]) => tagRelease(v);\n" +
	"target.publishSite = publishSite;\n" +
	"const name = process.argv[2];\n" +
	"if (typeof target[name] === 'function') target[name](process.argv.slice(3));\n"

func TestSelectTarget(t *testing.T) {
	for _, tc := range []struct {
		target      string
		ok          bool
		keep, leave []string // text kept, text cut out
	}{
		{"lint", true, []string{"eslint .", "process.argv"}, []string{"git push", "git tag", "mocha", "fuzz.js"}},
		{"test", true, []string{"mocha", "eslint ."}, []string{"git push", "git tag"}}, // test calls target.lint
		{"release", true, []string{"git tag -f"}, []string{"git push", "eslint ."}},
		{"publishSite", true, []string{"git push origin"}, []string{"git tag", "eslint ."}},
		{"nonesuch", false, []string{"git push", "git tag", "eslint ."}, nil},
	} {
		t.Run(tc.target, func(t *testing.T) {
			got, ok := selectTarget(buildFile, tc.target)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			for _, k := range tc.keep {
				if !strings.Contains(got, k) {
					t.Errorf("%q was cut out:\n%s", k, got)
				}
			}
			for _, l := range tc.leave {
				if strings.Contains(got, l) {
					t.Errorf("%q is still there:\n%s", l, got)
				}
			}
		})
	}
}

// A file that is no dispatch table, or one table member alone, is read
// whole.
func TestSelectTargetNeedsATable(t *testing.T) {
	for _, code := range []string{
		"function lint() { exec('eslint .'); }\nfunction release() { exec('npm publish'); }\nlint();\n",
		"module.exports.lint = function () { exec('eslint .'); };\nexec('npm publish');\n",
		"target.lint = function ( {\n", // unbalanced
	} {
		if got, ok := selectTarget(code, "lint"); ok || got != code {
			t.Errorf("selectTarget(%q) = %q, %v; want the file unchanged", code, got, ok)
		}
	}
}

func FuzzSelectTarget(f *testing.F) {
	f.Add(buildFile, "lint")
	f.Add("target.a = () => b(`${c({d})}`);\ntarget.b = function(){ /* } */ '}' }", "a")
	f.Fuzz(func(t *testing.T, code, target string) {
		got, ok := selectTarget(code, target)
		if !ok && got != code {
			t.Fatal("a file that is not cut changed")
		}
		if ok && len(got) > len(code)+2*maxDefs {
			t.Fatalf("output grew from %d to %d bytes", len(code), len(got))
		}
	})
}
