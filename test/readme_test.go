package test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ahp-opa/ahp-opa/internal/testkit"
)

// readmeBlock is one fenced code block of README.md and the section it
// stands in.
type readmeBlock struct {
	section string // the "## " heading above it, "" before the first
	lang    string
	text    string
}

// readmeBlocks returns README.md's fenced code blocks, in order.
func readmeBlocks(t *testing.T) []readmeBlock {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []readmeBlock
	var cur *readmeBlock
	section := ""
	for _, line := range strings.SplitAfter(string(data), "\n") {
		trimmed := strings.TrimRight(line, "\n")
		switch {
		case cur != nil && trimmed == "```":
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.text += line
		case strings.HasPrefix(trimmed, "```"):
			cur = &readmeBlock{section: section, lang: strings.TrimPrefix(trimmed, "```")}
		case strings.HasPrefix(trimmed, "## "):
			section = strings.TrimPrefix(trimmed, "## ")
		}
	}
	return blocks
}

// repoRoot is the module root: the test package sits one below it.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// tourChecks is what each README tour must print, by its section. A tour
// added to the README without a row here fails the test, so that each is
// run and checked.
var tourChecks = map[string][]string{
	"Guard the agents you already run": {
		"settings.json",
		`"permissionDecision":"deny"`,
		"secrets.ssh-private-key",
	},
	"Use it from an AHP harness": {`"id": "dev.ahp-opa.local"`, `"type": "stdio"`, "/bin/ahp-opa"},
	"Run a central HTTP service": {"dev.ahp-opa.git.force-push"},
	"Write and test a rule":      {"PASS: 3/3", "com.example.myteam.prod_db", "policies: your own rules and the built-in library"},
}

// outsideHome matches what a user without root cannot do: sudo, and
// writing to or building into system directories.
var outsideHome = regexp.MustCompile(`\bsudo\b|(^|[\s=>'"])/(usr|etc|opt|var|srv)/|~/bin\b`)

// TestReadmeShape pins what a newcomer reads first: two commands (the
// main job on the built-in policy, then the tests, which .ci/run runs as
// written), tours that need no root, and the rule shown being the one
// whose tests ship beside it.
func TestReadmeShape(t *testing.T) {
	t.Parallel()
	blocks := readmeBlocks(t)
	if len(blocks) == 0 || blocks[0].lang != "sh" {
		t.Fatal("README.md does not open with a sh block")
	}
	first := strings.Split(strings.TrimSpace(blocks[0].text), "\n")
	if len(first) != 2 || !strings.Contains(first[0], "go run ./cmd/ahp-opa serve --stdio") || first[1] != "go test -race ./..." {
		t.Errorf("README's first block is not the two commands (decide one call, run the tests):\n%s", blocks[0].text)
	}
	ci, err := os.ReadFile(filepath.Join(repoRoot(t), ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(first[len(first)-1]) + `$`).Match(ci) {
		t.Errorf(".ci/run does not run the README's test command %q", first[len(first)-1])
	}
	// What it is for comes before any tour, with AHP explained and linked,
	// and the first tour is the one most newcomers need: their agent's hook.
	readme, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	intro, _, _ := strings.Cut(string(readme), "\n## ")
	for _, want := range []string{"Claude Code", "https://github.com/agenthooksprotocol/agent-hooks-protocol", "docs/block-a-tool.md"} {
		if !strings.Contains(intro, want) {
			t.Errorf("README's first screen lacks %q", want)
		}
	}
	if tours := slices.IndexFunc(blocks[1:], func(b readmeBlock) bool { return b.lang == "sh" }); tours < 0 || blocks[1+tours].section != "Guard the agents you already run" {
		t.Errorf("README's first tour is not the native hooks one")
	}
	seen := map[string]bool{}
	for _, b := range blocks[1:] {
		switch b.lang {
		case "sh":
			if _, ok := tourChecks[b.section]; !ok {
				t.Errorf("README tour %q has no checks in tourChecks", b.section)
			}
			seen[b.section] = true
			if m := outsideHome.FindString(b.text); m != "" {
				t.Errorf("README tour %q needs root or an unstated directory (%q):\n%s", b.section, m, b.text)
			}
		case "rego":
			rule, err := os.ReadFile(filepath.Join(repoRoot(t), "examples", "quickstart", "no_prod_db.rego"))
			if err != nil {
				t.Fatal(err)
			}
			if b.text != string(rule) {
				t.Errorf("README's rule differs from examples/quickstart/no_prod_db.rego:\n%s", b.text)
			}
		}
	}
	for section := range tourChecks {
		if !seen[section] {
			t.Errorf("tourChecks names %q, which README.md has no tour for", section)
		}
	}
}

// TestReadmeTours runs the README's first command and each tour exactly
// as written, in a copy of the checkout with a fresh HOME, and checks what
// they print. Long: it builds the binaries the way a user does.
func TestReadmeTours(t *testing.T) {
	testkit.RequireLong(t)
	blocks := readmeBlocks(t)
	dir := t.TempDir()
	src, home, run := filepath.Join(dir, "src"), filepath.Join(dir, "home"), filepath.Join(dir, "run")
	copyTree(t, repoRoot(t), src)
	for _, d := range []string{home, run} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	env := tourEnv(t, home, run)

	first := strings.SplitN(blocks[0].text, "\n", 2)[0]
	if out := runTour(t, src, env, first); !strings.Contains(out, `"type": "deny"`) && !strings.Contains(out, `"type":"deny"`) {
		t.Errorf("README's first command printed no deny:\n%s", out)
	}
	for _, b := range blocks[1:] {
		if b.lang != "sh" {
			continue
		}
		t.Run(b.section, func(t *testing.T) {
			if strings.Contains(b.text, "curl ") {
				if _, err := exec.LookPath("curl"); err != nil {
					t.Skip("curl is not installed")
				}
			}
			out := runTour(t, src, env, b.text)
			for _, want := range tourChecks[b.section] {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
		})
	}
	// The native hooks tour ends by uninstalling: the agent's settings
	// keep nothing of ours.
	if data, err := os.ReadFile(filepath.Join(home, ".claude", "settings.json")); err == nil && bytes.Contains(data, []byte("ahp-opa")) {
		t.Errorf("~/.claude/settings.json still names ahp-opa after the uninstall:\n%s", data)
	}
}

// tourEnv is a newcomer's environment: a fresh HOME and runtime
// directory, the caller's PATH, and this machine's Go caches so that the
// tours do not download or compile the world again.
func tourEnv(t *testing.T, home, run string) []string {
	t.Helper()
	env := []string{"HOME=" + home, "XDG_RUNTIME_DIR=" + run, "TMPDIR=" + run, "PATH=" + os.Getenv("PATH"),
		"GOTOOLCHAIN=local",
		// The hook decides in its own process: a daemon would outlive the test.
		"AHP_OPA_HOOK__NO_DAEMON=1"}
	for _, key := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOFLAGS", "GOPROXY"} {
		out, err := exec.Command("go", "env", key).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", key, err)
		}
		env = append(env, key+"="+strings.TrimSpace(string(out)))
	}
	return env
}

// runTour runs script with bash, stopping at the first failing command,
// and returns what it printed on stdout and stderr.
func runTour(t *testing.T, dir string, env []string, script string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", script)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\nscript:\n%s\noutput:\n%s", err, script, out)
	}
	return string(out)
}

// copyTree copies the checkout's files (not .git, not built binaries), so
// that the tours' ./bin, certificates and settings never touch it.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		if d.IsDir() && rel != "." && (strings.HasPrefix(d.Name(), ".") || rel == "bin") {
			return filepath.SkipDir
		}
		target := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatalf("copying the checkout: %v", err)
	}
}
