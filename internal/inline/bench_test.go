package inline

import (
	"strings"
	"testing"

	"github.com/ahp-opa/ahp-opa/internal/shell"
)

// BenchmarkExpand measures reading inline code: a one-liner, a here-doc
// program of about 100 lines, and a hostile program of 100 KB that nests
// unclosed calls (the bound on argument spans keeps it linear).
func BenchmarkExpand(b *testing.B) {
	heredoc := "python3 - <<'EOF'\n" + strings.Repeat("import os, shutil, subprocess\nx = os.path.join(os.path.expanduser('~'), 'proj', 'build')\nsubprocess.run(['make', '-C', x], check=True)\nprint(open('pyproject.toml').read())\n", 25) + "EOF"
	hostile := "python3 - <<'EOF'\n" + strings.Repeat("os.system(open(", 6000) + "\nEOF"
	for _, bc := range []struct{ name, script string }{
		{"one-liner", `python3 -c "import os; os.system('rm -rf ~')"`},
		{"heredoc", heredoc},
		{"hostile", hostile},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				a := shell.Analyze(bc.script, shell.DefaultLimits)
				Expand(a, shell.DefaultLimits)
			}
		})
	}
}
