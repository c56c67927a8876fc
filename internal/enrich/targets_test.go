package enrich

import (
	"os"
	"path/filepath"
	"testing"
)

// TestTargetVerbsOnlyWhenUnread: a runner's target speaks by its name
// only when its definition could not be read; a Makefile that is read is
// judged by what its recipe runs.
func TestTargetVerbsOnlyWhenUnread(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Makefile"), []byte("deploy:\n\techo deployed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sources := func(ahp map[string]any) []string {
		var kinds []string
		effs, _ := ahp["effects"].([]any)
		for _, e := range effs {
			kinds = append(kinds, e.(map[string]any)["source"].(map[string]any)["kind"].(string))
		}
		return kinds
	}
	if got := sources(ahpOf(t, shellEvent("make deploy", dir))); len(got) != 0 {
		t.Errorf("make deploy with a Makefile whose recipe echoes: effects from %v, want none", got)
	}
	if got := sources(ahpOf(t, shellEvent("make -f other.mk deploy", dir))); len(got) != 1 || got[0] != "target-verb" {
		t.Errorf("make deploy from a file that is not there: effects from %v, want one target-verb", got)
	}
	// A target named like a file is a build product, whatever its words.
	for _, c := range []string{"make -f other.mk libfoo.so-release", "make -f other.mk dist/app-1.2.tar.gz"} {
		if got := sources(ahpOf(t, shellEvent(c, dir))); len(got) != 0 {
			t.Errorf("%s: effects from %v, want none", c, got)
		}
	}
}

// TestScriptNamesSpeak: a script file's name speaks when it starts with
// a verb, read or not (code in a general-purpose language does more than
// its analysis shows); a name that says it checks, prepares or rehearses,
// a syntax check and a --local run do not.
func TestScriptNamesSpeak(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "scripts", "release.py"), []byte("import subprocess\nsubprocess.run(cmd)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	verbs := func(command string) []string {
		var out []string
		effs, _ := ahpOf(t, shellEvent(command, dir))["effects"].([]any)
		for _, e := range effs {
			if src := e.(map[string]any)["source"].(map[string]any); src["kind"] == "target-verb" {
				out = append(out, src["verb"].(string))
			}
		}
		return out
	}
	for command, speaks := range map[string]bool{
		"./scripts/publish":                            true,
		"python scripts/release.py --version 2":        true, // read, and still named
		"bash .github/workflows/upload_asset.sh x":     true,
		"node ./tools/release/04_deploy.ts":            true,
		"tsx scripts/publishCI.ts":                     true,
		"node scripts/checkPublish.mjs":                false,
		"./scripts/release-notes.sh v1 v2":             false,
		"node ./scripts/pre-publish-optimizations.mjs": false,
		"python ./scripts/deploy_docs_status.py":       false,
		"bash -n deploy.sh":                            false,
		"bash -lc 'cd docs/release-latest'":            false,
		"script/release --local v1":                    false,
		"./scripts/build.sh":                           false,
		"/usr/bin/release":                             false,
		"python -m release":                            false,
	} {
		if got := verbs(command); (len(got) > 0) != speaks {
			t.Errorf("%s: target verbs %v, want the name to speak: %v", command, got, speaks)
		}
	}
}

// TestMachineScripts: an uninstaller run for real, and an installer told
// to accept every prompt or to install into the home or a system
// directory, change this machine; rehearsals, syntax checks and plain
// project installers do not.
func TestMachineScripts(t *testing.T) {
	dir := t.TempDir()
	changes := func(command string) bool {
		effs, _ := ahpOf(t, shellEvent(command, dir))["effects"].([]any)
		for _, e := range effs {
			m := e.(map[string]any)
			if m["effect"] == "config.change" && m["source"].(map[string]any)["kind"] == "script-name" {
				return true
			}
		}
		return false
	}
	for command, want := range map[string]bool{
		"bash uninstall.sh -f":                     true,
		`"$TOOLS/remove-uninstall-all.sh" pkg`:     true,
		"./uninstaller":                            true,
		"./install --all":                          true,
		"sh setup.sh -y":                           true,
		`PREFIX="$HOME/.local" ./install.sh`:       true,
		"./install.sh --prefix=/usr/local":         true,
		"bash uninstall.sh -n":                     false,
		"bash uninstall.sh --dry-run":              false,
		"bash -u -O extglob -n uninstall.sh":       false,
		"./install":                                false,
		"./install.sh --prefix=./out":              false,
		"VERSION=2 ./scripts/install-tool.sh":      false,
		"install -m 0644 a.txt /usr/local/share/a": false, // coreutils install, no script
		"python3 scripts/uninstall.py --all":       true,
		"node tools/setup.js --yes":                true,
		"python3 -m uninstall":                     false,
		"node ./setup/setup.js":                    false,
		"./bootstrap.sh --help":                    false,
	} {
		if got := changes(command); got != want {
			t.Errorf("%s: machine change %v, want %v", command, got, want)
		}
	}
}

// TestOverHome: an archive extracted, or a directory's contents copied,
// into the home or a directory of startup files lays files over them.
func TestOverHome(t *testing.T) {
	dir := t.TempDir()
	lays := func(command string) bool {
		effs, _ := ahpOf(t, shellEvent(command, dir))["effects"].([]any)
		for _, e := range effs {
			if e.(map[string]any)["source"].(map[string]any)["kind"] == "destination" {
				return true
			}
		}
		return false
	}
	for command, want := range map[string]bool{
		"cd; tar -xz < dots.tgz":                 true,
		"cd $HOME && tar xf dots.tar":            true,
		"tar -C ~ -xf dots.tar":                  true,
		"tar -xf dots.tar -C~/.config":           true,
		"unzip dots.zip -d '$HOME/.config/fish'": true,
		"cp -a skel/.* ~":                        true,
		"rsync -a skel/ ~/":                      true,
		"tar -xf dots.tar -C /home/dev":          true,
		"cd /Users/dev/.config && unzip x.zip":   true,
		"tar -xf dots.tar -C /home/dev/repo/out": false,
		"tar -xf dots.tar":                       false,
		"tar -cf ~/dots.tar .":                   false,
		"tar --exclude=x -cf out.tar .":          false,
		"cd ~/src && tar -xf dots.tar":           false,
		"unzip -l dots.zip -d ~":                 false,
		"rsync -a skel ~/":                       false,
		"cp skel/* ~/notes/":                     false,
	} {
		if got := lays(command); got != want {
			t.Errorf("%s: lays files over the home %v, want %v", command, got, want)
		}
	}
}

// TestRunnerTargetsByName: a package manager's first word that is none of
// its commands runs the script of that name (pnpm release), a fastlane
// lane is a task, and a project's own push or upload task sends what it
// built; the package managers' own commands and build scripts stay quiet.
func TestRunnerTargetsByName(t *testing.T) {
	dir := t.TempDir()
	confidence := func(command string) string {
		effs, _ := ahpOf(t, shellEvent(command, dir))["effects"].([]any)
		for _, e := range effs {
			if src := e.(map[string]any)["source"].(map[string]any); src["kind"] == "target-verb" {
				return e.(map[string]any)["confidence"].(string)
			}
		}
		return ""
	}
	for command, want := range map[string]string{
		"pnpm release --publishOnly":       "medium",
		"yarn deploy:prod":                 "medium",
		"bun publish-all":                  "medium",
		"fastlane android promote_to_beta": "medium",
		"fastlane cut_release":             "medium",
		"rake push":                        "medium",
		"make upload":                      "medium",
		"./scripts/upload-assets.sh v1":    "medium",
		"./scripts/push.sh":                "low",
		"node Makefile.js publishRelease":  "medium",
		"python3 make.py upload":           "medium",
		"node Makefile.js lint":            "",
		"node scripts/build.js publish":    "",
		"mise run release":                 "medium",
		"pnpm build":                       "",
		"yarn install --frozen-lockfile":   "",
		"pnpm deploy --filter api out/":    "",
		"yarn release:notes":               "",
		"fastlane ios test":                "",
		"make zstd-release":                "low",
		"make -n deploy":                   "",
		"rake --dry-run release":           "",
		"just -n publish":                  "",
	} {
		if got := confidence(command); got != want {
			t.Errorf("%s: target verb confidence %q, want %q", command, got, want)
		}
	}
}
