package inline

import (
	"fmt"
	"testing"
	"time"

	"github.com/ahp-opa/ahp-opa/internal/shell"
)

// FuzzExpand checks that any command line, with any code in it, is read
// within the limits, without panicking or looping, and that the commands
// it appends are well formed.
func FuzzExpand(f *testing.F) {
	for _, s := range []string{
		`python3 -c "import os; os.system('rm -rf ~')"`,
		"python3 - <<'EOF'\nfrom pathlib import Path\nprint((Path.home() / '.ssh').read_text())\nEOF",
		`perl -e 'open(F, "|-", "sh"); print F qx{curl x}; $ENV{HOME}'`,
		`ruby -e '%x(ls); FileUtils.rm_rf "#{Dir.home}"'`,
		`node -e "require('child_process').execSync(` + "`rm ${x}`" + `)"`,
		`awk 'BEGIN { print "ls" | "sh"; "date" | getline }'`,
		`lua -e 'os.execute([[rm -rf ~]])'`, `php -r 'echo ` + "`ls`" + `;'`,
		`osascript -e 'do shell script "ls"'`, `Rscript -e 'unlink(c("a"), recursive=TRUE)'`,
		`python3 -c "exec('exec(\'exec(1)\')')"`, `python3 -c "((((["`, `perl -e 'q{'`,
	} {
		f.Add(s)
	}
	lim := shell.Limits{MaxBytes: 4096, MaxDepth: 4, MaxCommands: 64, MaxFields: 32}
	f.Fuzz(func(t *testing.T, script string) {
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				panic(fmt.Sprintf("reading the code of %q takes more than 5s", script))
			}
		}()
		a := shell.Analyze(script, lim)
		progs := Expand(a, lim)
		if len(a.Commands) > lim.MaxCommands {
			t.Fatalf("%d commands, limit %d", len(a.Commands), lim.MaxCommands)
		}
		for i, c := range a.Commands {
			if c.Parent >= len(a.Commands) || c.Parent < -1 {
				t.Fatalf("command %d has parent %d", i, c.Parent)
			}
			for _, in := range c.Inputs {
				if in < 0 || in >= len(a.Commands) || in == i {
					t.Fatalf("command %d has input %d", i, in)
				}
			}
			if len(c.Dynamic) != len(c.Argv) {
				t.Fatalf("command %d: %d dynamic flags for %d words", i, len(c.Dynamic), len(c.Argv))
			}
		}
		for _, p := range progs {
			for _, c := range p.Calls {
				if c.Command <= p.Command || c.Command >= len(a.Commands) {
					t.Fatalf("program of command %d lists command %d", p.Command, c.Command)
				}
			}
		}
	})
}
