package indirect

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// workspace writes files (name → content) under a new directory and
// returns it.
func workspace(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

var sample = map[string]string{
	"package.json": `{"name":"demo","scripts":{"build":"tsc -p .","prerelease":"npm run build","release":"npm publish","postrelease":"git push --tags","test":"jest"},"devDependencies":{"prettier":"^3"}}`,
	"Makefile": "REG ?= ghcr.io/acme\nIMAGE := $(REG)/app\n.PHONY: all deploy\nall: build\nbuild:\n\t@go build ./...\n" +
		"deploy: build push\n\t-kubectl apply -f k8s/ \\\n\t  --context prod\npush:\n\tdocker push $(IMAGE):$(TAG)\nclean: ; rm -rf dist\n",
	"justfile":           "set shell := [\"bash\", \"-c\"]\nversion := \"1.2\"\n\ndefault: test\n\ntest:\n    cargo test\n\npublish target=\"crates\": test\n    @cargo publish --registry {{target}}\n\npy:\n    #!/usr/bin/env python3\n    import os\n    os.system('id')\n",
	"Rakefile":           "namespace :gem do\n  desc 'push'\n  task push: [:build] do\n    sh \"gem push pkg/x-#{VERSION}.gem\"\n  end\n  task :build do\n    sh 'gem build x.gemspec'\n  end\nend\n",
	"Taskfile.yml":       "version: '3'\ntasks:\n  default:\n    cmds: [task: lint]\n  lint: golangci-lint run\n  release:\n    deps: [lint]\n    cmds:\n      - goreleaser release --clean\n      - cmd: gh release edit v1 --draft=false\n",
	"scripts/release.sh": "#!/usr/bin/env bash\nset -euo pipefail\ngit tag \"v$1\"\ngit push origin \"v$1\"\n",
	"scripts/gen.py":     "#!/usr/bin/env python3\nimport shutil\nshutil.rmtree('/tmp/out')\n",
	"composer.json":      `{"scripts":{"deploy":["@test","@php artisan migrate --force","dep deploy production"],"test":"phpunit"}}`,
	"deno.json":          `{"tasks":{"dev":"deno run -A main.ts","release":{"command":"deno publish"}}}`,
	"sub/package.json":   `{"scripts":{"start":"node server.js","install":"node-gyp rebuild"}}`,
}

func TestResolve(t *testing.T) {
	dir := workspace(t, sample)
	ws := Workspace{Dir: dir, Roots: []string{dir}}
	tests := []struct {
		argv    string
		from    string
		scripts []string // each step's script, in order
		why     string   // a part of the reason it is unresolved
		notOurs bool     // Resolve answers false
		dir     string   // the directory it runs in, under the workspace
	}{
		{argv: "npm run release", from: "package.json#scripts.release", scripts: []string{"npm run build", "npm publish", "git push --tags"}},
		{argv: "npm run-script build -- --watch", from: "package.json#scripts.build", scripts: []string{"tsc -p . --watch"}},
		{argv: "npm test", from: "package.json#scripts.test", scripts: []string{"jest"}},
		{argv: "yarn build", from: "package.json#scripts.build", scripts: []string{"tsc -p ."}},
		{argv: "pnpm --dir sub start", from: "sub/package.json#scripts.start", scripts: []string{"node server.js"}},
		{argv: "yarn add left-pad", from: "package.json#scripts (install hooks)"},
		{argv: "yarn why left-pad", notOurs: true},
		{argv: "npm install", from: "package.json#scripts (install hooks)"},
		{argv: "npm ci", from: "package.json#scripts (install hooks)", scripts: []string{"node-gyp rebuild"}, dir: "sub"},
		{argv: "npm run nonesuch", why: "no script nonesuch in package.json"},
		{argv: "make", from: "Makefile#all", scripts: []string{"go build ./..."}},
		{argv: "make deploy TAG=v2", from: "Makefile#deploy", scripts: []string{"go build ./...", "docker push ghcr.io/acme/app:v2", "kubectl apply -f k8s/  \t  --context prod"}},
		{argv: "make clean", from: "Makefile#clean", scripts: []string{"rm -rf dist"}},
		{argv: "make -n deploy", notOurs: true},
		{argv: "make nonesuch", why: "no rule for target nonesuch"},
		{argv: "make -C elsewhere", why: "no Makefile"},
		{argv: "just", from: "justfile#default", scripts: []string{"cargo test"}},
		{argv: "just publish crates-io", from: "justfile#publish", scripts: []string{"cargo test", "cargo publish --registry crates-io"}},
		{argv: "just py", from: "justfile#py", scripts: []string{"python3 -c 'import os\nos.system('\\''id'\\'')'"}},
		{argv: "just --list", notOurs: true},
		{argv: "rake gem:push", from: "Rakefile#gem:push", scripts: []string{"gem build x.gemspec", "gem push pkg/x-${RUBY_EXPR}.gem"}},
		{argv: "rake nonesuch", why: "no task nonesuch"},
		{argv: "task", from: "Taskfile.yml#default", scripts: []string{"golangci-lint run"}},
		{argv: "task release", from: "Taskfile.yml#release", scripts: []string{"golangci-lint run", "goreleaser release --clean\ngh release edit v1 --draft=false"}},
		{argv: "./scripts/release.sh 1.2", from: "scripts/release.sh", scripts: []string{"set -- 1.2\nset -euo pipefail\ngit tag \"v$1\"\ngit push origin \"v$1\"\n"}},
		{argv: "bash scripts/release.sh", from: "scripts/release.sh", scripts: []string{sample["scripts/release.sh"]}},
		{argv: "bash -n scripts/release.sh", from: "scripts/release.sh (syntax check only)"},
		{argv: "bash -u -O extglob -n scripts/release.sh", from: "scripts/release.sh (syntax check only)"},
		{argv: "sh -o noexec scripts/release.sh", from: "scripts/release.sh (syntax check only)"},
		{argv: "bash -x scripts/release.sh -n", from: "scripts/release.sh", scripts: []string{"set -- -n\n" + sample["scripts/release.sh"]}},
		{argv: "scripts/gen.py", from: "scripts/gen.py", scripts: []string{"python3 -c 'import shutil\nshutil.rmtree('\\''/tmp/out'\\'')\n'"}},
		{argv: "./scripts/missing.sh", why: "no scripts/missing.sh"},
		{argv: "python3 scripts/gen.py --out x", from: "scripts/gen.py", scripts: []string{"set -- --out x\npython3 -c '#!/usr/bin/env python3\nimport shutil\nshutil.rmtree('\\''/tmp/out'\\'')\n'"}},
		{argv: "python3 -m pytest", notOurs: true},
		{argv: "python3 manage.py migrate", notOurs: true},
		{argv: "node -e 1", notOurs: true},
		{argv: "bash -c 'make deploy'", notOurs: true},
		{argv: "/usr/bin/env", notOurs: true},
		{argv: "cargo xtask dist", why: "Rust code"},
		{argv: "composer deploy", from: "composer.json#scripts.deploy", scripts: []string{"phpunit", "php artisan migrate --force\ndep deploy production"}},
		{argv: "composer run-script test -- --filter X", from: "composer.json#scripts.test", scripts: []string{"phpunit --filter X"}},
		{argv: "composer install", notOurs: true},
		{argv: "deno task release", from: "deno.json#tasks.release", scripts: []string{"deno publish"}},
		{argv: "deno run main.ts", notOurs: true},
		{argv: "cargo build", notOurs: true},
		{argv: "ls -la", notOurs: true},
	}
	for _, tt := range tests {
		t.Run(tt.argv, func(t *testing.T) {
			argv := fields(tt.argv)
			ws := ws
			ws.Dir = filepath.Join(ws.Dir, tt.dir)
			res, ok := Resolve(argv, nil, ws)
			if tt.notOurs {
				if ok {
					t.Fatalf("Resolve = %+v, true; want false", res)
				}
				return
			}
			if !ok {
				t.Fatal("Resolve = false, want a result")
			}
			if tt.why != "" {
				if res.Resolved() || !strings.Contains(res.Why, tt.why) {
					t.Fatalf("Why = %q (resolved %v), want it to say %q", res.Why, res.Resolved(), tt.why)
				}
				return
			}
			if !res.Resolved() {
				t.Fatalf("unresolved: %s", res.Why)
			}
			if res.From != tt.from {
				t.Errorf("From = %q, want %q", res.From, tt.from)
			}
			var got []string
			for _, s := range res.Steps {
				got = append(got, s.Script)
				// Every step names the file its text was read from, so
				// that its provenance can be told.
				if info, err := os.Stat(s.File); err != nil || !info.Mode().IsRegular() || !filepath.IsAbs(s.File) {
					t.Errorf("step %s: File %q is not the absolute path of the file read (%v)", s.From, s.File, err)
				}
			}
			if strings.Join(got, "\x00") != strings.Join(tt.scripts, "\x00") {
				t.Errorf("scripts = %q, want %q", got, tt.scripts)
			}
		})
	}
}

// fields splits a test command line, keeping one single-quoted word.
func fields(s string) []string {
	if i := strings.Index(s, "'"); i >= 0 {
		return append(strings.Fields(s[:i]), strings.Trim(s[i:], "'"))
	}
	return strings.Fields(s)
}

func TestResolveBounds(t *testing.T) {
	outside := workspace(t, map[string]string{"evil.sh": "rm -rf ~\n", "Makefile": "all:\n\trm -rf ~\n"})
	dir := workspace(t, map[string]string{
		"big.sh":       strings.Repeat("echo hi\n", MaxFileBytes/8+1),
		"package.json": `{"scripts":`,
	})
	if err := os.Symlink(filepath.Join(outside, "evil.sh"), filepath.Join(dir, "link.sh")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "Makefile"), 0o755); err != nil {
		t.Fatal(err)
	}
	ws := Workspace{Dir: dir, Roots: []string{dir}}
	tests := []struct {
		argv []string
		dyn  []bool
		why  string
	}{
		{[]string{"./big.sh"}, nil, "over the"},
		{[]string{"./link.sh"}, nil, "links outside the workspace"},
		{[]string{"make", "-C", "out"}, nil, "links outside the workspace"},
		{[]string{"make"}, nil, "not a regular file"},
		{[]string{"npm", "run", "x"}, nil, "not valid JSON"},
		{[]string{"npm", "run", "$X"}, []bool{false, false, true}, "not known"},
		{[]string{"bash", filepath.Join(outside, "evil.sh")}, nil, "outside the workspace"},
	}
	for _, tt := range tests {
		res, ok := Resolve(tt.argv, tt.dyn, ws)
		if !ok || res.Resolved() || !strings.Contains(res.Why, tt.why) {
			t.Errorf("Resolve(%q) = %+v, %v; want unresolved saying %q", tt.argv, res, ok, tt.why)
		}
	}
	// A script outside the workspace run by path is not a definition of
	// the workspace at all: it is not read.
	if res, ok := Resolve([]string{filepath.Join(outside, "evil.sh")}, nil, ws); ok {
		t.Errorf("a script outside the workspace was followed: %+v", res)
	}
}

func TestResolveCacheSeesChanges(t *testing.T) {
	dir := workspace(t, map[string]string{"package.json": `{"scripts":{"x":"echo one"}}`})
	ws := Workspace{Dir: dir, Roots: []string{dir}}
	first, _ := Resolve([]string{"npm", "run", "x"}, nil, ws)
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"scripts":{"x":"npm publish --tag next"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	second, _ := Resolve([]string{"npm", "run", "x"}, nil, ws)
	if first.Steps[0].Script != "echo one" || second.Steps[0].Script != "npm publish --tag next" {
		t.Fatalf("steps %q then %q: a changed file must be read again", first.Steps[0].Script, second.Steps[0].Script)
	}
}

func TestDependency(t *testing.T) {
	dir := workspace(t, sample)
	ws := Workspace{Dir: filepath.Join(dir, "scripts"), Roots: []string{dir}}
	for pkg, want := range map[string]bool{"prettier": true, "prettier@3.1.0": true, "demo": true, "evil-pkg": false, "@scope/x@1": false} {
		declared, found := Dependency(pkg, ws)
		if !found || declared != want {
			t.Errorf("Dependency(%q) = %v, %v; want %v, true", pkg, declared, found, want)
		}
	}
	if _, found := Dependency("x", Workspace{Dir: t.TempDir(), Roots: []string{t.TempDir()}}); found {
		t.Error("found a package.json where there is none")
	}
}

func TestMakeExpansionBounded(t *testing.T) {
	mf := "A0 = " + strings.Repeat("x", 1000) + "\n"
	for i := 1; i <= 8; i++ {
		mf += "A" + strconv.Itoa(i) + " = $(A" + strconv.Itoa(i-1) + ") $(A" + strconv.Itoa(i-1) + ") $(A" + strconv.Itoa(i-1) + ") $(A" + strconv.Itoa(i-1) + ")\n"
	}
	mf += "all:\n\techo $(A8)\n"
	dir := workspace(t, map[string]string{"Makefile": mf})
	res, _ := Resolve([]string{"make"}, nil, Workspace{Dir: dir, Roots: []string{dir}})
	if !res.Resolved() || len(res.Steps[0].Script) > 2*maxExpanded {
		t.Fatalf("expansion of %d bytes (resolved %v): want at most %d", len(res.Steps[0].Script), res.Resolved(), 2*maxExpanded)
	}
}

// TestResolvePaddedGraph: a definition that runs more tasks than are
// followed is unresolved, for every runner with prerequisites, so that
// padding it with harmless tasks cannot hide the one that runs last.
func TestResolvePaddedGraph(t *testing.T) {
	const n = maxTargets + 1
	var mk, rake, task, composer strings.Builder
	mk.WriteString("all:")
	rake.WriteString("task all: [")
	task.WriteString("version: '3'\ntasks:\n  all:\n    deps: [")
	composer.WriteString(`{"scripts":{"all":[`)
	for i := range n {
		s := "t" + strconv.Itoa(i)
		sep := ", "
		if i == 0 {
			sep = ""
		}
		mk.WriteString(" " + s)
		rake.WriteString(sep + ":" + s)
		task.WriteString(sep + s)
		composer.WriteString(strings.TrimPrefix(sep, " ") + `"@` + s + `"`)
	}
	mk.WriteString("\n\trm -rf ~\n")
	rake.WriteString("] do\n  sh 'rm -rf ~'\nend\n")
	task.WriteString("]\n    cmds: ['rm -rf ~']\n")
	composer.WriteString(`,"rm -rf ~"]`)
	for i := range n {
		s := "t" + strconv.Itoa(i)
		mk.WriteString(s + ":\n\techo " + s + "\n")
		rake.WriteString("task :" + s + " do\n  sh 'echo " + s + "'\nend\n")
		task.WriteString("  " + s + ": echo " + s + "\n")
		composer.WriteString(`,"` + s + `":"echo ` + s + `"`)
	}
	composer.WriteString("}}")
	dir := workspace(t, map[string]string{
		"Makefile": mk.String(), "Rakefile": rake.String(), "Taskfile.yml": task.String(), "composer.json": composer.String(),
	})
	ws := Workspace{Dir: dir, Roots: []string{dir}}
	for _, argv := range []string{"make all", "rake all", "task all", "composer all"} {
		res, ok := Resolve(strings.Fields(argv), nil, ws)
		if !ok || res.Resolved() || !strings.Contains(res.Why, "more than "+strconv.Itoa(maxTargets)) {
			t.Errorf("Resolve(%q) = resolved %v, why %q, %d steps; want unresolved: more than %d", argv, res.Resolved(), res.Why, len(res.Steps), maxTargets)
		}
	}
}

// TestWrittenFiles: a file the command writes before running it is read
// as written, over the disk's copy or its absence; only inside the roots.
func TestWrittenFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Makefile"), []byte("all:\n\techo disk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		argv    []string
		written map[string]string
		want    string // in the first step's script; "" for not resolved
	}{
		{"over the disk", []string{"make"}, map[string]string{dir + "/Makefile": "all:\n\techo written\n"}, "echo written"},
		{"no such file on disk", []string{"bash", "x.sh"}, map[string]string{dir + "/x.sh": "curl x | sh\n"}, "curl x | sh"},
		{"nothing written", []string{"make"}, nil, "echo disk"},
		{"outside the roots", []string{"bash", "/tmp/elsewhere/x.sh"}, map[string]string{"/tmp/elsewhere/x.sh": "id\n"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, ok := Resolve(tt.argv, nil, Workspace{Dir: dir, Roots: []string{dir}, Written: tt.written})
			got := ""
			if ok && res.Resolved() && len(res.Steps) > 0 {
				got = res.Steps[0].Script
			}
			if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
				t.Errorf("script = %q, want it to hold %q", got, tt.want)
			}
		})
	}
}
