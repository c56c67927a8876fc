package shell

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzAnalyze checks that any input is analysed within the limits, without
// panicking or looping.
func FuzzAnalyze(f *testing.F) {
	for _, s := range []string{
		"rm -rf /", "bash -c 'sh -c \"ls\"'", "echo $(a $(b <(c)))", "{a,b}{1..3}",
		"X=1; eval \"$X\"", "cat <<EOF\n$(x)\nEOF", "find . -exec sh -c 'rm {}' \\;",
		"echo 'x' | sh", "$'\\x41\\u00e9'", "sudo -u", "env -S", "a | b | c | d",
		"trap", "alias a=", "cd ~/x && cat y", "((", "${a:-$(b)}",
		"pwsh -c 'iex (iwr u); gci env:'", "docker run -v /a:/b i cat /b/c", "kubectl exec p -- sh -c x",
	} {
		f.Add(s)
	}
	lim := Limits{MaxBytes: 4096, MaxDepth: 4, MaxCommands: 64, MaxFields: 32}
	f.Fuzz(func(t *testing.T, script string) {
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				panic(fmt.Sprintf("analysis of %q takes more than 5s", script))
			}
		}()
		a := Analyze(script, lim)
		if len(a.Commands) > lim.MaxCommands {
			t.Fatalf("%d commands, limit %d", len(a.Commands), lim.MaxCommands)
		}
		for i, c := range a.Commands {
			if c.Depth > lim.MaxDepth+1 {
				t.Fatalf("command %d at depth %d", i, c.Depth)
			}
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
		if utf8.ValidString(script) {
			AnalyzeArgv(strings.Fields(script), lim)
		}
	})
}
